/**
 * OpenAI Responses API input items as compactor stores them: the whole item object, kept exactly
 * as the agent wrote it (every field, in order; a `reasoning` item's `encrypted_content` and a
 * `compaction` item's blob untouched), validated at append by {@link responsesItemProblem}, and
 * the facts the rest of compactor reads off it (kind, tool pair ids, whether it is reasoning, a
 * plain-text rendering for summaries, search and token estimates). Pure: no I/O.
 *
 * The shapes come from the `openai` SDK's request types, `ResponseInputItem` (openai-node 7.57.0
 * `resources/responses/responses.d.ts`; openai-python `src/openai/types/responses/
 * response_input_item_param.py`, `easy_input_message_param.py`, `response_reasoning_item_param.py`,
 * `response_function_tool_call_param.py`, `response_compaction_item_param_param.py`):
 * - `message` (its `type` may be left out): role `user`, `system`, `developer` (content a string or
 *   `input_text`/`input_image`/`input_file` parts) or `assistant` (a string, or `output_text`/
 *   `refusal` parts); an assistant message may carry `phase`, which the SDK says to preserve.
 * - `function_call` `{call_id, name, arguments}` (`arguments` a JSON *string*) answered by a
 *   `function_call_output` `{call_id, output}` (`output` a string or a list of parts); paired by
 *   `call_id`, not `id`. `custom_tool_call`/`custom_tool_call_output`, `computer_call`/
 *   `computer_call_output`, `shell_call`/`shell_call_output` and `apply_patch_call`/
 *   `apply_patch_call_output` pair the same way.
 * - `reasoning` `{id?, summary[] (required), content? (null taken as none), encrypted_content?}`:
 *   kept whole.
 * - `compaction` `{encrypted_content, id?}`: opaque ("not intended to be human-interpretable",
 *   OpenAI's compaction guide, https://developers.openai.com/api/docs/guides/compaction).
 * - the hosted tools' items (`web_search_call`, `file_search_call`, `code_interpreter_call`,
 *   `image_generation_call`, `mcp_*`, `local_shell_call*`, `tool_search_*`, …) are kept as given,
 *   checked only for an object with a known `type`.
 * `item_reference` and `compaction_trigger` are refused: the one points at an item stored by OpenAI
 * (a stateless replay cannot resolve it), the other is a one-shot command ("Must be the final input
 * item"), not history.
 */
import { z } from 'zod';
import { estimateTextTokens, MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';

/** Roles a Responses `message` item may have. */
export const RESPONSES_ROLES = ['user', 'system', 'developer', 'assistant'] as const;

/** Call item types and the output item type that answers each (paired by `call_id`). */
export const CALL_OUTPUT_TYPES: Readonly<Record<string, string>> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  computer_call: 'computer_call_output',
  shell_call: 'shell_call_output',
  apply_patch_call: 'apply_patch_call_output',
};
const OUTPUT_TYPES = new Set(Object.values(CALL_OUTPUT_TYPES));

/** Item types kept as given (hosted tools' calls and results the model or the agent produced). */
const OPAQUE_TYPES = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'local_shell_call',
  'local_shell_call_output',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'mcp_call',
  'tool_search_call',
  'tool_search_output',
  'additional_tools',
  'program',
  'program_output',
]);

/** Every `type` compactor stores in an `openai-responses` session. */
export const RESPONSES_ITEM_TYPES = [
  'message',
  'reasoning',
  'compaction',
  ...Object.keys(CALL_OUTPUT_TYPES),
  ...OUTPUT_TYPES,
  ...OPAQUE_TYPES,
] as const;
const ITEM_TYPES = new Set<string>(RESPONSES_ITEM_TYPES);

/** Estimated tokens of an image part (as for Chat Completions: a 1024×1024 image, tile-based models). */
export const RESPONSES_IMAGE_TOKENS = 765;

const inputText = z.looseObject({ type: z.literal('input_text'), text: z.string() });
const inputImage = z
  .looseObject({
    type: z.literal('input_image'),
    detail: z.enum(['low', 'high', 'auto', 'original']).optional(),
    image_url: z.string().min(1).nullable().optional(),
    file_id: z.string().min(1).nullable().optional(),
  })
  .refine((p) => typeof p.image_url === 'string' || typeof p.file_id === 'string', {
    error: 'an input_image needs image_url (a URL or data URL) or file_id',
  });
const inputFile = z.looseObject({
  type: z.literal('input_file'),
  file_id: z.string().nullable().optional(),
  file_url: z.string().optional(),
  file_data: z.string().optional(),
  filename: z.string().optional(),
});
const outputText = z.looseObject({ type: z.literal('output_text'), text: z.string() });
const refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const inputPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile]);
const outputPart = z.discriminatedUnion('type', [outputText, refusal]);

const inputMessage = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'system', 'developer']),
  content: z.union([z.string(), z.array(inputPart).min(1)]),
});
const assistantMessage = z.looseObject({
  type: z.literal('message').optional(),
  role: z.literal('assistant'),
  content: z.union([z.string(), z.array(outputPart).min(1)]),
  phase: z.enum(['commentary', 'final_answer']).nullable().optional(),
});

const callId = z.string({ error: 'expected the call_id string that pairs a call with its output' }).min(1);
const args = z.string({ error: "expected a string (the call's arguments as JSON text, not an object)" });
const outputParts = z.array(z.looseObject({ type: z.enum(['input_text', 'input_image', 'input_file']) }));

const functionCall = z.looseObject({
  type: z.literal('function_call'),
  call_id: callId,
  name: z.string().min(1),
  arguments: args,
});
const functionCallOutput = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: callId,
  output: z.union([z.string(), outputParts]),
});
const customToolCall = z.looseObject({
  type: z.literal('custom_tool_call'),
  call_id: callId,
  name: z.string().min(1),
  input: z.string(),
});
const customToolCallOutput = z.looseObject({
  type: z.literal('custom_tool_call_output'),
  call_id: callId,
  output: z.union([z.string(), outputParts]),
});
const otherCall = (type: string) => z.looseObject({ type: z.literal(type), call_id: callId });
const reasoning = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().min(1).optional(),
  summary: z.array(z.looseObject({ type: z.literal('summary_text'), text: z.string() }), {
    error: 'expected a list of summary_text parts (required, may be empty)',
  }),
  encrypted_content: z.string().nullable().optional(),
  // The SDK types `content` as optional; OpenAI's Codex CLI replays its reasoning items with
  // `content: null`, which the API takes as none.
  content: z
    .array(z.looseObject({ type: z.string(), text: z.string() }))
    .nullable()
    .optional(),
});
const compaction = z.looseObject({
  type: z.literal('compaction'),
  encrypted_content: z.string({ error: 'expected the opaque string the API returned' }).min(1),
  id: z.string().min(1).optional(),
});

/** A Responses input item as the `openai` SDK types it (`ResponseInputItem`), every field kept. */
export type ResponsesItem = Record<string, unknown> & { type?: string; role?: string };

/** Which schema checks an item of a given `type`. */
function schemaOf(item: Record<string, unknown>): z.ZodType | null {
  const type = item.type ?? 'message';
  switch (type) {
    case 'message':
      return item.role === 'assistant' ? assistantMessage : inputMessage;
    case 'function_call':
      return functionCall;
    case 'function_call_output':
      return functionCallOutput;
    case 'custom_tool_call':
      return customToolCall;
    case 'custom_tool_call_output':
      return customToolCallOutput;
    case 'reasoning':
      return reasoning;
    case 'compaction':
      return compaction;
    default:
      return typeof type === 'string' && (type in CALL_OUTPUT_TYPES || OUTPUT_TYPES.has(type))
        ? otherCall(type)
        : null;
  }
}

/** A field that is wrong and why, as the append error names it. */
export interface ItemProblem {
  field: string;
  message: string;
}

/**
 * What is wrong with a value as a Responses input item, or null when it is one compactor stores.
 * @param where the item's field name, for the answer (`messages[2]`); fields are named below it
 *   (`messages[2].content[0].text`).
 */
export function responsesItemProblem(value: unknown, where: string): ItemProblem | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { field: where, message: 'expected a Responses input item object ({ type, ... })' };
  }
  const item = value as Record<string, unknown>;
  const type = item.type;
  if (type === 'item_reference' || type === 'compaction_trigger') {
    return {
      field: `${where}.type`,
      message:
        type === 'item_reference'
          ? '"item_reference" points at an item OpenAI stored; send the item itself (compactor replays input statelessly)'
          : '"compaction_trigger" is a command for one request ("Must be the final input item"), not history',
    };
  }
  if (type !== undefined && (typeof type !== 'string' || !ITEM_TYPES.has(type))) {
    return {
      field: `${where}.type`,
      message: `expected a Responses input item type (message, function_call, function_call_output, reasoning, compaction, …), got ${JSON.stringify(type)}`,
    };
  }
  if ((type ?? 'message') === 'message' && !(RESPONSES_ROLES as readonly unknown[]).includes(item.role)) {
    return {
      field: `${where}.role`,
      message: `expected one of ${RESPONSES_ROLES.map((r) => `"${r}"`).join(', ')}, got ${JSON.stringify(item.role) ?? 'nothing'}`,
    };
  }
  if (typeof type === 'string' && OPAQUE_TYPES.has(type)) return null;
  const schema = schemaOf(item);
  if (schema === null) return null;
  const parsed = schema.safeParse(value);
  if (parsed.success) return null;
  let issue: z.core.$ZodIssue | undefined = parsed.error.issues[0];
  let path: PropertyKey[] = [...(issue?.path ?? [])];
  // A failed union (string or parts) is followed into the option that got furthest.
  for (let depth = 0; issue?.code === 'invalid_union' && depth < 10; depth++) {
    const deepest = issue.errors.flat().sort((a, b) => b.path.length - a.path.length)[0];
    if (!deepest || deepest.path.length === 0) break;
    path = [...path, ...deepest.path];
    issue = deepest;
  }
  const named = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  return { field: `${where}${named}`, message: issue?.message ?? 'invalid' };
}

/** The item's `type`, with a typeless item read as the `message` it is. */
export function itemType(item: ResponsesItem): string {
  return typeof item.type === 'string' ? item.type : 'message';
}

/** Whether a stored value is a Responses item with a `type` no Chat Completions message has. */
export function isTypedResponsesItem(value: unknown): value is ResponsesItem {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const type = (value as { type?: unknown }).type;
  return typeof type === 'string' && ITEM_TYPES.has(type);
}

/** Whether an item is a call (opens a `call_id` an output answers). */
export function isCallItem(item: ResponsesItem): boolean {
  return itemType(item) in CALL_OUTPUT_TYPES;
}

/** Whether an item is a call's output (answers a `call_id`). */
export function isOutputItem(item: ResponsesItem): boolean {
  return OUTPUT_TYPES.has(itemType(item));
}

/** What compactor reads off a Responses item (the row's columns). */
export interface ResponsesFacts {
  /**
   * The `role` column: a message's role (`developer` as `system`); `assistant` for what the model
   * produced (calls, reasoning, hosted tools' items, a compaction item); `tool` for a call's output.
   */
  role: 'system' | 'user' | 'assistant' | 'tool';
  kind: 'message' | 'tool_call' | 'tool_result';
  toolUseIds: string[];
  toolResultIds: string[];
  toolName: string | null;
  /** A `reasoning` item. */
  thinking: boolean;
  text: string;
  tokenCount: number;
}

/** The facts of one (valid) Responses item. */
export function responsesFacts(item: ResponsesItem): ResponsesFacts {
  const type = itemType(item);
  const text = responsesText(item);
  const images = partsOf(item).filter((p) => p.type === 'input_image').length;
  const call = typeof item.call_id === 'string' ? item.call_id : null;
  const isCall = type in CALL_OUTPUT_TYPES && call !== null;
  const isOutput = OUTPUT_TYPES.has(type) && call !== null;
  const role =
    type === 'message'
      ? item.role === 'developer'
        ? 'system'
        : (item.role as ResponsesFacts['role'])
      : isOutput || type.endsWith('_output') || type === 'mcp_approval_response'
        ? 'tool'
        : 'assistant';
  // A compaction item's blob stands for the state it carries: counted as text of its length.
  const blob = type === 'compaction' ? String(item.encrypted_content ?? '').length : 0;
  return {
    role,
    kind: isCall ? 'tool_call' : isOutput ? 'tool_result' : 'message',
    toolUseIds: isCall ? [call] : [],
    toolResultIds: isOutput ? [call] : [],
    toolName: isCall ? (typeof item.name === 'string' ? item.name : type) : null,
    thinking: type === 'reasoning',
    text,
    tokenCount:
      estimateTextTokens(text) +
      Math.ceil(blob / 4) +
      images * RESPONSES_IMAGE_TOKENS +
      MESSAGE_OVERHEAD_TOKENS,
  };
}

type Part = Record<string, unknown> & { type?: unknown };

function partsOf(item: ResponsesItem): Part[] {
  const content = itemType(item) === 'message' ? item.content : item.output;
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  return Array.isArray(content) ? (content as Part[]) : [];
}

/**
 * The plain-text rendering of an item: message and output text as it is, a refusal as
 * `[refusal] …`, media as a marker (`[image: https://…]`, `[file: report.pdf]`, never base64), a
 * call as `{"name": …, "arguments": …}` (as compactor renders Anthropic `tool_use` blocks, so
 * summaries read every format alike), reasoning as its summary text under `[reasoning]`, a
 * compaction item as a marker (its content is opaque), another item as `[<type>]`.
 */
export function responsesText(item: ResponsesItem): string {
  const type = itemType(item);
  if (type === 'message' || OUTPUT_TYPES.has(type)) return partsOf(item).map(partText).join('\n');
  if (type === 'function_call' || type === 'custom_tool_call') {
    const body = type === 'function_call' ? item.arguments : item.input;
    return JSON.stringify({ name: item.name, arguments: parsedOrText(String(body ?? '')) });
  }
  if (type === 'reasoning') {
    const summary = Array.isArray(item.summary)
      ? (item.summary as Part[]).map((p) => String(p.text ?? '')).filter((t) => t !== '')
      : [];
    return summary.length === 0 ? '[reasoning]' : `[reasoning] ${summary.join('\n')}`;
  }
  if (type === 'compaction') return '[compaction: the earlier conversation, compacted by OpenAI (opaque)]';
  return `[${type}]`;
}

function partText(part: Part): string {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return String(part.text);
    case 'refusal':
      return `[refusal] ${String(part.refusal)}`;
    case 'input_image': {
      const url = typeof part.image_url === 'string' ? part.image_url : '';
      const data = /^data:([^;,]+)[;,]/.exec(url);
      if (data) return `[image: ${data[1]}, base64]`;
      return `[image: ${url === '' ? String(part.file_id ?? 'inline') : url.slice(0, 200)}]`;
    }
    case 'input_file':
      return `[file: ${String(part.filename ?? part.file_id ?? part.file_url ?? 'inline')}]`;
    default:
      return `[${String(part.type)}]`;
  }
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Item types only the Responses API has (a `message` item may leave `type` out, so it is not one). */
const RESPONSES_ONLY_TYPES = new Set(RESPONSES_ITEM_TYPES.filter((t) => t !== 'message'));
const RESPONSES_PART_TYPES = new Set(['input_text', 'output_text', 'input_image', 'input_file']);

/**
 * What shows a value is a Responses input item, as `<field>: <why>`, or null: a `type` only
 * Responses items have (`function_call`, `reasoning`, …), or a content part type only Responses
 * has (`input_text`, `output_text`, `input_image`, `input_file`). With `broad`, also `type:
 * "message"` over a string content or Responses parts only (an Anthropic `Message`, as the
 * Messages API returns it, is `type: "message"` too, over Anthropic blocks: it is not one).
 * @param where the item's field name, for the answer (`messages[2]`).
 */
export function responsesMarker(value: unknown, where: string, broad = false): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const item = value as Record<string, unknown>;
  if (typeof item.type === 'string' && RESPONSES_ONLY_TYPES.has(item.type)) {
    return `${where}.type: "${item.type}" is an OpenAI Responses input item`;
  }
  const partsOnly =
    typeof item.content === 'string' ||
    (Array.isArray(item.content) &&
      item.content.every((p) =>
        [...RESPONSES_PART_TYPES, 'refusal'].includes(String((p as { type?: unknown } | null)?.type)),
      ));
  if (broad && item.type === 'message' && partsOnly) {
    return `${where}.type: "message" is an OpenAI Responses input item`;
  }
  if (Array.isArray(item.content)) {
    const j = item.content.findIndex((p) =>
      RESPONSES_PART_TYPES.has(String((p as { type?: unknown } | null)?.type)),
    );
    if (j >= 0) {
      const part = String((item.content[j] as { type: unknown }).type);
      return `${where}.content[${j}].type: "${part}" is an OpenAI Responses content part`;
    }
  }
  return null;
}
