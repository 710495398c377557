/**
 * AI SDK provider-level prompt messages as compactor stores them, and what an append checks of one.
 * A message is what a language model's `doGenerate`/`doStream` takes in its `prompt`
 * (`LanguageModelV2Prompt` of `@ai-sdk/provider` 2.0.5, `LanguageModelV3Prompt` of 3.0.19,
 * `LanguageModelV4Prompt` of 4.0.38: `language-model/v*\/language-model-v*-prompt.d.ts`), in the
 * JSON form of ./encoding.ts, and a message of any of the three versions is taken:
 * - `{ role: 'system', content: string }`;
 * - `{ role: 'user', content: [text | file parts] }`;
 * - `{ role: 'assistant', content: [text | file | reasoning | tool-call | tool-result parts] }`, the
 *   tool results there being the provider's (a `providerExecuted` call's); V4 adds `custom`
 *   (`kind: '<provider>.<type>'`) and `reasoning-file` parts;
 * - `{ role: 'tool', content: [tool-result parts] }`; V3 and V4 add `tool-approval-response` parts.
 * Every message and part may carry `providerOptions` (`SharedV*ProviderOptions`: an object per
 * provider), where Anthropic's thinking signatures and redacted reasoning and OpenAI's encrypted
 * reasoning and item ids ride: stored and sent back as they are.
 *
 * The parts, as the types define them (fields beyond these are kept as given):
 * - `text` and `reasoning`: `text` (a string);
 * - `file`: `mediaType` (a string), `filename?`, `data`: in V2 and V3 base64 text, `{ $bytes }` (a
 *   `Uint8Array`) or `{ $url }` (a `URL`); in V4 a tagged union, `{ type: 'data', data }` (base64
 *   text or `{ $bytes }`), `{ type: 'url', url: { $url }, originalUrl? }`,
 *   `{ type: 'reference', reference: { <provider>: <id> } }`, `{ type: 'text', text }`;
 *   `reasoning-file`: `mediaType` and a V4 `data` of the first two kinds;
 * - `tool-call`: `toolCallId` and `toolName` (non-empty strings), `input` (a JSON value, required:
 *   JSON cannot carry `undefined`), `providerExecuted?` (a boolean);
 * - `tool-result`: `toolCallId`, `toolName`, `output`: `{ type: 'text' | 'error-text', value: string }`,
 *   `{ type: 'json' | 'error-json', value: <JSON> }`, `{ type: 'execution-denied', reason? }` (V3+)
 *   or `{ type: 'content', value: [...] }`, whose items are `text` and, by version, `media` (V2),
 *   `file-data`, `file-url`, `file-id`, `image-data`, `image-url`, `image-file-id` (V3), `file` (V4,
 *   its `data` as a file part's) and `custom` (V3+);
 * - `tool-approval-response`: `approvalId` (a non-empty string), `approved` (a boolean), `reason?`.
 * A `$bytes` must be canonical base64 and a `$url` a URL's `href` as `URL.href` writes it, so that
 * decoding and encoding again gives the stored bytes back. A `Uint8Array`, a `URL` or any other
 * object JSON cannot carry anywhere in a message is refused, naming its field (encode the message
 * first). Pure: no I/O, no recursion.
 */
import type { InputProblem } from '../../contract/content-checks.ts';
import { MAX_JSON_DEPTH } from '../../contract/content-checks.ts';
import { printable } from '../../contract/errors.ts';
import { isCanonicalBase64, isEncodedBytes, isEncodedUrl } from './encoding.ts';

/** The roles of an AI SDK prompt message. */
export const AI_SDK_ROLES = ['system', 'user', 'assistant', 'tool'] as const;
export type AiSdkRole = (typeof AI_SDK_ROLES)[number];

/** The part types each role's content may hold, over the three spec versions. */
const PARTS_OF_ROLE: Readonly<Record<Exclude<AiSdkRole, 'system'>, readonly string[]>> = {
  user: ['text', 'file'],
  assistant: ['text', 'file', 'reasoning', 'reasoning-file', 'custom', 'tool-call', 'tool-result'],
  tool: ['tool-result', 'tool-approval-response'],
};

/** Every content part type of an AI SDK prompt message (V2, V3 and V4). */
export const AI_SDK_PART_TYPES: readonly string[] = [...new Set(Object.values(PARTS_OF_ROLE).flat())];

/** The part types that are reasoning: what `clearThinking` drops and `hasThinking` marks. */
export const REASONING_PART_TYPES: ReadonlySet<string> = new Set(['reasoning', 'reasoning-file']);

/** One content part, any type, every field kept. */
export type AiSdkPart = { readonly type: string } & Readonly<Record<string, unknown>>;

/** A valid stored AI SDK message (its file data encoded), every field kept. */
export type AiSdkMessage = {
  readonly role: AiSdkRole;
  readonly content: string | readonly AiSdkPart[];
  readonly providerOptions?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
} & Readonly<Record<string, unknown>>;

type Rec = Record<string, unknown>;

/**
 * The first thing wrong with `value` as a stored AI SDK prompt message (see the file comment), as a
 * field and a sentence, or null when it is one.
 * @param where the message's field name (`messages[2]`); fields are named below it
 *   (`messages[2].content[0].data.$bytes`).
 */
export function aiSdkMessageProblem(value: unknown, where: string): InputProblem | null {
  if (!isRecord(value)) {
    return { field: where, message: 'expected an AI SDK prompt message object ({ role, content })' };
  }
  const role = value.role;
  if (!(AI_SDK_ROLES as readonly unknown[]).includes(role)) {
    return expected(`${where}.role`, `one of ${AI_SDK_ROLES.map((r) => `"${r}"`).join(', ')}`, role);
  }
  const options = providerOptionsProblem(value, where);
  if (options) return options;
  const content = value.content;
  if (role === 'system') {
    return typeof content === 'string'
      ? null
      : expected(`${where}.content`, "a string (a system message's content is its text)", content);
  }
  if (!Array.isArray(content)) {
    return expected(
      `${where}.content`,
      `a list of content parts (the provider-level prompt's ${String(role)} content is a list, never a string)`,
      content,
    );
  }
  const allowed = PARTS_OF_ROLE[role as Exclude<AiSdkRole, 'system'>];
  for (let j = 0; j < content.length; j++) {
    const part: unknown = content[j];
    const at = `${where}.content[${j}]`;
    if (!isRecord(part) || typeof part.type !== 'string') {
      return expected(at, 'a content part object with a type', part);
    }
    if (!allowed.includes(part.type)) {
      return {
        field: `${at}.type`,
        message: AI_SDK_PART_TYPES.includes(part.type)
          ? `a "${printable(part.type, 40)}" part belongs in ${roleOf(part.type)}, not in ${aRole(String(role))}`
          : `expected one of ${allowed.map((t) => `"${t}"`).join(', ')} in ${aRole(String(role))}, got "${printable(part.type, 40)}"`,
      };
    }
    const problem = partProblem(part, at);
    if (problem) return problem;
  }
  return null;
}

/** Which message a part type belongs in, for an error. */
function roleOf(type: string): string {
  const roles = (Object.keys(PARTS_OF_ROLE) as Array<keyof typeof PARTS_OF_ROLE>).filter((r) =>
    PARTS_OF_ROLE[r].includes(type),
  );
  return roles.map(aRole).join(' or ');
}

/** `a user message`, `an assistant message`. */
function aRole(role: string): string {
  return `${role === 'assistant' ? 'an' : 'a'} ${role} message`;
}

function partProblem(part: Rec, at: string): InputProblem | null {
  const options = providerOptionsProblem(part, at);
  if (options) return options;
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return stringAt(part, 'text', at);
    case 'file':
      return (
        optionalStringAt(part, 'filename', at) ??
        mediaTypeProblem(part, at) ??
        fileDataProblem(part.data, `${at}.data`, 'any')
      );
    case 'reasoning-file':
      return mediaTypeProblem(part, at) ?? fileDataProblem(part.data, `${at}.data`, 'bytes or url');
    case 'custom':
      return typeof part.kind === 'string' && part.kind.includes('.')
        ? null
        : expected(`${at}.kind`, 'the kind of custom content, "<provider>.<type>"', part.kind);
    case 'tool-call':
      return (
        idAt(part, 'toolCallId', at) ??
        idAt(part, 'toolName', at) ??
        (part.input === undefined
          ? expected(`${at}.input`, "the call's input (a JSON value; JSON cannot carry undefined)", undefined)
          : null) ??
        (part.providerExecuted === undefined || typeof part.providerExecuted === 'boolean'
          ? null
          : expected(`${at}.providerExecuted`, 'true or false', part.providerExecuted))
      );
    case 'tool-result':
      return (
        idAt(part, 'toolCallId', at) ??
        idAt(part, 'toolName', at) ??
        outputProblem(part.output, `${at}.output`)
      );
    case 'tool-approval-response':
      return (
        idAt(part, 'approvalId', at) ??
        (typeof part.approved === 'boolean'
          ? null
          : expected(`${at}.approved`, 'true or false (whether the call was approved)', part.approved)) ??
        optionalStringAt(part, 'reason', at)
      );
    default:
      return null;
  }
}

/** Output types of a tool result, over the three versions (`execution-denied` is V3+). */
const OUTPUT_TYPES = ['text', 'json', 'execution-denied', 'error-text', 'error-json', 'content'];

function outputProblem(output: unknown, at: string): InputProblem | null {
  if (!isRecord(output) || typeof output.type !== 'string' || !OUTPUT_TYPES.includes(output.type)) {
    return expected(
      isRecord(output) ? `${at}.type` : at,
      `a tool result output of type ${OUTPUT_TYPES.map((t) => `"${t}"`).join(', ')}`,
      isRecord(output) ? output.type : output,
    );
  }
  const options = providerOptionsProblem(output, at);
  if (options) return options;
  switch (output.type) {
    case 'text':
    case 'error-text':
      return typeof output.value === 'string' ? null : expected(`${at}.value`, 'a string', output.value);
    case 'json':
    case 'error-json':
      return 'value' in output && output.value !== undefined
        ? null
        : expected(`${at}.value`, 'a JSON value (null for none)', undefined);
    case 'execution-denied':
      return optionalStringAt(output, 'reason', at);
    default:
      return contentOutputProblem(output.value, `${at}.value`);
  }
}

/** A `content` output's items, by type (V2 `media`; V3 `file-*`, `image-*`; V4 `file`; `custom`). */
function contentOutputProblem(items: unknown, at: string): InputProblem | null {
  if (!Array.isArray(items)) return expected(at, 'a list of content items', items);
  for (let k = 0; k < items.length; k++) {
    const item: unknown = items[k];
    const itemAt = `${at}[${k}]`;
    if (!isRecord(item) || typeof item.type !== 'string') {
      return expected(itemAt, 'a content item object with a type', item);
    }
    const problem = providerOptionsProblem(item, itemAt) ?? contentItemProblem(item, itemAt);
    if (problem) return problem;
  }
  return null;
}

const CONTENT_ITEM_TYPES = [
  'text',
  'media',
  'file-data',
  'file-url',
  'file-id',
  'image-data',
  'image-url',
  'image-file-id',
  'file',
  'custom',
];

function contentItemProblem(item: Rec, at: string): InputProblem | null {
  switch (item.type) {
    case 'text':
      return stringAt(item, 'text', at);
    case 'media':
    case 'image-data':
      return stringAt(item, 'data', at) ?? mediaTypeProblem(item, at);
    case 'file-data':
      return (
        stringAt(item, 'data', at) ?? mediaTypeProblem(item, at) ?? optionalStringAt(item, 'filename', at)
      );
    case 'file-url':
    case 'image-url':
      return stringAt(item, 'url', at);
    case 'file-id':
    case 'image-file-id':
      return typeof item.fileId === 'string' || isStringRecord(item.fileId)
        ? null
        : expected(`${at}.fileId`, "a file id, or an object of each provider's file id", item.fileId);
    case 'file':
      return (
        mediaTypeProblem(item, at) ??
        optionalStringAt(item, 'filename', at) ??
        fileDataProblem(item.data, `${at}.data`, 'tagged')
      );
    case 'custom':
      return null;
    default:
      return {
        field: `${at}.type`,
        message: `expected one of ${CONTENT_ITEM_TYPES.map((t) => `"${t}"`).join(', ')}, got "${printable(String(item.type), 40)}"`,
      };
  }
}

/**
 * A file's `data`: `any` (a file part: V2/V3 bare data or a V4 tagged union), `tagged` (a V4 tool
 * result's file item: the V4 union) or `bytes or url` (a V4 reasoning file: its `data` and `url` kinds).
 */
function fileDataProblem(
  data: unknown,
  at: string,
  kinds: 'any' | 'tagged' | 'bytes or url',
): InputProblem | null {
  if (isRecord(data) && typeof data.type === 'string') {
    switch (data.type) {
      case 'data':
        return typeof data.data === 'string' ? null : bytesProblem(data.data, `${at}.data`);
      case 'url':
        return (
          urlProblem(data.url, `${at}.url`) ??
          (data.originalUrl === undefined || typeof data.originalUrl === 'string'
            ? null
            : expected(`${at}.originalUrl`, 'a string', data.originalUrl))
        );
      case 'reference':
        if (kinds === 'bytes or url') break;
        return isStringRecord(data.reference) && !('type' in data.reference)
          ? null
          : expected(
              `${at}.reference`,
              "an object of each provider's file id ({ <provider>: <id> })",
              data.reference,
            );
      case 'text':
        if (kinds === 'bytes or url') break;
        return stringAt(data, 'text', at);
    }
    return expected(
      `${at}.type`,
      kinds === 'bytes or url' ? '"data" or "url"' : '"data", "url", "reference" or "text"',
      data.type,
    );
  }
  if (kinds === 'any') {
    if (typeof data === 'string') return null;
    if (isEncodedUrl(data)) return urlProblem(data, at);
    if (isRecord(data) && '$bytes' in data) return bytesProblem(data, at);
  }
  return expected(
    at,
    kinds === 'any'
      ? 'base64 text, { $bytes } (a Uint8Array, encoded), { $url } (a URL, encoded), or a V4 { type: "data" | "url" | "reference" | "text", … }'
      : 'a V4 file data object ({ type: "data" | "url", … })',
    data,
  );
}

/** An encoded `Uint8Array` (./encoding.ts): exactly `{ $bytes }`, canonical base64. */
function bytesProblem(value: unknown, at: string): InputProblem | null {
  if (!isEncodedBytes(value)) {
    return expected(at, 'base64 text or { $bytes: <base64> } (a Uint8Array, encoded)', value);
  }
  return isCanonicalBase64(value.$bytes)
    ? null
    : {
        field: `${at}.$bytes`,
        message: 'expected canonical base64 (RFC 4648, padded), as encodeAiSdkMessage writes it',
      };
}

/** An encoded `URL` (./encoding.ts): exactly `{ $url }`, a URL's href as `URL.href` writes it. */
function urlProblem(value: unknown, at: string): InputProblem | null {
  if (!isEncodedUrl(value)) return expected(at, '{ $url: <href> } (a URL, encoded)', value);
  const href = value.$url;
  if (!URL.canParse(href)) return expected(`${at}.$url`, 'a URL', href);
  const canonical = new URL(href).href;
  return canonical === href
    ? null
    : {
        field: `${at}.$url`,
        message: `expected the URL as URL.href writes it ("${printable(canonical, 120)}"), as encodeAiSdkMessage stores it`,
      };
}

/** `providerOptions` absent, or an object with an object per provider (`SharedV*ProviderOptions`). */
function providerOptionsProblem(holder: Rec, at: string): InputProblem | null {
  const options = holder.providerOptions;
  if (options === undefined) return null;
  if (!isRecord(options)) {
    return expected(
      `${at}.providerOptions`,
      "an object of each provider's options ({ <provider>: { … } })",
      options,
    );
  }
  for (const [provider, value] of Object.entries(options)) {
    if (!isRecord(value)) {
      return expected(`${at}.providerOptions${key(provider)}`, "an object (the provider's options)", value);
    }
  }
  return null;
}

function mediaTypeProblem(part: Rec, at: string): InputProblem | null {
  return typeof part.mediaType === 'string' && part.mediaType !== ''
    ? null
    : expected(
        `${at}.mediaType`,
        'an IANA media type (image/png, application/pdf, image, …)',
        part.mediaType,
      );
}

function stringAt(holder: Rec, field: string, at: string): InputProblem | null {
  return typeof holder[field] === 'string' ? null : expected(`${at}.${field}`, 'a string', holder[field]);
}

function optionalStringAt(holder: Rec, field: string, at: string): InputProblem | null {
  return holder[field] === undefined ? null : stringAt(holder, field, at);
}

function idAt(holder: Rec, field: string, at: string): InputProblem | null {
  const value = holder[field];
  return typeof value === 'string' && value !== ''
    ? null
    : expected(`${at}.${field}`, 'a non-empty string', value);
}

/**
 * The first value in `value` that JSON cannot carry as it is (a `Uint8Array`, a `URL`, a `Date`, a
 * `Map`, any object that is not a plain object or an array), naming its field below `root`. Walks
 * with its own stack down to {@link MAX_JSON_DEPTH} levels (deeper nesting, cycles and the other
 * value rules are `jsonValueProblem`'s, shared/contract/content-checks.ts).
 */
export function nonJsonObjectProblem(value: unknown, root: string): InputProblem | null {
  const stack: Array<{ value: unknown; field: string; depth: number }> = [{ value, field: root, depth: 0 }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const top = stack.pop() as { value: unknown; field: string; depth: number };
    const v = top.value;
    if (typeof v !== 'object' || v === null || seen.has(v) || top.depth > MAX_JSON_DEPTH) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        stack.push({ value: v[i], field: `${top.field}[${i}]`, depth: top.depth + 1 });
      continue;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return { field: top.field, message: notJson(v) };
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, child] = entries[i] as [string, unknown];
      stack.push({ value: child, field: `${top.field}${key(k)}`, depth: top.depth + 1 });
    }
  }
  return null;
}

function notJson(v: object): string {
  if (v instanceof Uint8Array) {
    return "a Uint8Array is not JSON: encode the message with encodeAiSdkMessage before appending it (a file's bytes are stored as { $bytes: <base64> }); bytes anywhere but a file's data are refused";
  }
  if (v instanceof URL) {
    return "a URL object is not JSON: encode the message with encodeAiSdkMessage before appending it (a file's URL is stored as { $url: <href> }); a URL object anywhere but a file's data is refused";
  }
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  return `${typeof name === 'string' && name !== '' ? `a ${printable(name, 40)}` : 'an object with a prototype'} is not JSON: a message holds plain objects, arrays, strings, numbers, booleans and null`;
}

/** `.name`, or `["a b"]` for a key that is not an identifier. */
function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(printable(name, 40))}]`;
}

/** The problem "expected <what>, got <what the value is>". */
function expected(field: string, what: string, got: unknown): InputProblem {
  return { field, message: `expected ${what}, got ${describe(got)}` };
}

/** A short, safe description of a wrong value: its JSON when short, else its kind. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : `a list of ${value.length}`;
  if (value instanceof Uint8Array) return 'a Uint8Array';
  if (value instanceof URL) return 'a URL object';
  if (typeof value === 'object' && value !== null) return 'an object';
  const json = JSON.stringify(value) ?? String(value);
  return json.length <= 60 ? printable(json, 60) : `a ${typeof value} of ${json.length} characters`;
}

function isRecord(value: unknown): value is Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}

/** Whether a stored value is an AI SDK message object (`{ role, content }`), not Anthropic content. */
export function isAiSdkMessage(value: unknown): value is AiSdkMessage {
  return isRecord(value) && typeof value.role === 'string' && 'content' in value;
}

/** A message's parts (a system message's text as one text part). */
export function partsOf(message: AiSdkMessage): readonly AiSdkPart[] {
  const content = message.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}
