/**
 * The `openai-responses` session format (format.ts): a row holds one Responses API input item,
 * appended as row.ts checks it, rendered as context.ts says, imported from a log of requests or a
 * session's items (transcript.ts); clearing as clearing.ts says. Pure.
 */
import { MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import { clearOneResult, type FormatVocabulary, type SessionFormat } from '../format.ts';
import { responsesApiItemSchema, responsesContextSchema } from './api-schema.ts';
import {
  clearedReasoning,
  clearedResponsesInput,
  clearedResponsesOutput,
  responsesOutputStartsWith,
  responsesRewriteOf,
  responsesToolNames,
} from './clearing.ts';
import { renderResponsesContext } from './context.ts';
import {
  isOutputItem,
  isTypedResponsesItem,
  RESPONSES_ITEM_TYPES,
  RESPONSES_ROLES,
  responsesFacts,
} from './item.ts';
import { responsesImages, responsesMedia } from './media.ts';
import { responsesRow } from './row.ts';
import { parseResponsesLog } from './transcript.ts';

/** Content part types only a Responses message has. */
const OWN_PART_TYPES = new Set(['input_text', 'output_text', 'input_image', 'input_file']);

/** A Responses input item's words: every item type's, and a message's. */
const VOCABULARY: FormatVocabulary = {
  messages: 'OpenAI Responses API input items',
  itemTypes: new Set([...RESPONSES_ITEM_TYPES, 'item_reference']),
  roles: new Set(RESPONSES_ROLES),
  fields: new Set([
    'type',
    'role',
    'content',
    'id',
    'status',
    'call_id',
    'name',
    'arguments',
    'output',
    'summary',
    'encrypted_content',
  ]),
  partTypes: new Set([...OWN_PART_TYPES, 'refusal']),
  nullContent: true,
  openItemTypes: true,
  names: {
    item: 'an OpenAI Responses input item',
    role: 'an OpenAI Responses role',
    field: 'an OpenAI Responses field',
    part: 'an OpenAI Responses content part',
    nullContent: "an OpenAI Responses item's (a reasoning item's)",
  },
};

/** Item types a log of Responses items may begin with (a `message` is Responses' only over its parts). */
const FIRST_LINE_TYPES = new Set(['function_call', 'function_call_output', 'reasoning', 'compaction']);

/** Whether a transcript's first line is a Responses request (`input`) or an item only Responses has. */
function isResponsesLine(value: Record<string, unknown>): boolean {
  if ('input' in value) return true;
  if (typeof value.type === 'string' && FIRST_LINE_TYPES.has(value.type)) return true;
  const content = value.content;
  return (
    Array.isArray(content) &&
    content.some((p) => OWN_PART_TYPES.has(String((p as { type?: unknown } | null)?.type)))
  );
}

/**
 * Whether a JSON array could be a session's Responses items (the Agents SDK's): objects with a
 * `type`, or messages (`role` and `content`) without the corpus format's `kind`.
 */
function isItemArray(value: readonly unknown[]): boolean {
  return value.every((item: unknown) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
    const fields = item as Record<string, unknown>;
    return (
      typeof fields.type === 'string' || ('role' in fields && 'content' in fields && !('kind' in fields))
    );
  });
}

/** The `openai-responses` format, for the registry. */
export const openaiResponsesFormat: SessionFormat = {
  name: 'openai-responses',
  vocabulary: VOCABULARY,
  apiSchemas: { message: responsesApiItemSchema, context: responsesContextSchema },
  rowOf: responsesRow,
  renderContext: (input) => ({ format: 'openai-responses', ...renderResponsesContext(input) }),
  summaryTokens: (input) => renderResponsesContext(input).tokens,
  transcripts: {
    'openai-responses': {
      detects: (first) => (isResponsesLine(first) ? 'yes' : 'no'),
      looksLike: 'a Responses request (input) or item (type)',
      detectsArray: isItemArray,
      parse: (text, file) => parseResponsesLog(text, file).map((message) => ({ message, createdAt: null })),
    },
  },
  toolNames: responsesToolNames,
  clearToolResults(content, clearing) {
    // A call output answers one call (its `call_id`).
    const output = isTypedResponsesItem(content) && isOutputItem(content) ? content : null;
    return clearOneResult(
      clearing,
      output && {
        callId: String(output.call_id),
        cleared: (prefix) => responsesOutputStartsWith(output, prefix),
        tokens: () => responsesFacts(output).tokenCount - MESSAGE_OVERHEAD_TOKENS,
        replaced: (placeholder) => clearedResponsesOutput(output, placeholder),
      },
    );
  },
  clearToolInputs(content, ids) {
    const cleared = clearedResponsesInput(content, ids);
    return cleared === null ? null : { content: cleared, cleared: [String(cleared.call_id)] };
  },
  clearThinking(content) {
    const cleared = clearedReasoning(content);
    return cleared === null ? null : { content: cleared, dropped: 1 };
  },
  mediaOf: responsesMedia,
  imagesOf: responsesImages,
  rewriteOf(meta, content) {
    if (!isTypedResponsesItem(content))
      throw new Error(`openai-responses: seq ${meta.seq} holds no Responses item`);
    return responsesRewriteOf(meta, content);
  },
};
