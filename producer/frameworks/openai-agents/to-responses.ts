/**
 * The OpenAI Agents SDK's items (`AgentInputItem`, `@openai/agents` 0.20.0) as OpenAI Responses API
 * input items (from-responses.ts maps them back), and what that mapping keeps. Pure: no I/O.
 *
 * A compactor session of format `openai-responses` stores Responses input items (what the API takes
 * in `input`), which compactor's strategies, context rules, recall and restore understand. The SDK
 * keeps its own shape of the same items (`callId` for `call_id`, `function_call_result` for
 * `function_call_output`, a reasoning item's encrypted content under `providerData`, …) and turns
 * them into Responses items on every request (`getInputItems` of `@openai/agents-openai`). So:
 *
 * - {@link toResponsesItems} (an append) maps each SDK item to the Responses item the SDK sends for
 *   it, field for field by the SDK's own rules: ids, `status`, `phase`, a reasoning item's
 *   `encrypted_content`, annotations and every other `providerData` entry (spread into the item in
 *   snake_case, as the SDK spreads it) are kept exactly. A `message` keeps its `type`, which the SDK
 *   leaves out of user and system messages (the API takes it either way).
 * - `toAgentItems` (a read, from-responses.ts) maps the Responses items of compactor's context back, by the rules
 *   the SDK's Responses model reads a response's output with (`convertToOutputItem`): an item the
 *   SDK's Responses model produced comes back exactly as the SDK gave it.
 *
 * What the SDK holds but never sends, the decisions (each refused loudly when it cannot hold, never
 * dropped without a word; docs/guide/openai-agents.md lists them for users):
 * - a `function_call_result`'s `name` and `namespace`: the Responses API's `function_call_output`
 *   has no such fields (the SDK leaves them out of the request). They are its call's, so they are
 *   not stored but read from the call (`function_call` with the same `call_id`) when the item comes
 *   back; an append whose result names another tool than its call, or whose call is in neither the
 *   append nor the session's context, is refused;
 * - `providerData` entries that repeat a field of the item itself (`id`, `type`, `call_id`, …):
 *   the SDK drops them from every request, as the item's own field is sent; they are not stored,
 *   and come back as the SDK's Responses model writes them;
 * - the SDK's placeholder id `FAKE_ID` on an assistant message or a function call (a model that
 *   gives no ids): the SDK never sends it; not stored;
 * - a `compaction` item's `created_by`: an output-only field the API refuses in `input` (the SDK
 *   strips it); not stored;
 * - a tool output given as `{ type: 'text', text }` is the string the SDK sends, and comes back as
 *   `{ type: 'text', text }` (the SDK's own form of a tool's text); an input image without `detail`
 *   is sent (and stored) with `detail: "auto"`, as the SDK sends it; `providerData` keys come back
 *   in snake_case; a reasoning item's `rawContent` is the Responses item's `content` and comes back
 *   as `providerData.content`, where the SDK's Responses model puts it.
 *
 * Refused (an `InvalidInputError` naming the item and field, nothing written): a field the SDK's
 * item types do not have, item types the Responses API cannot be sent by the SDK's Responses model
 * or that this module does not map (`hosted_tool_call`, `computer_call`, `shell_call`,
 * `apply_patch_call`, `tool_search_call`, `program` and their outputs), audio content, and a
 * `providerData` entry the SDK would drop without sending (on a text part of a tool output, a
 * compaction item).
 */
import type { AgentInputItem } from '@openai/agents';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import type { ResponsesItem } from '../../../shared/formats/openai-responses/item.ts';
import { field, isObj, type Obj } from './objects.ts';

/** The SDK's placeholder id for an item a model gave no id (`@openai/agents-openai` `FAKE_ID`). */
export const SDK_PLACEHOLDER_ID = 'FAKE_ID';

/** The item types {@link toResponsesItems} maps. */
export const MAPPED_TYPES = [
  'message',
  'function_call',
  'function_call_result',
  'reasoning',
  'compaction',
  'unknown',
] as const;

/** A function call's tool, which its result names (a `function_call_result` stores neither). */
export interface CallTool {
  name: string;
  namespace?: string | undefined;
}
function refuse(field: string, why: string): never {
  throw new InvalidInputError(`${field}: ${why}; nothing was written`);
}

/** Refuses a key of `value` (with a defined value) that is not in `known`. */
function onlyKeys(value: Obj, known: readonly string[], where: string, what: string): void {
  for (const [key, entry] of Object.entries(value)) {
    if (entry === undefined || known.includes(key)) continue;
    refuse(
      `${where}.${key}`,
      `${what} has no field "${key}" in the Agents SDK's item types, and the compactor session stores only what it can give back`,
    );
  }
}

/** The SDK's `camelOrSnakeToSnakeCase`: object keys to snake_case, recursively; arrays copied as they are. */
function snakeCased(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice();
  if (!isObj(value)) return value;
  const out: Obj = {};
  for (const [key, entry] of Object.entries(value)) {
    out[key.replace(/([A-Z])/g, '_$1').toLowerCase()] = snakeCased(entry);
  }
  return out;
}

/**
 * The SDK's `getSnakeCasedProviderDataWithoutReservedKeys`: what of `providerData` the SDK spreads
 * into the request item (snake_cased keys, without the item's own fields).
 * @throws {InvalidInputError} when `providerData` is not an object.
 */
function extras(providerData: unknown, reserved: readonly string[], where: string): Obj {
  if (providerData === undefined || providerData === null) return {};
  if (!isObj(providerData)) refuse(`${where}.providerData`, 'expected an object');
  const out: Obj = {};
  for (const [key, entry] of Object.entries(snakeCased(providerData) as Obj)) {
    if (entry === undefined || reserved.includes(key)) continue;
    out[key] = entry;
  }
  return out;
}

/** The SDK's `toOpenAIToolCaller`. */
function callerOut(caller: unknown, where: string): Obj {
  if (caller === undefined) return {};
  if (!isObj(caller)) refuse(`${where}.caller`, 'expected an object');
  if (caller.type === 'direct') return { caller: { type: 'direct' } };
  if (caller.type === 'program' && typeof caller.callerId === 'string')
    return { caller: { type: 'program', caller_id: caller.callerId } };
  return refuse(`${where}.caller`, 'expected { type: "direct" } or { type: "program", callerId }');
}

/** An id the SDK sends: its placeholder is not one. */
const sentId = (id: unknown): Obj => (id === SDK_PLACEHOLDER_ID ? {} : field('id', id));

/**
 * The Responses input items the SDK sends for `items`, in order (one each), checked to lose nothing.
 * @param items what the SDK hands `Session.addItems`.
 * @param calls the tools of calls already in the session's context, by `call_id` (a result's call
 *   may be there rather than in `items`).
 * @throws {InvalidInputError} naming `items[i]` and the field, when an item cannot be stored whole
 *   (see the module comment).
 */
export function toResponsesItems(
  items: readonly AgentInputItem[],
  calls: ReadonlyMap<string, CallTool> = new Map(),
): ResponsesItem[] {
  const known = new Map(calls);
  for (const item of items) {
    const x = item as unknown as Obj;
    if (
      isObj(x) &&
      x.type === 'function_call' &&
      typeof x.callId === 'string' &&
      typeof x.name === 'string'
    ) {
      known.set(x.callId, {
        name: x.name,
        namespace: typeof x.namespace === 'string' ? x.namespace : undefined,
      });
    }
  }
  return items.map((item, i) => toResponsesItem(item, `items[${i}]`, known));
}

/**
 * The `call_id`s of the results in `items` whose call is not in `items` (the session's context must
 * hold them).
 */
export function resultsWithoutCall(items: readonly AgentInputItem[]): string[] {
  const calls = new Set<string>();
  const results: string[] = [];
  for (const item of items as unknown as Obj[]) {
    if (!isObj(item) || typeof item.callId !== 'string') continue;
    if (item.type === 'function_call') calls.add(item.callId);
    else if (item.type === 'function_call_result') results.push(item.callId);
  }
  return results.filter((id) => !calls.has(id));
}

/** One SDK item as its Responses input item; see {@link toResponsesItems}. */
export function toResponsesItem(
  item: AgentInputItem,
  where: string,
  calls: ReadonlyMap<string, CallTool>,
): ResponsesItem {
  const x = item as unknown;
  if (!isObj(x)) return refuse(where, 'expected an Agents SDK item object');
  const type = x.type ?? (typeof x.role === 'string' ? 'message' : undefined);
  switch (type) {
    case 'message':
      return message(x, where);
    case 'function_call':
      return functionCall(x, where);
    case 'function_call_result':
      return functionCallResult(x, where, calls);
    case 'reasoning':
      return reasoning(x, where);
    case 'compaction':
      return compaction(x, where);
    case 'unknown': {
      onlyKeys(x, ['type', 'id', 'providerData'], where, 'an unknown item');
      // The SDK's rule: the provider's item as it came, with the SDK's id (none when it has none).
      const { id: _id, ...provided } = snakeCased(x.providerData ?? {}) as Obj;
      return { ...provided, ...field('id', x.id) };
    }
    default:
      return refuse(
        `${where}.type`,
        `the compactor session stores ${MAPPED_TYPES.map((t) => `"${t}"`).join(', ')} items, not ${JSON.stringify(type)} (hosted, computer, shell, apply_patch, tool search and program tools' items are not mapped)`,
      );
  }
}

function message(x: Obj, where: string): ResponsesItem {
  const typed = field('type', x.type);
  if (x.role === 'assistant') {
    onlyKeys(
      x,
      ['type', 'id', 'role', 'content', 'status', 'phase', 'providerData'],
      where,
      'an assistant message',
    );
    if (!Array.isArray(x.content)) return refuse(`${where}.content`, 'expected a list of output parts');
    const pd = isObj(x.providerData) ? x.providerData : {};
    const phase = x.phase ?? pd.phase;
    if (phase !== undefined && phase !== 'commentary' && phase !== 'final_answer') {
      refuse(`${where}.phase`, `expected "commentary" or "final_answer", got ${JSON.stringify(phase)}`);
    }
    return {
      type: 'message',
      ...sentId(x.id),
      role: 'assistant',
      content: x.content.map((p, j) => outputPart(p, `${where}.content[${j}]`)),
      ...field('status', x.status),
      ...field('phase', phase),
      ...extras(x.providerData, ['type', 'id', 'role', 'content', 'status', 'phase'], where),
    };
  }
  if (x.role !== 'user' && x.role !== 'system') {
    return refuse(`${where}.role`, `expected "user", "system" or "assistant", got ${JSON.stringify(x.role)}`);
  }
  onlyKeys(x, ['type', 'id', 'role', 'content', 'providerData'], where, `a ${x.role} message`);
  let content: unknown;
  if (typeof x.content === 'string') content = x.content;
  else if (x.role === 'user' && Array.isArray(x.content))
    content = x.content.map((p, j) => inputPart(p, `${where}.content[${j}]`));
  else
    return refuse(
      `${where}.content`,
      x.role === 'user' ? 'expected a string or a list of input parts' : 'expected a string',
    );
  return {
    ...typed,
    ...field('id', x.id),
    role: x.role,
    content,
    ...extras(x.providerData, ['type', 'id', 'role', 'content', 'phase'], where),
  };
}

/** A user message's part, as the SDK's `getInputMessageContent` sends it. */
function inputPart(part: unknown, where: string): Obj {
  if (!isObj(part)) return refuse(where, 'expected a content part object');
  const cache = field('prompt_cache_breakpoint', part.promptCacheBreakpoint);
  switch (part.type) {
    case 'input_text':
      onlyKeys(part, ['type', 'text', 'promptCacheBreakpoint', 'providerData'], where, 'an input_text part');
      return {
        type: 'input_text',
        text: part.text,
        ...cache,
        ...extras(part.providerData, ['type', 'text'], where),
      };
    case 'input_image': {
      onlyKeys(
        part,
        ['type', 'image', 'imageUrl', 'fileId', 'detail', 'promptCacheBreakpoint', 'providerData'],
        where,
        'an input_image part',
      );
      return {
        type: 'input_image',
        detail: part.detail ?? 'auto',
        ...imageSource(part, where),
        ...cache,
        ...extras(part.providerData, ['type', 'detail', 'image_url', 'file_id'], where),
      };
    }
    case 'input_file':
      onlyKeys(
        part,
        [
          'type',
          'file',
          'fileData',
          'fileUrl',
          'fileId',
          'filename',
          'promptCacheBreakpoint',
          'providerData',
        ],
        where,
        'an input_file part',
      );
      return {
        type: 'input_file',
        ...fileSource(part, where, true),
        ...field('filename', part.filename || undefined),
        ...cache,
        ...extras(part.providerData, ['type', 'file_data', 'file_url', 'file_id', 'filename'], where),
      };
    default:
      return refuse(
        `${where}.type`,
        `expected input_text, input_image or input_file (the Responses API takes no ${JSON.stringify(part.type)} part from the SDK)`,
      );
  }
}

/** An image part's `image_url` or `file_id`, from the SDK's `image` (or its legacy fields). */
function imageSource(part: Obj, where: string): Obj {
  const image = part.image ?? part.imageUrl;
  if (typeof image === 'string') return { image_url: image };
  if (isObj(image) && typeof image.id === 'string') return { file_id: image.id };
  if (typeof part.fileId === 'string') return { file_id: part.fileId };
  return refuse(`${where}.image`, 'expected an image URL (or data URL) or { id } of an uploaded file');
}

/**
 * A file part's `file_data`, `file_url` or `file_id`, by the SDK's rules for its `file`: a data URL
 * or base64 is data, an https URL (any URL in a tool output) a URL, `{ id }` a file, `{ url }` a URL.
 */
function fileSource(part: Obj, where: string, message: boolean): Obj {
  const file = part.file;
  if (typeof file === 'string') {
    const value = file.trim();
    if (value.startsWith('data:')) return { file_data: value };
    if (value.startsWith('https://') || (!message && value.startsWith('http://'))) return { file_url: value };
    if (/^[A-Za-z0-9+/=]+$/.test(value)) return { file_data: value };
    if (!message) return { file_url: value };
    return refuse(
      `${where}.file`,
      'expected a data URL, base64 data, an https URL, or { id } of an uploaded file',
    );
  }
  if (isObj(file) && typeof file.id === 'string') return { file_id: file.id };
  if (isObj(file) && typeof file.url === 'string') return { file_url: file.url };
  if (typeof part.fileData === 'string') return { file_data: part.fileData };
  if (typeof part.fileUrl === 'string') return { file_url: part.fileUrl };
  if (typeof part.fileId === 'string') return { file_id: part.fileId };
  return refuse(`${where}.file`, 'expected the file (data, a URL or { id })');
}

/** An assistant message's part, as the SDK's `getOutputMessageContent` sends it. */
function outputPart(part: unknown, where: string): Obj {
  if (!isObj(part)) return refuse(where, 'expected a content part object');
  if (part.type === 'output_text') {
    onlyKeys(part, ['type', 'text', 'providerData'], where, 'an output_text part');
    const annotations = isObj(part.providerData) ? part.providerData.annotations : undefined;
    if (annotations !== undefined && !Array.isArray(annotations)) {
      refuse(`${where}.providerData.annotations`, 'expected a list (the SDK sends a list)');
    }
    return {
      type: 'output_text',
      text: part.text,
      annotations: annotations ?? [],
      ...extras(part.providerData, ['type', 'text', 'annotations'], where),
    };
  }
  if (part.type === 'refusal') {
    onlyKeys(part, ['type', 'refusal', 'providerData'], where, 'a refusal part');
    return {
      type: 'refusal',
      refusal: part.refusal,
      ...extras(part.providerData, ['type', 'refusal'], where),
    };
  }
  return refuse(
    `${where}.type`,
    `expected output_text or refusal (the Responses API takes no ${JSON.stringify(part.type)} part of an assistant message from the SDK)`,
  );
}

function functionCall(x: Obj, where: string): ResponsesItem {
  onlyKeys(
    x,
    ['type', 'id', 'callId', 'name', 'namespace', 'status', 'arguments', 'caller', 'providerData'],
    where,
    'a function_call',
  );
  return {
    ...sentId(x.id),
    type: 'function_call',
    name: x.name,
    call_id: x.callId,
    arguments: x.arguments,
    ...field('status', x.status),
    ...callerOut(x.caller, where),
    ...(typeof x.namespace === 'string' ? { namespace: x.namespace } : {}),
    ...extras(
      x.providerData,
      ['id', 'type', 'name', 'call_id', 'arguments', 'status', 'namespace', 'caller'],
      where,
    ),
  };
}

function functionCallResult(x: Obj, where: string, calls: ReadonlyMap<string, CallTool>): ResponsesItem {
  onlyKeys(
    x,
    ['type', 'id', 'name', 'namespace', 'callId', 'status', 'output', 'caller', 'providerData'],
    where,
    'a function_call_result',
  );
  const call = typeof x.callId === 'string' ? calls.get(x.callId) : undefined;
  if (!call) {
    return refuse(
      `${where}.callId`,
      `no function_call with call_id ${JSON.stringify(x.callId)} in these items or the session's context (the Responses API refuses an output without its call, and the result's name is its call's)`,
    );
  }
  if (x.name !== call.name) {
    refuse(
      `${where}.name`,
      `${JSON.stringify(x.name)} is not the name of its call (${JSON.stringify(call.name)}); the Responses API keeps no name on an output, so the compactor session gives back the call's`,
    );
  }
  const namespace = typeof x.namespace === 'string' ? x.namespace : undefined;
  if (namespace !== call.namespace) {
    refuse(
      `${where}.namespace`,
      `${JSON.stringify(namespace)} is not the namespace of its call (${JSON.stringify(call.namespace)})`,
    );
  }
  return {
    type: 'function_call_output',
    ...field('id', x.id),
    call_id: x.callId,
    output: toolOutput(x.output, `${where}.output`),
    ...field('status', x.status),
    ...callerOut(x.caller, where),
    ...extras(x.providerData, ['type', 'id', 'call_id', 'output', 'status', 'namespace', 'caller'], where),
  };
}

/** A tool's output as the SDK's `normalizeFunctionCallOutputForRequest` sends it. */
function toolOutput(output: unknown, where: string): unknown {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p, j) => toolOutputPart(p, `${where}[${j}]`));
  if (isObj(output) && output.type === 'text' && typeof output.text === 'string') {
    onlyKeys(output, ['type', 'text', 'providerData'], where, 'a text output');
    noProviderData(output, where);
    return output.text;
  }
  return refuse(
    where,
    'expected a string, { type: "text", text } or a list of input_text, input_image and input_file parts',
  );
}

/** A part of a tool's output list, as the SDK's `convertStructuredOutputToRequestItem` sends it. */
function toolOutputPart(part: unknown, where: string): Obj {
  if (!isObj(part)) return refuse(where, 'expected an output part object');
  switch (part.type) {
    case 'input_text':
      onlyKeys(part, ['type', 'text', 'providerData'], where, 'an input_text part');
      noProviderData(part, where);
      return { type: 'input_text', text: part.text };
    case 'input_image':
      onlyKeys(
        part,
        ['type', 'image', 'imageUrl', 'fileId', 'detail', 'providerData'],
        where,
        'an input_image part',
      );
      noProviderData(part, where);
      return {
        type: 'input_image',
        ...imageSource(part, where),
        ...field('detail', part.detail || undefined),
      };
    case 'input_file':
      onlyKeys(part, ['type', 'file', 'filename', 'providerData'], where, 'an input_file part');
      noProviderData(part, where);
      return {
        type: 'input_file',
        ...fileSource(part, where, false),
        ...field('filename', part.filename || undefined),
      };
    default:
      return refuse(`${where}.type`, 'expected input_text, input_image or input_file');
  }
}

/** Refuses a `providerData` with entries where the SDK sends none of it. */
function noProviderData(value: Obj, where: string): void {
  if (isObj(value.providerData) && Object.keys(value.providerData).length > 0) {
    refuse(`${where}.providerData`, 'the SDK sends nothing of it here, so it could not come back');
  }
}

function reasoning(x: Obj, where: string): ResponsesItem {
  onlyKeys(x, ['type', 'id', 'content', 'rawContent', 'providerData'], where, 'a reasoning item');
  if (!Array.isArray(x.content)) return refuse(`${where}.content`, 'expected a list of input_text parts');
  const pd = isObj(x.providerData) ? x.providerData : {};
  const encrypted = pd.encryptedContent ?? pd.encrypted_content;
  const more = extras(x.providerData, ['id', 'type', 'summary', 'encrypted_content'], where);
  const summary = x.content.map((part, j) => {
    const at = `${where}.content[${j}]`;
    if (!isObj(part)) return refuse(at, 'expected an input_text part');
    onlyKeys(part, ['type', 'text', 'providerData'], at, 'a reasoning summary part');
    return { type: 'summary_text', text: part.text, ...extras(part.providerData, ['type', 'text'], at) };
  });
  let raw: Obj = {};
  if (Array.isArray(x.rawContent) && x.rawContent.length > 0) {
    if ('content' in more)
      refuse(`${where}.rawContent`, 'given beside providerData.content, which says the same');
    raw = {
      content: x.rawContent.map((part, j) => {
        const at = `${where}.rawContent[${j}]`;
        if (!isObj(part)) return refuse(at, 'expected a reasoning_text part');
        onlyKeys(part, ['type', 'text', 'providerData'], at, 'a reasoning_text part');
        return {
          type: 'reasoning_text',
          text: part.text,
          ...extras(part.providerData, ['type', 'text'], at),
        };
      }),
    };
  }
  return {
    ...field('id', x.id),
    type: 'reasoning',
    summary,
    ...(typeof encrypted === 'string' ? { encrypted_content: encrypted } : {}),
    ...more,
    ...raw,
  };
}

function compaction(x: Obj, where: string): ResponsesItem {
  onlyKeys(
    x,
    ['type', 'id', 'encrypted_content', 'encryptedContent', 'created_by', 'providerData'],
    where,
    'a compaction item',
  );
  const pd = extras(x.providerData, ['type', 'id', 'encrypted_content', 'created_by'], where);
  if (Object.keys(pd).length > 0) {
    refuse(
      `${where}.providerData.${Object.keys(pd)[0]}`,
      'the SDK sends nothing of a compaction item but its id and encrypted_content',
    );
  }
  return {
    type: 'compaction',
    ...field('id', x.id),
    encrypted_content: x.encrypted_content ?? x.encryptedContent,
  };
}

/**
 * The Responses item the SDK would send for an item, for comparisons (the runner's
 * `prepareHistoryItemsForPersistenceComparison`): as {@link toResponsesItem}, a result's call taken
 * on trust; an item that cannot be mapped is compared as it is.
 */
export function comparable(item: AgentInputItem): AgentInputItem {
  const x = item as unknown as Obj;
  try {
    const trusted =
      isObj(x) && x.type === 'function_call_result' && typeof x.callId === 'string'
        ? new Map([
            [
              x.callId,
              { name: String(x.name), namespace: typeof x.namespace === 'string' ? x.namespace : undefined },
            ],
          ])
        : new Map<string, CallTool>();
    return toResponsesItem(item, 'item', trusted) as unknown as AgentInputItem;
  } catch {
    return item;
  }
}
