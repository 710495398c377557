/**
 * The task the JSON body parser's worker threads run (json-body.ts): a body's bytes, moved to the
 * thread, decoded as UTF-8 and read as JSON there, so that a large body's decoding and parsing
 * (tens of ms for 10 MB) never holds the API's event loop.
 */
import { type JsonText, readJsonText } from './json-text.ts';

/** Decodes `bytes` (UTF-8, a malformed sequence becoming U+FFFD as `Request.text()` does) and reads it. */
export default function parseJsonBody(bytes: Uint8Array): JsonText {
  return readJsonText(new TextDecoder().decode(bytes));
}
