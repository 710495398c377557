/**
 * The JSON form of an AI SDK provider-level message (`LanguageModelV2Message`, `V3`, `V4` of
 * `@ai-sdk/provider` 2.x, 3.x, 4.x): everything a prompt holds is JSON but a file's data, which the
 * types let be a `Uint8Array` (raw bytes) or a `URL`. compactor stores JSON, so the client encodes
 * those two before it appends a message ({@link encodeAiSdkMessage}) and decodes the context it
 * loads ({@link decodeAiSdkPrompt}), the exact inverse:
 * - a `Uint8Array` becomes `{ "$bytes": "<base64>" }` (RFC 4648 base64, padded); decoded, a new
 *   `Uint8Array` of the same bytes (a Node `Buffer`, a subclass, comes back as a plain `Uint8Array`);
 * - a `URL` becomes `{ "$url": "<href>" }` (`URL.href`, the WHATWG serialization); decoded,
 *   `new URL(href)`, whose `href` is the same string.
 *
 * Only where the types put a file's data, so a tag can never be user data:
 * - V2 and V3: a `file` part's `data` (`Uint8Array | string | URL`), which is never a plain object;
 * - V4: a `file` or `reasoning-file` part's tagged `data`, `{ type: 'data', data }` (the inner
 *   `data`, `Uint8Array | string`) and `{ type: 'url', url }` (the `url`, always a `URL`), also in a
 *   tool result's `content` output (`{ type: 'file', data }`).
 * Anything else is passed on as it is (the same objects): a `Uint8Array` or `URL` found anywhere
 * else is not encoded, and the append refuses it naming its field (./message.ts), since it would
 * not survive JSON. Pure: no I/O, no Node built-ins (it runs in a browser or an edge runtime too).
 */

/** A `Uint8Array` as stored: its bytes in base64 (RFC 4648, with padding). */
export interface EncodedBytes {
  $bytes: string;
}

/** A `URL` as stored: its `href`. */
export interface EncodedUrl {
  $url: string;
}

/** A message of an AI SDK prompt as the client has it: any of the three spec versions. */
export interface AiSdkMessageLike {
  readonly role: string;
  readonly content: unknown;
  readonly providerOptions?: unknown;
}

/** A message as stored in an `ai-sdk` session: the same message with its file data encoded. */
export type AiSdkStoredMessage = { readonly role: string; readonly content: unknown } & Record<
  string,
  unknown
>;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const CODES = new Uint8Array(64).map((_, i) => ALPHABET.charCodeAt(i));
/** Each alphabet character's value, -1 for any other character. */
const VALUES = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) VALUES[ALPHABET.charCodeAt(i)] = i;
const PAD = 61; // '='

/**
 * Whether `text` is canonical base64 (RFC 4648 §4): the alphabet, a length that is a multiple of 4,
 * at most two `=` at the end, and zero in the bits the last character does not carry. Exactly the
 * strings {@link bytesToBase64} writes, so decoding one and encoding it again gives it back.
 */
export function isCanonicalBase64(text: string): boolean {
  const n = text.length;
  if (n % 4 !== 0) return false;
  const pad = n > 0 && text.charCodeAt(n - 1) === PAD ? (text.charCodeAt(n - 2) === PAD ? 2 : 1) : 0;
  for (let i = 0; i < n - pad; i++) {
    const code = text.charCodeAt(i);
    if (code >= 128 || (VALUES[code] as number) < 0) return false;
  }
  if (pad === 0) return true;
  const last = VALUES[text.charCodeAt(n - pad - 1)] as number;
  return pad === 1 ? (last & 0b11) === 0 : (last & 0b1111) === 0;
}

/** The bytes in base64 (RFC 4648 §4, padded). */
export function bytesToBase64(bytes: Uint8Array): string {
  const out = new Uint8Array(Math.ceil(bytes.length / 3) * 4);
  let o = 0;
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out[o++] = CODES[n >> 18] as number;
    out[o++] = CODES[(n >> 12) & 63] as number;
    out[o++] = CODES[(n >> 6) & 63] as number;
    out[o++] = CODES[n & 63] as number;
  }
  const rest = bytes.length - i;
  if (rest > 0) {
    const n = ((bytes[i] as number) << 16) | (rest === 2 ? (bytes[i + 1] as number) << 8 : 0);
    out[o++] = CODES[n >> 18] as number;
    out[o++] = CODES[(n >> 12) & 63] as number;
    out[o++] = rest === 2 ? (CODES[(n >> 6) & 63] as number) : PAD;
    out[o++] = PAD;
  }
  // Every code is ASCII, so any decoder reads them as these characters.
  return new TextDecoder().decode(out);
}

/**
 * The bytes of canonical base64 text.
 * @throws {TypeError} when `text` is not canonical base64 ({@link isCanonicalBase64}).
 */
export function base64ToBytes(text: string): Uint8Array {
  if (!isCanonicalBase64(text)) throw new TypeError('$bytes: expected canonical base64 (RFC 4648, padded)');
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const n =
      ((VALUES[text.charCodeAt(i)] as number) << 18) |
      ((VALUES[text.charCodeAt(i + 1)] as number) << 12) |
      (Math.max(VALUES[text.charCodeAt(i + 2)] as number, 0) << 6) |
      Math.max(VALUES[text.charCodeAt(i + 3)] as number, 0);
    out[o++] = n >> 16;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}

/** Whether a value is a stored `Uint8Array`: exactly `{ $bytes: string }`. */
export function isEncodedBytes(value: unknown): value is EncodedBytes {
  return isRecord(value) && typeof value.$bytes === 'string' && Object.keys(value).length === 1;
}

/** Whether a value is a stored `URL`: exactly `{ $url: string }`. */
export function isEncodedUrl(value: unknown): value is EncodedUrl {
  return isRecord(value) && typeof value.$url === 'string' && Object.keys(value).length === 1;
}

/**
 * A message of an AI SDK prompt (V2, V3 or V4) in the JSON form an `ai-sdk` session stores (see
 * the file comment): each file's `Uint8Array` or `URL` data encoded, every other value the same
 * object. Call it on every message before appending it.
 */
export function encodeAiSdkMessage(message: AiSdkMessageLike): AiSdkStoredMessage {
  return mapFileData(message, encodeValue) as AiSdkStoredMessage;
}

/** {@link encodeAiSdkMessage} of every message of a prompt. */
export function encodeAiSdkPrompt(prompt: readonly AiSdkMessageLike[]): AiSdkStoredMessage[] {
  return prompt.map(encodeAiSdkMessage);
}

/**
 * The exact inverse of {@link encodeAiSdkMessage}: each file's `{ $bytes }` a `Uint8Array` again and
 * each `{ $url }` a `URL`, every other value the same object.
 * @throws {TypeError} for a `$bytes` that is not canonical base64 or a `$url` that is not a URL
 *   (never in what an `ai-sdk` session stores: its append refuses them).
 */
export function decodeAiSdkMessage(message: AiSdkStoredMessage): AiSdkMessageLike {
  return mapFileData(message, decodeValue) as AiSdkMessageLike;
}

/**
 * {@link decodeAiSdkMessage} of every message of a prompt: what `loadContext` of an `ai-sdk`
 * session returns as `prompt`, as the model's `doGenerate`/`doStream` takes it.
 */
export function decodeAiSdkPrompt(prompt: readonly AiSdkStoredMessage[]): AiSdkMessageLike[] {
  return prompt.map(decodeAiSdkMessage);
}

function encodeValue(value: unknown): unknown {
  if (value instanceof Uint8Array) return { $bytes: bytesToBase64(value) } satisfies EncodedBytes;
  if (value instanceof URL) return { $url: value.href } satisfies EncodedUrl;
  return value;
}

function decodeValue(value: unknown): unknown {
  if (isEncodedBytes(value)) return base64ToBytes(value.$bytes);
  if (isEncodedUrl(value)) {
    if (!URL.canParse(value.$url)) throw new TypeError(`$url: "${value.$url.slice(0, 80)}" is not a URL`);
    return new URL(value.$url);
  }
  return value;
}

type Rec = Record<string, unknown>;

function isRecord(value: unknown): value is Rec {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

/**
 * The message with `convert` applied at every place a file's data may be (see the file comment),
 * copying only the objects on the way to a changed value.
 */
function mapFileData(message: unknown, convert: (value: unknown) => unknown): unknown {
  if (!isRecord(message) || !Array.isArray(message.content)) return message;
  const content = mapList(message.content, (part) => mapPart(part, convert));
  return content === message.content ? message : { ...message, content };
}

function mapPart(part: unknown, convert: (value: unknown) => unknown): unknown {
  if (!isRecord(part)) return part;
  if (part.type === 'file' || part.type === 'reasoning-file') return withData(part, convert);
  if (part.type !== 'tool-result' || !isRecord(part.output)) return part;
  const output = part.output;
  if (output.type !== 'content' || !Array.isArray(output.value)) return part;
  const value = mapList(output.value, (item) =>
    isRecord(item) && item.type === 'file' ? withData(item, convert) : item,
  );
  return value === output.value ? part : { ...part, output: { ...output, value } };
}

/** A file part (or a tool result's file item) with its data converted: bare (V2, V3) or tagged (V4). */
function withData(part: Rec, convert: (value: unknown) => unknown): Rec {
  const data = part.data;
  let next: unknown = data;
  if (isRecord(data) && data.type === 'data') {
    const inner = convert(data.data);
    next = inner === data.data ? data : { ...data, data: inner };
  } else if (isRecord(data) && data.type === 'url') {
    const url = convert(data.url);
    next = url === data.url ? data : { ...data, url };
  } else {
    next = convert(data);
  }
  return next === data ? part : { ...part, data: next };
}

/** `list` mapped, or `list` itself when no item changed. */
function mapList(list: readonly unknown[], f: (item: unknown) => unknown): readonly unknown[] {
  let out: unknown[] | null = null;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const next = f(item);
    if (next !== item && out === null) out = list.slice(0, i);
    out?.push(next);
  }
  return out ?? list;
}
