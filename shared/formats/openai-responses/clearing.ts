/**
 * What the clearing strategies do to Responses items, each a new object with every other field kept:
 * - `clearToolResults`: a call output's `output` becomes the placeholder (its `call_id` stays, so
 *   the pair stays valid: the API requires each call's output, not its text); with
 *   `clearToolInputs` a cleared `function_call`'s `arguments` becomes `"{}"` (a `custom_tool_call`'s
 *   `input`, `""`).
 * - `clearThinking`: a `reasoning` item loses its `encrypted_content`, `content` and summary text
 *   (`summary: []`, the field being required). The row stays (a restore puts the item back), and
 *   the context leaves such an item out: under `store: false` the API refuses a reasoning item
 *   without its encrypted content, and the reasoning guide
 *   (https://developers.openai.com/api/docs/guides/reasoning) lets reasoning from earlier turns go.
 * Pure.
 */
import type { MessageMeta } from '../../contract/message.ts';
import type { Rewrite } from '../../planning/types.ts';
import {
  isCallItem,
  isOutputItem,
  isTypedResponsesItem,
  itemType,
  type ResponsesItem,
  responsesFacts,
} from './item.ts';

/** The output item with its `output` replaced by `placeholder`; null when it is not a call's output. */
export function clearedResponsesOutput(item: unknown, placeholder: string): ResponsesItem | null {
  if (!isTypedResponsesItem(item) || !isOutputItem(item) || !('output' in item)) return null;
  return { ...item, output: placeholder };
}

/** Whether an output item's `output` begins with `prefix` (cleared already). */
export function responsesOutputStartsWith(item: ResponsesItem, prefix: string): boolean {
  return typeof item.output === 'string' && item.output.startsWith(prefix);
}

/** The call item with its input emptied when its `call_id` is in `ids`; null when nothing changed. */
export function clearedResponsesInput(item: unknown, ids: ReadonlySet<string>): ResponsesItem | null {
  if (!isTypedResponsesItem(item) || !isCallItem(item) || !ids.has(String(item.call_id))) return null;
  const type = itemType(item);
  if (type === 'function_call' && item.arguments !== '{}' && item.arguments !== '') {
    return { ...item, arguments: '{}' };
  }
  if (type === 'custom_tool_call' && item.input !== '') return { ...item, input: '' };
  return null;
}

/** `[call_id, tool name]` of a call item; empty for any other value. */
export function responsesToolNames(item: unknown): Array<[string, string]> {
  if (!isTypedResponsesItem(item) || !isCallItem(item)) return [];
  return [[String(item.call_id), typeof item.name === 'string' ? item.name : itemType(item)]];
}

/** The reasoning item with what it carries cleared (see the file comment); null when not reasoning or cleared already. */
export function clearedReasoning(item: unknown): ResponsesItem | null {
  if (!isTypedResponsesItem(item) || item.type !== 'reasoning') return null;
  const { encrypted_content: blob, content, ...rest } = item;
  const summary = Array.isArray(item.summary) ? item.summary : [];
  if ((blob === undefined || blob === null) && content === undefined && summary.length === 0) return null;
  return { ...rest, summary: [] };
}

/**
 * The rewrite of `meta` into the Responses item `item` (its rendering, token estimate and
 * reasoning flag recomputed; a cleared reasoning item counts as none).
 */
export function responsesRewriteOf(meta: MessageMeta, item: ResponsesItem): Rewrite {
  const facts = responsesFacts(item);
  const cleared = item.type === 'reasoning' && !('encrypted_content' in item) && !('content' in item);
  return {
    seq: meta.seq,
    content: item,
    text: facts.text,
    tokenCount: facts.tokenCount,
    tokensBefore: meta.tokenCount,
    thinking: facts.thinking && !cleared,
  };
}
