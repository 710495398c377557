/**
 * The client's side of the `openai-chat` session format: a Chat Completions message validated
 * (shared/formats/openai-chat/message.ts) and turned into its row, the whole message object kept as
 * the agent wrote it; and the checks that keep one session in one format.
 */
import { jsonValueProblem, type ToolUseIdAt } from '../shared/contract/content-checks.ts';
import { InvalidInputError, printable } from '../shared/contract/errors.ts';
import type { SessionFormat } from '../shared/contract/session-format.ts';
import { storableText } from '../shared/contract/unicode.ts';
import { type ChatMessage, chatFacts, chatMessageProblem } from '../shared/formats/openai-chat/message.ts';
import { responsesMarker } from '../shared/formats/openai-responses/item.ts';
import type { MessageRow, RowOptions } from './message-row.ts';

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

/** A row this format derives: its `toolUseIdsAt` always set. */
export type ChatRow = MessageRow & { toolUseIdsAt: ToolUseIdAt[] };

/**
 * Validates a Chat Completions message and derives its row.
 * @param message the message as the agent wrote it; stored as is (this object, not a parsed copy).
 * @param where the message's field, for errors (`messages[3]`).
 * @param sessionId named in the error when the message is in another format.
 * @throws {InvalidInputError} naming the field: not a valid Chat Completions message (the rules of
 *   shared/formats/openai-chat/message.ts), or one in the Anthropic or Responses format.
 */
export function chatRow(
  message: unknown,
  where: string,
  sessionId: string,
  options: RowOptions = {},
): ChatRow {
  const foreign = anthropicMarker(message, where) ?? responsesMarker(message, where);
  if (foreign) throw formatMismatch(foreign, sessionId, 'openai-chat');
  // Options given beside the message (`pinned`) are not part of it.
  if (typeof message === 'object' && message !== null && 'pinned' in message && !options.wrapped) {
    const { pinned, ...rest } = message as { pinned?: unknown };
    return chatRow(rest, where, sessionId, { ...options, wrapped: true, pinned: pinned === true });
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

/** Anthropic content block types a Chat Completions message never holds. */
const ANTHROPIC_BLOCKS = new Set([
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'image',
  'document',
  'server_tool_use',
  'search_result',
]);

/** The field that shows a message is in the Anthropic format (an Anthropic content block), or null. */
function anthropicMarker(message: unknown, where: string): string | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const content = (message as { content?: unknown }).content;
  if (!Array.isArray(content)) return null;
  const j = content.findIndex(
    (b) =>
      typeof b === 'object' && b !== null && ANTHROPIC_BLOCKS.has(String((b as { type?: unknown }).type)),
  );
  if (j < 0) return null;
  const type = String((content[j] as { type: unknown }).type);
  return `${where}.content[${j}].type: "${type}" is an Anthropic Messages API content block`;
}

/**
 * The error for a message in the other format: what shows it, and the session's format.
 * @param marker `<field>: <why>` ({@link chatMarker}).
 */
export function formatMismatch(marker: string, sessionId: string, format: SessionFormat): InvalidInputError {
  const expected = {
    anthropic: 'Anthropic Messages API MessageParams',
    'openai-chat': 'OpenAI Chat Completions messages',
    'openai-responses': 'OpenAI Responses API input items',
  }[format];
  return new InvalidInputError(
    `${marker}, but session "${printable(sessionId)}" has format "${format}" (its messages are ${expected}); ` +
      'one session holds one format: create another session for the other',
  );
}
