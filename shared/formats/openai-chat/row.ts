/**
 * An `openai-chat` session's append: a Chat Completions message validated (./message.ts) and turned
 * into its row, the whole message object kept as the agent wrote it. Pure.
 */
import { jsonValueProblem } from '../../contract/content-checks.ts';
import { InvalidInputError } from '../../contract/errors.ts';
import { storableText } from '../../contract/unicode.ts';
import type { MessageRow, RowOptions } from '../format.ts';
import { type ChatMessage, chatFacts, chatMessageProblem } from './message.ts';

/**
 * A Chat Completions request message as the `openai` SDK types it (`ChatCompletionMessageParam`):
 * `role` and whatever fields that role has (`content`, `name`, `tool_calls`, `tool_call_id`, …).
 * Stored exactly as given in an `openai-chat` session.
 */
export type ChatCompletionsMessage =
  | { role: 'system' | 'developer' | 'user'; content: unknown; name?: string }
  | {
      role: 'assistant';
      content?: unknown;
      refusal?: string | null;
      tool_calls?: readonly unknown[];
      name?: string;
    }
  | { role: 'tool'; content: unknown; tool_call_id: string };

/**
 * Validates a Chat Completions message and derives its row.
 * @param message the message as the agent wrote it; stored as is (this object, not a parsed copy),
 *   but for a `pinned` beside its fields, which is an option, not part of it.
 * @param where the message's field, for errors (`messages[3]`).
 * @throws {InvalidInputError} naming the field: not a valid Chat Completions message (the rules of
 *   ./message.ts).
 */
export function chatRow(message: unknown, where: string, options: RowOptions = {}): MessageRow {
  if (typeof message === 'object' && message !== null && 'pinned' in message && !options.wrapped) {
    const { pinned, ...rest } = message as { pinned?: unknown };
    return chatRow(rest, where, { ...options, wrapped: true, pinned: pinned === true });
  }
  const problem = chatMessageProblem(message, where) ?? jsonValueProblem(message, where, 3);
  if (problem) throw new InvalidInputError(`${problem.field}: ${problem.message}`);
  const m = message as ChatMessage;
  const facts = chatFacts(m);
  return {
    role: facts.role,
    kind: facts.kind,
    content: storableText(facts.text),
    contentBlocks: m,
    toolCallId: facts.toolResultIds[0] ?? facts.toolUseIds[0] ?? null,
    toolName: facts.toolName,
    toolUseIds: facts.toolUseIds,
    toolResultIds: facts.toolResultIds,
    hasThinking: false,
    tokenCount: options.tokenCount ?? facts.tokenCount,
    pinned: options.pinned ?? false,
    createdAt: options.createdAt ?? null,
    toolUseIdsAt: facts.toolUseIds.map((id, j) => ({ id, field: `${where}.tool_calls[${j}].id` })),
  };
}
