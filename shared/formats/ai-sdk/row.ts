/**
 * An `ai-sdk` session's append: an AI SDK provider-level prompt message (V2, V3 or V4, its file
 * data encoded by ./encoding.ts) validated (./message.ts) and turned into its row (./facts.ts), the
 * whole message object kept as the client wrote it. Pure.
 */
import { jsonValueProblem, type ToolUseIdAt } from '../../contract/content-checks.ts';
import { InvalidInputError } from '../../contract/errors.ts';
import { storableText } from '../../contract/unicode.ts';
import type { MessageRow, RowOptions } from '../format.ts';
import { aiSdkFacts, isClientCall } from './facts.ts';
import {
  type AiSdkMessage,
  type AiSdkPart,
  aiSdkMessageProblem,
  nonJsonObjectProblem,
  partsOf,
} from './message.ts';

/**
 * Validates a stored AI SDK message and derives its row.
 * @param message the message as the client wrote it, its file data encoded; stored as is (this
 *   object, not a parsed copy), but for a `pinned` beside its fields, which is an option, not part
 *   of it.
 * @param where the message's field, for errors (`messages[3]`).
 * @throws {InvalidInputError} naming the field: a value JSON cannot carry (a `Uint8Array` or `URL`
 *   not encoded), nesting past the limit, a NUL or unpaired surrogate, or a message the AI SDK's
 *   types do not allow (./message.ts).
 */
export function aiSdkRow(message: unknown, where: string, options: RowOptions = {}): MessageRow {
  if (typeof message === 'object' && message !== null && 'pinned' in message && !options.wrapped) {
    const { pinned, ...rest } = message as { pinned?: unknown };
    return aiSdkRow(rest, where, { ...options, wrapped: true, pinned: pinned === true });
  }
  // Before anything reads the message: what JSON cannot carry, then the value rules every format keeps.
  const problem =
    nonJsonObjectProblem(message, where) ??
    jsonValueProblem(message, where, 3) ??
    aiSdkMessageProblem(message, where);
  if (problem) throw new InvalidInputError(`${problem.field}: ${problem.message}`);
  const m = message as AiSdkMessage;
  const facts = aiSdkFacts(m, options.pdfPages);
  return {
    role: facts.role,
    kind: facts.kind,
    content: storableText(facts.text),
    contentBlocks: m,
    toolCallId: facts.toolResultIds[0] ?? facts.toolUseIds[0] ?? null,
    toolName: facts.toolName,
    toolUseIds: facts.toolUseIds,
    toolResultIds: facts.toolResultIds,
    hasThinking: facts.thinking,
    tokenCount: options.tokenCount ?? facts.tokenCount,
    pinned: options.pinned ?? false,
    createdAt: options.createdAt ?? null,
    // Each client call where it stands, so a repeated id is named at its second place.
    toolUseIdsAt: m.role === 'assistant' ? callsAt(partsOf(m), where) : [],
  };
}

/** The id of each client call of a message's parts, with its field (`<where>.content[2].toolCallId`). */
function callsAt(parts: readonly AiSdkPart[], where: string): ToolUseIdAt[] {
  return parts.flatMap((part, j) =>
    isClientCall(part) ? [{ id: String(part.toolCallId), field: `${where}.content[${j}].toolCallId` }] : [],
  );
}
