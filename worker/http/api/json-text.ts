/**
 * What a request body's JSON text holds, as the API reads it: nothing (empty or whitespace), a value,
 * or the reason it is not one. Pure, so that it runs the same on the event loop and in the API's
 * worker threads (offload.ts).
 */
import { jsonDepthProblem } from '../../../shared/contract/content-checks.ts';
import { ApiError } from '../errors.ts';

/** A body's JSON, read: `empty` for no body; `problem` (a sentence, field `body`) when it is not JSON. */
export type JsonText =
  | { kind: 'empty' }
  | { kind: 'value'; value: unknown }
  | { kind: 'problem'; problem: string };

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
 * The value of a request body read as {@link readJsonText}, checked as every JSON route checks it.
 * @returns undefined for an empty body when not `required`.
 * @throws {ApiError} 415 when a body is not sent as `application/json`; 400 when it is not JSON
 *   (or is empty and `required`), or nests deeper than `MAX_JSON_DEPTH`.
 */
export function bodyValue(read: JsonText, contentType: string | undefined, required: boolean): unknown {
  if (read.kind === 'empty') {
    if (!required) return undefined;
    throw new ApiError('invalid_request_error', 'body: a JSON object is required', 'body');
  }
  if (!/^application\/json\b/i.test(contentType ?? '')) {
    throw new ApiError('unsupported_media_type_error', 'send the body with content-type: application/json');
  }
  if (read.kind === 'problem') throw new ApiError('invalid_request_error', read.problem, 'body');
  return read.value;
}
