/**
 * Message shapes the pure code works on. `MessageMeta` is what planning needs (no content, so a
 * 100,000-message session plans in little memory); `Message` adds the text for summarizing.
 */
import type { MediaRef } from './media-refs.ts';

/** Message roles, as agent frameworks and the corpus name them. */
export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool'] as const;
/** Message kinds; `summary` is written only by compactor. */
export const MESSAGE_KINDS = ['message', 'tool_call', 'tool_result', 'summary'] as const;

export type Role = (typeof MESSAGE_ROLES)[number];
export type Kind = (typeof MESSAGE_KINDS)[number];

/**
 * A message without its text. `tokenCount` is in estimated tokens. A stored message is one
 * Anthropic message (or one corpus-format row): it may open several tool calls and answer several.
 */
export interface MessageMeta {
  seq: number;
  role: Role;
  kind: Kind;
  /** The first tool id it opens or answers (the corpus format's one id per row). */
  toolCallId: string | null;
  toolName: string | null;
  /** Ids of the `tool_use` blocks it holds, in order. */
  toolUseIds: string[];
  /** `tool_use_id`s of the `tool_result` blocks it holds, in order. */
  toolResultIds: string[];
  /** Whether it holds `thinking` or `redacted_thinking` blocks. */
  thinking: boolean;
  tokenCount: number;
  pinned: boolean;
}

/** A message with its text. */
export interface Message extends MessageMeta {
  content: string;
  /**
   * The images and documents of the stored message this comes from (shared/contract/media-refs.ts),
   * on the first message read for its seq; absent when it holds none or the reader did not look.
   */
  media?: MediaRef[] | undefined;
}

/**
 * The tool ids of a corpus-format row, which opens (`tool_call`) or answers (`tool_result`) at
 * most one call, named by its `toolCallId`.
 */
export function legacyToolIds(
  kind: Kind,
  toolCallId: string | null,
): Pick<MessageMeta, 'toolUseIds' | 'toolResultIds' | 'thinking'> {
  return {
    toolUseIds: kind === 'tool_call' && toolCallId !== null ? [toolCallId] : [],
    toolResultIds: kind === 'tool_result' && toolCallId !== null ? [toolCallId] : [],
    thinking: false,
  };
}
