/**
 * What a request body's JSON text holds, as the API reads it: nothing (empty or whitespace), a value,
 * or the reason it is not one. Pure, so that it runs the same on the event loop and in the parser's
 * worker thread (json-body.ts).
 */
import { jsonDepthProblem } from '../../../shared/contract/content-checks.ts';

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
