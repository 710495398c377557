/**
 * "Context out" for an `openai-responses` session: its live history as the `input` of the next
 * `client.responses.create({ model, input, store: false })` request. Pure: no I/O; every stored item
 * it keeps is the stored object itself (but for an `id` left out where its reasoning is gone, below).
 *
 * The rules, from the Responses API (OpenAI's guides named below; the API's 400s as quoted in agent
 * frameworks' bug reports, OpenAI publishing no list of its error messages):
 * - "No tool output found for function call call_…": every call item (`function_call`,
 *   `custom_tool_call`, …) is answered by its output (paired by `call_id`) later in the input. A call
 *   left unanswered where the session moved on gets a synthetic output ({@link NO_RESULT}) after its
 *   run of calls; the calls of the newest run, with nothing but calls, outputs and reasoning after
 *   them, are left open (the agent is running them and adds the outputs to the request).
 * - "No tool call found for function call output with call_id call_…": an output whose call is not
 *   before it becomes a user message saying what it was.
 * - Reasoning items: the function-calling guide (https://developers.openai.com/api/docs/guides/
 *   function-calling) says reasoning items returned with tool calls "must also be passed back", and
 *   the reasoning guide (https://developers.openai.com/api/docs/guides/reasoning) that reasoning not
 *   relevant to the turn "is ignored", so keeping them is safe and dropping old ones allowed. A
 *   reasoning item is sent only where the API takes it back: directly followed by the item it
 *   produced (an assistant message, a call, a hosted tool's item; else "Item 'rs_…' of type
 *   'reasoning' was provided without its required following item"), and carrying its
 *   `encrypted_content` (under `store: false` an item without it is refused: "Items are not
 *   persisted when `store` is set to false"). When a reasoning item is left out, the item it
 *   produced goes without its `id` ("Item 'fc_…' of type 'function_call' was provided without its
 *   required 'reasoning' item"; the OpenAI Agents SDK's compaction session strips those ids too).
 * - A `compaction` item (OpenAI's compaction guide, https://developers.openai.com/api/docs/guides/
 *   compaction: "you can drop items that came before the most recent compaction item"): the items
 *   before the newest one are not sent, but for the leading system/developer messages (instructions
 *   the model still needs) and the user messages directly before it (`/responses/compact` returns
 *   "all user messages, followed by a single compaction item", openai-python
 *   `compacted_response.py`, and the guide says to pass that output on as-is); they stay stored,
 *   for a restore and for compactor's own strategies.
 * - The summary of what compactor compacted is a `user` message ({@link summaryRowText}, the body
 *   framed in `<session-record>`), where the archived items were, as for Chat Completions sessions
 *   (shared/formats/openai-chat/context.ts): OpenAI's Codex CLI rebuilds a compacted history with
 *   the summary as a user message (codex-rs `core/src/compact.rs`), and a user turn never gains the
 *   rank system/developer text has. A summary the `openai-compaction` summarizer wrote is OpenAI's
 *   own `compaction` item instead, sent as stored. System text a compaction archived is restated as `developer`
 *   messages (what OpenAI's models from o1 on take in place of `system`) after the leading ones.
 */
import type { ContextNotice, ContextRow, RenderContextInput } from '../../context/render.ts';
import { NO_RESULT, summaryFirst, summaryRowText } from '../../context/render.ts';
import { asAnthropicContent, renderText } from '../../contract/blocks.ts';
import {
  isCallItem,
  isOutputItem,
  isTypedResponsesItem,
  itemType,
  pairId,
  type ResponsesItem,
  responsesFacts,
  responsesText,
} from './item.ts';

/** The next request's `input` for `client.responses.create`, with its estimated size. */
export interface RenderedResponsesContext {
  input: ResponsesItem[];
  /** Estimated input tokens of `input`. */
  tokens: number;
  notices: ContextNotice[];
}

/** Renders an `openai-responses` session's live history (see the file comment for the rules). */
export function renderResponsesContext(
  input: Pick<RenderContextInput, 'rows' | 'checkpoint' | 'archivedSystem'>,
): RenderedResponsesContext {
  const { rows } = input;
  let lead = 0;
  while (lead < rows.length && isInstruction(rows[lead]?.content)) lead++;
  const leading = rows.slice(0, lead).flatMap((r) => (isInstruction(r.content) ? [r.content] : []));
  const restated = (input.archivedSystem ?? [])
    .filter((t) => t.trim() !== '')
    .map((content): ResponsesItem => ({ role: 'developer', content }));
  const body = sinceCompaction(rows.slice(lead));
  const items = summaryFirst(body).map((r) => itemOf(r, rows, input));
  const out = [...leading, ...restated, ...withReasoningInPlace(pairCalls(items))];
  const tokens = out.reduce((sum, item) => sum + responsesFacts(item).tokenCount, 0);
  return { input: out, tokens, notices: [] };
}

function isInstruction(content: unknown): content is ResponsesItem {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return false;
  const item = content as ResponsesItem;
  return itemType(item) === 'message' && (item.role === 'system' || item.role === 'developer');
}

/**
 * The rows from the newest stored `compaction` item on, with the user messages directly before it
 * (all of them when there is none): `/responses/compact` returns the user messages followed by the
 * compaction item, to be passed on "as-is".
 */
function sinceCompaction(rows: readonly ContextRow[]): ContextRow[] {
  let at = rows.findLastIndex(
    (r) => isTypedResponsesItem(r.content) && (r.content as ResponsesItem).type === 'compaction',
  );
  if (at < 0) return [...rows];
  while (at > 0 && isUserMessage(rows[at - 1]?.content)) at--;
  return rows.slice(at);
}

function isUserMessage(content: unknown): boolean {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return false;
  const item = content as ResponsesItem;
  return itemType(item) === 'message' && item.role === 'user';
}

function itemOf(
  row: ContextRow,
  all: readonly ContextRow[],
  input: Pick<RenderContextInput, 'checkpoint'>,
): ResponsesItem {
  if (row.kind === 'summary') {
    // An `openai-compaction` summary: OpenAI's compaction item, sent as stored in place of the text.
    const compaction = Array.isArray(row.content)
      ? (row.content as unknown[]).find((b) => isTypedResponsesItem(b) && b.type === 'compaction')
      : undefined;
    if (compaction) return compaction as ResponsesItem;
    return {
      type: 'message',
      role: 'user',
      content: summaryRowText(row, all, input.checkpoint),
    };
  }
  const content = row.content as unknown;
  if (typeof content === 'object' && content !== null && !Array.isArray(content)) {
    return content as ResponsesItem;
  }
  // Not written by a Responses agent (never expected): its text, as a message of its role.
  const role = row.role === 'assistant' ? 'assistant' : row.role === 'system' ? 'system' : 'user';
  return { type: 'message', role, content: renderText(asAnthropicContent(row.content)) };
}

/** Items a call's run is made of: calls, their outputs, reasoning. */
function inRun(item: ResponsesItem): boolean {
  return isCallItem(item) || isOutputItem(item) || itemType(item) === 'reasoning';
}

/**
 * Answers every call: a synthetic output after its run for a call the session moved on from, an
 * output with no call before it (or a second output of a call) as a user message; the calls of the
 * final run stay open.
 */
export function pairCalls(items: readonly ResponsesItem[]): ResponsesItem[] {
  const answered = new Set<string>();
  for (const item of items) if (isOutputItem(item)) answered.add(String(pairId(item)));
  const called = new Set<string>();
  const used = new Set<string>();
  const out: ResponsesItem[] = [];
  let pending: ResponsesItem[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ResponsesItem;
    const id = String(pairId(item));
    if (isCallItem(item)) {
      called.add(id);
      if (!answered.has(id)) pending.push(item);
      out.push(item);
    } else if (isOutputItem(item)) {
      if (called.has(id) && !used.has(id)) {
        used.add(id);
        out.push(item);
      } else out.push(orphan(item));
    } else out.push(item);
    const next = items[i + 1];
    // A run reaching the end of the input is the open one: its calls wait for the agent.
    if (pending.length > 0 && next !== undefined && !inRun(next)) {
      for (const call of pending) out.push(syntheticOutput(call));
      pending = [];
    }
  }
  return out;
}

/**
 * The output that answers a call nobody answered, in the shape the SDK gives that call's output
 * type: {@link NO_RESULT} as the output text (a shell call's as its stderr, exit code 1; an
 * apply_patch call's with `status: "failed"`; a client tool search's as no tools found). A
 * computer call's output is a screenshot, which cannot be made up: it is answered as a function
 * call would be.
 */
function syntheticOutput(call: ResponsesItem): ResponsesItem {
  const { call_id } = call;
  switch (itemType(call)) {
    case 'custom_tool_call':
      return { type: 'custom_tool_call_output', call_id, output: NO_RESULT };
    case 'local_shell_call':
      return { type: 'local_shell_call_output', id: call_id, output: NO_RESULT };
    case 'shell_call':
      return {
        type: 'shell_call_output',
        call_id,
        output: [{ stdout: '', stderr: NO_RESULT, outcome: { type: 'exit', exit_code: 1 } }],
      };
    case 'apply_patch_call':
      return { type: 'apply_patch_call_output', call_id, status: 'failed', output: NO_RESULT };
    case 'tool_search_call':
      return { type: 'tool_search_output', call_id, execution: 'client', status: 'completed', tools: [] };
    default:
      return { type: 'function_call_output', call_id, output: NO_RESULT };
  }
}

function orphan(item: ResponsesItem): ResponsesItem {
  const body = responsesText(item);
  return {
    type: 'message',
    role: 'user',
    content:
      `[A tool output whose call is not in this conversation (call_id ${String(pairId(item))})]` +
      (body.trim() === '' ? '' : `\n${body}`),
  };
}

/** Whether an item is one a reasoning item produces (what must directly follow it). */
function producedByModel(item: ResponsesItem | undefined): boolean {
  if (item === undefined) return false;
  const type = itemType(item);
  if (type === 'message') return item.role === 'assistant';
  return type !== 'reasoning' && type !== 'compaction' && !isOutputItem(item);
}

/**
 * Keeps a reasoning item only where the API takes it back (directly before the item it produced,
 * with its `encrypted_content`); the item after a reasoning item left out goes without its `id`.
 */
export function withReasoningInPlace(items: readonly ResponsesItem[]): ResponsesItem[] {
  const out: ResponsesItem[] = [];
  let dropped = false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ResponsesItem;
    if (itemType(item) === 'reasoning') {
      const blob = item.encrypted_content;
      const keep = typeof blob === 'string' && blob !== '' && producedByModel(items[i + 1]);
      if (keep) out.push(item);
      else dropped = true;
      continue;
    }
    if (dropped && producedByModel(item) && 'id' in item) {
      const { id: _id, ...rest } = item;
      out.push(rest);
    } else out.push(item);
    dropped = false;
  }
  return out;
}
