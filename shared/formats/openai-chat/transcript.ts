/**
 * Reads a JSONL of Chat Completions requests, as an agent (or a proxy such as LiteLLM) logs them:
 * one request per line, `{ "model"?: …, "messages": [ … ], … }`. A Chat Completions agent sends its
 * whole conversation with every request, so the last line's `messages` are the session; earlier
 * lines must be JSON objects with a `messages` list but are not stored. Pure: text in, validated
 * messages or an error naming the line and field out.
 */
import { printable, TranscriptError } from '../../contract/errors.ts';
import { type ChatMessage, chatMessageProblem } from './message.ts';

/**
 * Parses a JSONL of Chat Completions requests into the session's messages (the last request's).
 * @param source a name for error messages (the file path).
 * @throws {TranscriptError} naming the line (and `messages[i].field`) of a line that is not JSON,
 *   not a request with `messages`, or whose last request holds an invalid message; or when there is
 *   no request.
 */
export function parseChatRequestsJsonl(text: string, source: string): ChatMessage[] {
  let last: { messages: unknown[]; line: number } | null = null;
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    const where = `${source}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new TranscriptError(`${where}: not JSON (${printable((error as Error).message)})`);
    }
    const messages = (value as { messages?: unknown } | null)?.messages;
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray(messages)) {
      throw new TranscriptError(
        `${where}: messages: expected a Chat Completions request ({ model, messages: [...] })`,
      );
    }
    last = { messages, line: i + 1 };
  });
  const found = last as { messages: unknown[]; line: number } | null;
  if (found === null || found.messages.length === 0) throw new TranscriptError(`${source}: no messages`);
  found.messages.forEach((m, j) => {
    const problem = chatMessageProblem(m, `messages[${j}]`);
    if (problem) throw new TranscriptError(`${source}:${found.line}: ${problem.field}: ${problem.message}`);
  });
  return found.messages as ChatMessage[];
}
