/**
 * What a request body's bytes hold, as the API reads them: nothing (empty or whitespace), a JSON
 * value, or the reason they are not one (not UTF-8, nested too deep, not JSON). Pure, so that it
 * runs the same on the event loop and in the API's worker threads (offload.ts).
 */
import { jsonDepthProblem } from '../../../shared/contract/content-checks.ts';
import { ApiError } from '../errors.ts';
import { firstInvalidUtf8 } from './utf8.ts';

/** A body's JSON, read: `empty` for no body; `problem` (a sentence, field `body`) when it is not JSON. */
export type JsonText =
  | { kind: 'empty' }
  | { kind: 'value'; value: unknown }
  | { kind: 'problem'; problem: string };

/** Refuses a malformed byte (RFC 8259 §8.1: JSON is UTF-8) rather than storing U+FFFD for it. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads `bytes` as a request body: decoded as UTF-8, refused at the first malformed byte (named by
 * its offset), then read as {@link readJsonText}. A leading byte order mark is dropped.
 */
export function readJsonBytes(bytes: Uint8Array): JsonText {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    const bad = firstInvalidUtf8(bytes);
    const at = bad ? ` at byte offset ${bad.offset} (0x${bad.byte.toString(16).padStart(2, '0')})` : '';
    return { kind: 'problem', problem: `body: not valid UTF-8${at}; send JSON as UTF-8` };
  }
  return readJsonText(text);
}

/**
 * Reads `text` as a request body: the nesting is counted on the text before it is parsed, so nothing
 * deeper than `MAX_JSON_DEPTH` (shared/contract/content-checks.ts) reaches the parser.
 */
export function readJsonText(text: string): JsonText {
  if (text.trim() === '') return { kind: 'empty' };
  const deep = jsonDepthProblem(text, 'body');
  if (deep) return { kind: 'problem', problem: `body: ${deep.message}` };
  try {
    return { kind: 'value', value: JSON.parse(text) };
  } catch {
    return { kind: 'problem', problem: 'body: not valid JSON' };
  }
}

/**
 * Checks that a body is sent as JSON: `application/json`, with no charset or `charset=utf-8`.
 * @throws {ApiError} 415 otherwise.
 */
export function assertJsonContentType(contentType: string | undefined): void {
  if (!/^application\/json\b/i.test(contentType ?? '')) {
    throw new ApiError('unsupported_media_type_error', 'send the body with content-type: application/json');
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new ApiError(
      'unsupported_media_type_error',
      `content-type: charset "${charset.slice(0, 40)}" is not supported; send JSON as UTF-8`,
    );
  }
}

/**
 * The value of a request body read as {@link readJsonBytes}, checked as every JSON route checks it.
 * @returns undefined for an empty body when not `required`.
 * @throws {ApiError} 415 when a body is not sent as JSON ({@link assertJsonContentType}); 400 when
 *   it is not UTF-8 or not JSON (or is empty and `required`), or nests deeper than `MAX_JSON_DEPTH`.
 */
export function bodyValue(read: JsonText, contentType: string | undefined, required: boolean): unknown {
  if (read.kind === 'empty') {
    if (!required) return undefined;
    throw new ApiError('invalid_request_error', 'body: a JSON object is required', 'body');
  }
  assertJsonContentType(contentType);
  if (read.kind === 'problem') throw new ApiError('invalid_request_error', read.problem, 'body');
  return read.value;
}
