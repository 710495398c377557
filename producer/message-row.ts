/**
 * A message's row as an append derives it, in every session format: everything stored but the seq,
 * and where its `tool_use` ids are in the request (for the error naming a reused one). The format
 * modules (producer/sessions.ts for Anthropic and corpus messages, ./chat-messages.ts,
 * ./responses-items.ts) each derive it from a message of their format.
 */
import type { StoredContent } from '../shared/contract/blocks.ts';
import type { ToolUseIdAt } from '../shared/contract/content-checks.ts';
import type { Kind, Role } from '../shared/contract/message.ts';

/** A message's row, everything but the seq. `tokenCount` in estimated tokens. */
export interface MessageRow {
  role: Role;
  kind: Exclude<Kind, 'summary'>;
  /** The plain-text rendering (shared/contract/blocks.ts): for summaries, search, tokens. */
  content: string;
  /** The message as the agent wrote it. */
  contentBlocks: StoredContent;
  toolCallId: string | null;
  toolName: string | null;
  toolUseIds: string[];
  toolResultIds: string[];
  hasThinking: boolean;
  tokenCount: number;
  pinned: boolean;
  createdAt: Date | null;
  contextVersion?: number | null;
  /** Where each `tool_use` id of a native message is in the request (not stored). */
  toolUseIdsAt?: ToolUseIdAt[];
}

/** Options given beside a native message (`{ message, pinned, createdAt, tokenCount }`). */
export interface RowOptions {
  /** The message was given inside `{ message, … }`. */
  wrapped?: boolean;
  pinned?: boolean;
  createdAt?: Date | null;
  tokenCount?: number;
}
