/**
 * An `openai-responses` session's append: a Responses API input item validated (./item.ts) and
 * turned into its row, one item per row, the whole item object kept as the agent wrote it. Pure.
 */
import { jsonValueProblem } from '../../contract/content-checks.ts';
import { InvalidInputError } from '../../contract/errors.ts';
import { storableText } from '../../contract/unicode.ts';
import type { MessageRow, RowOptions } from '../format.ts';
import { type ResponsesItem, responsesFacts, responsesItemProblem } from './item.ts';

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

/**
 * Validates a Responses input item and derives its row.
 * @param item the item as the agent wrote it; stored as is (this object, not a parsed copy), but
 *   for a `pinned` beside its fields, which is an option, not part of it.
 * @param where the item's field, for errors (`messages[3]`).
 * @throws {InvalidInputError} naming the field: not a valid Responses input item (the rules of
 *   ./item.ts).
 */
export function responsesRow(item: unknown, where: string, options: RowOptions = {}): MessageRow {
  if (typeof item === 'object' && item !== null && 'pinned' in item && !options.wrapped) {
    const { pinned, ...rest } = item as { pinned?: unknown };
    return responsesRow(rest, where, { ...options, wrapped: true, pinned: pinned === true });
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
