/**
 * Old tool output pruned before a summary request, so that the request costs no more input tokens
 * than the messages it summarizes. Pure.
 *
 * A coding agent's history is mostly tool output (files read, test runs, search results), and the
 * checkpoint keeps little of it: what failed and how, which files, which commands. The newest
 * outputs (what the agent was looking at when the messages left) stay as the transcript shows them;
 * older ones are cut to a head and a tail, with their error lines kept (the exception that ends a
 * traceback, `error:` and `FAILED` lines), the oldest hardest, until the request fits. The full
 * text stays in the archive, and the marker says so with the seq to look it up.
 */
import type { Message } from '../contract/message.ts';
import { estimateTextTokens } from '../contract/tokens.ts';
import { detectError, isErrorLine } from '../text/error-lines.ts';
import { MAX_MESSAGE_CHARS, renderTranscript } from './prompt.ts';

/** Tool results (and long tool calls) at the end of the transcript left as they are. */
export const KEEP_NEWEST_TOOL_OUTPUTS = 4;

/** A tool call longer than this, characters, counts as tool output (a file written whole, a long patch). */
export const LONG_TOOL_CALL_CHARS = 1_000;

/** Fewest characters of head and tail together that a pruned output keeps (plus its error lines). */
export const MIN_PRUNED_CHARS = 240;

/** Most error lines a pruned output keeps, and most characters of each. */
export const MAX_KEPT_ERROR_LINES = 6;
const MAX_ERROR_LINE_CHARS = 300;

/**
 * Leaving messages under this many tokens are summarized without pruning to the leaving size: the
 * request's fixed part (system prompt and tool, about 3,000 tokens) alone is more than they are, so
 * no pruning can bring the request under them. The overhead is accepted: such a compaction costs
 * a few thousandths of a dollar, and it happens only when the strategy asked for it.
 */
export const SMALL_LEAVING_TOKENS = 2_000;

/** The marker put where old tool output was cut: `[... pruned 1234 chars of old tool output; seq 17 in the archive ...]`. */
export function prunedMarker(chars: number, seq: number): string {
  return `[... pruned ${chars} chars of old tool output; seq ${seq} in the archive ...]`;
}

/** What {@link pruneToolOutputs} did. */
export interface PruneResult {
  /** The messages, tool outputs cut where needed (the same objects where not). */
  messages: Message[];
  /** Tool outputs cut. */
  pruned: number;
  /** Characters removed, markers not counted. */
  prunedChars: number;
  /** Estimated tokens of the rendered `<transcript>` after pruning. */
  transcriptTokens: number;
  /** Whether the transcript fits `targetTokens` (false: even pruned to the least it is over). */
  fits: boolean;
}

/** Whether a message is tool output that may be pruned: a tool result, or a long tool call. */
export function isPrunable(m: Message): boolean {
  if (m.kind === 'tool_result') return true;
  return m.kind === 'tool_call' && m.content.length > LONG_TOOL_CALL_CHARS;
}

/**
 * Cuts old tool outputs until the rendered `<transcript>` of `messages` is at most `targetTokens`
 * (estimated, about 4 characters a token).
 *
 * Every tool output but the newest {@link KEEP_NEWEST_TOOL_OUTPUTS} is a candidate. Each gets a
 * cap, in characters, of `MIN + (MAX_MESSAGE_CHARS - MIN) × s × w`, where `w` grows from 0.25 for
 * the oldest candidate to 1 for the newest (older outputs are cut harder) and `s`, the same for
 * all, is the largest value in [0, 1] (found by bisection) for which the transcript fits. An output
 * within its cap is left as it is; a longer one keeps the first two thirds of its cap and the last
 * third around a {@link prunedMarker}, with its error lines (up to {@link MAX_KEPT_ERROR_LINES})
 * after the marker when they fell in the cut. When even `s = 0` does not fit, that is returned with
 * `fits` false: the caller then sends it as is (the request is still smaller).
 *
 * When keeping the newest {@link KEEP_NEWEST_TOOL_OUTPUTS} whole cannot fit, the newest but one
 * become candidates too (the very newest output always stays whole).
 *
 * @param messages the leaving messages (one chunk), ascending seq.
 * @param targetTokens the most tokens the transcript should take.
 * @param measure tokens of a rendered transcript; default {@link estimateTextTokens}. The
 *   summarizer passes one that counts the text JSON-escaped, as the request carries it.
 */
export function pruneToolOutputs(
  messages: Message[],
  targetTokens: number,
  measure: (text: string) => number = estimateTextTokens,
): PruneResult {
  const first = pruneKeeping(messages, targetTokens, measure, KEEP_NEWEST_TOOL_OUTPUTS);
  return first.fits ? first : pruneKeeping(messages, targetTokens, measure, 1);
}

function pruneKeeping(
  messages: Message[],
  targetTokens: number,
  measureText: (text: string) => number,
  keepNewest: number,
): PruneResult {
  const measure = (ms: Message[]) => measureText(renderTranscript(ms));
  const whole = measure(messages);
  if (whole <= targetTokens) {
    return { messages, pruned: 0, prunedChars: 0, transcriptTokens: whole, fits: true };
  }
  const prunable = messages.flatMap((m, i) => (isPrunable(m) ? [i] : []));
  const candidates = prunable.slice(0, Math.max(0, prunable.length - keepNewest));
  if (candidates.length === 0) {
    return { messages, pruned: 0, prunedChars: 0, transcriptTokens: whole, fits: false };
  }
  const weight = (rank: number) =>
    candidates.length === 1 ? 1 : 0.25 + (0.75 * rank) / (candidates.length - 1);
  const cut = new Map<number, { content: string; removed: number }>();
  const at = (s: number) => {
    let removed = 0;
    let count = 0;
    const out = messages.slice();
    candidates.forEach((index, rank) => {
      const m = messages[index] as Message;
      const cap = Math.floor(MIN_PRUNED_CHARS + (MAX_MESSAGE_CHARS - MIN_PRUNED_CHARS) * s * weight(rank));
      if (m.content.length <= cap) return;
      const key = index * 100_000 + cap;
      let done = cut.get(key);
      if (!done) {
        done = pruneText(m.content, cap, m.seq, m.kind === 'tool_result');
        cut.set(key, done);
      }
      if (done.removed <= 0) return;
      out[index] = { ...m, content: done.content };
      removed += done.removed;
      count += 1;
    });
    return { out, removed, count };
  };
  let best = at(0);
  let bestTokens = measure(best.out);
  if (bestTokens > targetTokens) {
    return {
      messages: best.out,
      pruned: best.count,
      prunedChars: best.removed,
      transcriptTokens: bestTokens,
      fits: false,
    };
  }
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 12; i++) {
    const mid = (lo + hi) / 2;
    const tried = at(mid);
    const tokens = measure(tried.out);
    if (tokens <= targetTokens) {
      lo = mid;
      best = tried;
      bestTokens = tokens;
    } else hi = mid;
  }
  return {
    messages: best.out,
    pruned: best.count,
    prunedChars: best.removed,
    transcriptTokens: bestTokens,
    fits: true,
  };
}

/**
 * `text` cut to about `cap` characters: the first two thirds of `cap`, the marker, the error lines
 * of the cut part (for a tool result), the last third. `removed` is 0 when cutting would not save
 * anything (the marker and error lines outweigh the cut).
 */
export function pruneText(
  text: string,
  cap: number,
  seq: number,
  errors: boolean,
): { content: string; removed: number } {
  if (text.length <= cap) return { content: text, removed: 0 };
  let headEnd = Math.ceil((cap * 2) / 3);
  let tailStart = text.length - (cap - headEnd);
  // Never split a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(text.charAt(headEnd - 1))) headEnd -= 1;
  if (/[\uDC00-\uDFFF]/.test(text.charAt(tailStart))) tailStart += 1;
  const middle = text.slice(headEnd, tailStart);
  const kept = errors ? errorLinesOf(text, middle) : [];
  const removed = middle.length - kept.reduce((n, l) => n + l.length + 1, 0);
  const content = [
    text.slice(0, headEnd),
    prunedMarker(middle.length, seq),
    ...kept,
    text.slice(tailStart),
  ].join('\n');
  if (content.length >= text.length) return { content: text, removed: 0 };
  return { content, removed };
}

/**
 * The error lines inside `middle` (the part of `text` being cut): the tool result's first error
 * line as the extractive summarizer finds it (a traceback's exception line first), then the other
 * lines that look like errors, in order, each once, at most {@link MAX_KEPT_ERROR_LINES} of at most
 * 300 characters.
 */
function errorLinesOf(text: string, middle: string): string[] {
  const lines = middle
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const found: string[] = [];
  const main = detectError(text, false, null);
  if (main && main !== 'Python traceback' && !/^exit code/.test(main)) {
    const line = lines.find((l) => l.includes(main.slice(0, 80)));
    if (line) found.push(line);
  }
  for (const line of lines) {
    if (found.length >= MAX_KEPT_ERROR_LINES) break;
    if (!found.includes(line) && isErrorLine(line)) found.push(line);
  }
  return found
    .slice(0, MAX_KEPT_ERROR_LINES)
    .map((l) => (l.length > MAX_ERROR_LINE_CHARS ? `${l.slice(0, MAX_ERROR_LINE_CHARS - 1)}…` : l));
}
