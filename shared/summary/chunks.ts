/**
 * Splits the leaving messages into chunks whose transcript fits an input budget, so a summary
 * request never exceeds it: the summarizer then folds the chunks in order, each one merged into
 * the checkpoint of the ones before. A session too long for one request is still summarized, in
 * several calls, rather than failing or dropping messages. Pure.
 *
 * A chunk boundary never falls inside an open tool exchange (between a tool call and the last of
 * the results it waits for) unless that exchange alone exceeds the budget.
 */
import type { Message } from '../contract/message.ts';
import { estimateTextTokens } from '../contract/tokens.ts';
import { renderTranscript } from './prompt.ts';

/** Estimated prompt tokens of one message as the transcript renders it (clipped and escaped). */
export function transcriptTokens(message: Message): number {
  // The element without the <transcript> wrapper, which is counted once per chunk by the caller.
  return estimateTextTokens(renderTranscript([message])) - TRANSCRIPT_WRAPPER_TOKENS;
}

const TRANSCRIPT_WRAPPER_TOKENS = estimateTextTokens(renderTranscript([]));

/**
 * Chunks `messages` (ascending seq) so each chunk's transcript is at most `budgetTokens`.
 * @returns one chunk when everything fits; never an empty chunk; `[]` for no messages.
 * @throws {Error} if `budgetTokens` is not a positive number.
 */
export function chunkByBudget(messages: Message[], budgetTokens: number): Message[][] {
  if (!(budgetTokens > 0)) throw new Error(`chunkByBudget: budgetTokens must be > 0, got ${budgetTokens}`);
  const chunks: Message[][] = [];
  let current: Message[] = [];
  let currentTokens = TRANSCRIPT_WRAPPER_TOKENS;
  for (const unit of exchanges(messages)) {
    const tokensOf = unit.map(transcriptTokens);
    const unitTokens = tokensOf.reduce((n, t) => n + t, 0);
    if (current.length > 0 && currentTokens + unitTokens > budgetTokens) {
      chunks.push(current);
      current = [];
      currentTokens = TRANSCRIPT_WRAPPER_TOKENS;
    }
    for (const [i, m] of unit.entries()) {
      const tokens = tokensOf[i] ?? 0;
      // A unit larger than the budget is split message by message: nothing else can be done.
      if (current.length > 0 && currentTokens + tokens > budgetTokens) {
        chunks.push(current);
        current = [];
        currentTokens = TRANSCRIPT_WRAPPER_TOKENS;
      }
      current.push(m);
      currentTokens += tokens;
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** Groups messages into units that end where no tool call is waiting for a result. */
function exchanges(messages: Message[]): Message[][] {
  const results = new Set(messages.filter((m) => m.kind === 'tool_result').map((m) => m.toolCallId));
  const units: Message[][] = [];
  let unit: Message[] = [];
  const open = new Set<string>();
  for (const m of messages) {
    unit.push(m);
    // A call whose result is not among these messages will never close: do not wait for it.
    if (m.kind === 'tool_call' && m.toolCallId && results.has(m.toolCallId)) open.add(m.toolCallId);
    if (m.kind === 'tool_result' && m.toolCallId) open.delete(m.toolCallId);
    if (open.size === 0) {
      units.push(unit);
      unit = [];
    }
  }
  if (unit.length > 0) units.push(unit);
  return units;
}
