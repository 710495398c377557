/**
 * Message shapes the pure code works on. `MessageMeta` is what planning needs (no content, so a
 * 100,000-message session plans in little memory); `Message` adds the text for summarizing.
 */

/** Message roles, as agent frameworks and the corpus name them. */
export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool'] as const;
/** Message kinds; `summary` is written only by compactor. */
export const MESSAGE_KINDS = ['message', 'tool_call', 'tool_result', 'summary'] as const;

export type Role = (typeof MESSAGE_ROLES)[number];
export type Kind = (typeof MESSAGE_KINDS)[number];

/** A message without its text. `tokenCount` is in estimated tokens. */
export interface MessageMeta {
  seq: number;
  role: Role;
  kind: Kind;
  toolCallId: string | null;
  toolName: string | null;
  tokenCount: number;
  pinned: boolean;
}

/** A message with its text. */
export interface Message extends MessageMeta {
  content: string;
}
