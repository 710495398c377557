/**
 * The client's side of the `openai-responses` session format: a Responses API input item validated
 * (shared/formats/openai-responses/item.ts) and turned into its row, one item per row, the whole
 * item object kept as the agent wrote it; and what shows an item belongs to another format.
 */
import { jsonValueProblem, type ToolUseIdAt } from '../shared/contract/content-checks.ts';
import { InvalidInputError } from '../shared/contract/errors.ts';
import { storableText } from '../shared/contract/unicode.ts';
import {
  type ResponsesItem,
  responsesFacts,
  responsesItemProblem,
} from '../shared/formats/openai-responses/item.ts';
import { formatMismatch } from './chat-messages.ts';
import type { MessageRow, RowOptions } from './message-row.ts';

/**
 * A Responses API input item as the `openai` SDK types it (`ResponseInputItem`, openai-node
 * 7.57.0): a `message` (`{ role, content }`, `type` optional), a `function_call`,
 * `function_call_output`, `reasoning`, `compaction` or another tool item. Stored exactly as given
 * in an `openai-responses` session.
 */
export type ResponsesInputItem =
  | ({ type?: string; role?: string } & Record<string, unknown>)
  // The SDK's own item interfaces (a response's `output` items), which have no index signature.
  | { readonly type: string };

/** A row this format derives: its `toolUseIdsAt` always set. */
export type ResponsesRow = MessageRow & { toolUseIdsAt: ToolUseIdAt[] };

/**
 * Validates a Responses input item and derives its row.
 * @param item the item as the agent wrote it; stored as is (this object, not a parsed copy).
 * @param where the item's field, for errors (`messages[3]`).
 * @param sessionId named in the error when the item is in another format.
 * @throws {InvalidInputError} naming the field: not a valid Responses input item (the rules of
 *   shared/formats/openai-responses/item.ts), or a message of the Anthropic or Chat Completions format.
 */
export function responsesRow(
  item: unknown,
  where: string,
  sessionId: string,
  options: RowOptions = {},
): ResponsesRow {
  const foreign = foreignMarker(item, where);
  if (foreign) throw formatMismatch(foreign, sessionId, 'openai-responses');
  // Options given beside the item (`pinned`) are not part of it.
  if (typeof item === 'object' && item !== null && 'pinned' in item && !options.wrapped) {
    const { pinned, ...rest } = item as { pinned?: unknown };
    return responsesRow(rest, where, sessionId, { ...options, wrapped: true, pinned: pinned === true });
  }
  const problem = responsesItemProblem(item, where) ?? jsonValueProblem(item, where, 3);
  if (problem) throw new InvalidInputError(`${problem.field}: ${problem.message}`);
  const valid = item as ResponsesItem;
  const facts = responsesFacts(valid);
  return {
    role: facts.role,
    kind: facts.kind,
    content: storableText(facts.text),
    contentBlocks: valid,
    toolCallId: facts.toolResultIds[0] ?? facts.toolUseIds[0] ?? null,
    toolName: facts.toolName,
    toolUseIds: facts.toolUseIds,
    toolResultIds: facts.toolResultIds,
    hasThinking: facts.thinking,
    tokenCount: options.tokenCount ?? facts.tokenCount,
    pinned: options.pinned ?? false,
    createdAt: options.createdAt ?? null,
    toolUseIdsAt: facts.toolUseIds.map((id) => ({ id, field: `${where}.call_id` })),
  };
}

/** Content part types of the Anthropic Messages API and of Chat Completions, never of Responses. */
const FOREIGN_PARTS: Readonly<Record<string, string>> = {
  tool_use: 'an Anthropic Messages API content block',
  tool_result: 'an Anthropic Messages API content block',
  thinking: 'an Anthropic Messages API content block',
  redacted_thinking: 'an Anthropic Messages API content block',
  image: 'an Anthropic Messages API content block',
  document: 'an Anthropic Messages API content block',
  text: 'an Anthropic or Chat Completions content part (Responses says input_text or output_text)',
  image_url: 'a Chat Completions content part (Responses says input_image)',
};

/** The field that shows an item is an Anthropic or Chat Completions message, or null. */
function foreignMarker(item: unknown, where: string): string | null {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
  const m = item as Record<string, unknown>;
  if (m.role === 'tool') return `${where}.role: "tool" is a Chat Completions role`;
  for (const field of ['tool_calls', 'tool_call_id']) {
    if (field in m) return `${where}.${field}: ${field} is a Chat Completions field`;
  }
  if (!Array.isArray(m.content)) return null;
  const j = m.content.findIndex((p) => String((p as { type?: unknown } | null)?.type) in FOREIGN_PARTS);
  if (j < 0) return null;
  const type = String((m.content[j] as { type: unknown }).type);
  return `${where}.content[${j}].type: "${type}" is ${FOREIGN_PARTS[type]}`;
}
