/**
 * The last user request, verbatim: after a compaction the agent must still know exactly what it was
 * asked last. Taken by compactor from the leaving messages themselves, for every summarizer: a
 * model only sees clipped messages and cannot be trusted to copy a long request character for
 * character. Harness messages sent under the user role are skipped (shared/text/user-messages.ts).
 * Pure.
 */
import type { Message } from '../contract/message.ts';
import { isHighSurrogate } from '../contract/unicode.ts';
import { isUserWords } from '../text/user-messages.ts';

/** Longest request kept, in characters; a longer one is cut with a marker saying how long it was. */
export const REQUEST_CHARS = 20_000;

/**
 * The last user request, verbatim (clipped past {@link REQUEST_CHARS}), or null: the last user message
 * of kind `message` that holds the user's own words (a request or a short answer, see
 * {@link classifyUserText}): slash commands, IDE notices, harness complaints, interruption markers and
 * demonstrations are skipped.
 */
export function lastUserRequestOf(messages: Message[]): string | null {
  const found = lastUserRequestMessage(messages);
  return found ? clipRequest(found.content) : null;
}

/** The message {@link lastUserRequestOf} takes the request from, or null. */
export function lastUserRequestMessage(messages: Message[]): Message | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m && typeof m.content === 'string' && m.content.trim() && isUserWords(m)) return m;
  }
  return null;
}

/** Clips a request longer than {@link REQUEST_CHARS}, never splitting a surrogate pair. */
export function clipRequest(text: string): string {
  if (text.length <= REQUEST_CHARS) return text;
  const marker = `\n[… clipped: the request has ${text.length} characters]`;
  let end = REQUEST_CHARS - marker.length;
  if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(0, end) + marker;
}

/**
 * Whether `kept` (a checkpoint's last request) keeps `request`: verbatim (whitespace aside), or
 * condensed as the extractive summarizer condenses a long one, its beginning then a marker naming
 * the request's seq, where the archive holds all of it.
 */
export function keepsRequest(kept: string, request: { seq: number; content: string }): boolean {
  const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
  if (squash(kept).includes(squash(clipRequest(request.content)))) return true;
  const at = kept.indexOf('\n[… condensed');
  if (at < 0 || !kept.slice(at).includes(`seq ${request.seq}`)) return false;
  const head = squash(kept.slice(0, at).replace(/…$/, ''));
  return head !== '' && squash(request.content).startsWith(head);
}
