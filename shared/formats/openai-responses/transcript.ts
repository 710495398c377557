/**
 * Reads the two logs an agent on the Responses API leaves, into the items of one session. Pure: text
 * in, validated items or an error naming the line and field out.
 * - A JSONL of Responses requests, one per line (`{ "model": …, "input": [ … ], … }`), as an agent or
 *   proxy logs them. A stateless agent (`store: false`, or simply sending its whole history) sends
 *   every item with every request, so the last line's `input` is the session (a string `input` is
 *   the SDK's shorthand for one user message, stored as `{ role: "user", content }`). A request
 *   chained with `previous_response_id` sends only the items after that response, the earlier ones
 *   being kept by OpenAI, not in the log: such a log is refused, naming the line (OpenAI's
 *   conversation-state guide, https://platform.openai.com/docs/guides/conversation-state: with
 *   `previous_response_id` the history lives on OpenAI's side).
 * - A session's items as the OpenAI Agents SDK for Python returns them (`Session.get_items()`,
 *   openai-agents-python: `TResponseInputItem`, the Responses input items themselves), as a JSON
 *   array or one item per line. The JavaScript SDK's `Session.getItems()` (`@openai/agents` 0.20.0)
 *   returns its own protocol items (`AgentInputItem`: `callId`, `function_call_result`,
 *   `providerData`), which it converts to Responses items on every request: those are refused,
 *   naming the field, since compactor stores what is sent to the API exactly as it is sent.
 */
import { printable, TranscriptError } from '../../contract/errors.ts';
import { type ResponsesItem, responsesItemProblem } from './item.ts';

/** Fields and types of the JavaScript Agents SDK's protocol items, never in a Responses item. */
const AGENTS_JS_MARKERS: ReadonlyArray<[string, (item: Record<string, unknown>) => boolean]> = [
  ['callId', (item) => 'callId' in item],
  ['providerData', (item) => 'providerData' in item],
  ['type', (item) => item.type === 'function_call_result' || item.type === 'hosted_tool_call'],
];

/**
 * Parses a Responses log (see the file comment) into the session's items.
 * @param source a name for error messages (the file path).
 * @throws {TranscriptError} naming the line (and `input[i].field`) of a line that is not JSON, a
 *   request chained with `previous_response_id`, an item of the JavaScript Agents SDK's own shape, an
 *   invalid item; or when there is no item.
 */
export function parseResponsesLog(text: string, source: string): ResponsesItem[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new TranscriptError(
        `${source}: not a JSON array of items (${printable((error as Error).message)})`,
      );
    }
    return checkedItems(value as unknown[], (j) => `${source}: [${j}]`);
  }
  const lines = text.split('\n').map((raw, i) => ({ raw, line: i + 1 }));
  const filled = lines.filter((l) => l.raw.trim() !== '');
  if (filled.length === 0) throw new TranscriptError(`${source}: no items`);
  const values = filled.map(({ raw, line }) => {
    try {
      return { value: JSON.parse(raw) as unknown, line };
    } catch (error) {
      throw new TranscriptError(`${source}:${line}: not JSON (${printable((error as Error).message)})`);
    }
  });
  const isRequest = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && 'input' in v;
  if (!isRequest(values[0]?.value)) {
    return checkedItems(
      values.map((v) => v.value),
      (j) => `${source}:${values[j]?.line}`,
    );
  }
  let last: { input: unknown[]; line: number } | null = null;
  for (const { value, line } of values) {
    const request = value as Record<string, unknown>;
    if (!isRequest(value)) {
      throw new TranscriptError(
        `${source}:${line}: input: expected a Responses request ({ model, input: [...] })`,
      );
    }
    if (typeof request.previous_response_id === 'string' && request.previous_response_id !== '') {
      throw new TranscriptError(
        `${source}:${line}: previous_response_id: this request sends only the items after response ` +
          `"${printable(request.previous_response_id)}" (OpenAI keeps the earlier ones), so the log does not hold the ` +
          'session; import a log of requests that send their whole input, or the Agents SDK session items',
      );
    }
    const input = request.input;
    if (typeof input === 'string') last = { input: [{ role: 'user', content: input }], line };
    else if (Array.isArray(input)) last = { input, line };
    else throw new TranscriptError(`${source}:${line}: input: expected a list of input items or a string`);
  }
  const found = last as { input: unknown[]; line: number };
  if (found.input.length === 0) throw new TranscriptError(`${source}:${found.line}: input: no items`);
  return checkedItems(found.input, (j) => `${source}:${found.line}: input[${j}]`);
}

/**
 * The items, each checked.
 * @param at where item `j` is, for errors (`file:3` or `file:3: input[2]`).
 */
function checkedItems(items: unknown[], at: (j: number) => string): ResponsesItem[] {
  if (items.length === 0) throw new TranscriptError(`${at(0)}: no items`);
  items.forEach((item, j) => {
    const where = at(j);
    if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
      const js = AGENTS_JS_MARKERS.find(([, has]) => has(item as Record<string, unknown>));
      if (js) {
        throw new TranscriptError(
          `${where}: ${js[0]}: an item of the OpenAI Agents SDK for JavaScript (AgentInputItem), not a ` +
            'Responses input item; log the items the SDK sends to the Responses API instead',
        );
      }
    }
    const problem = responsesItemProblem(item, 'item');
    if (problem) {
      const field = problem.field.replace(/^item\.?/, '');
      throw new TranscriptError(`${where}${field === '' ? '' : `: ${field}`}: ${problem.message}`);
    }
  });
  return items as ResponsesItem[];
}
