/**
 * `clearThinking { keep }`: no summary and no LLM call (like the Messages API's context editing
 * `clear_thinking_20251015`). An assistant turn is a run of adjacent assistant rows (any other row
 * ends it); the `keep` newest turns that hold `thinking` or `redacted_thinking` blocks keep them,
 * and every older assistant row loses its thinking blocks, the rest of its content untouched and in
 * order. Dropping from the oldest end keeps the rule of "Preserved thinking": blocks may leave the
 * start of the chain, never the middle, and a signature is bound to the conversation before it
 * without its thinking, so the thinking that stays still verifies.
 *
 * Never touched:
 * - the newest assistant turn when it is an open tool loop (it made calls and only tool results, or
 *   nothing, follow it): the docs require that turn's thinking sent back intact, and a request
 *   answering its calls must begin that turn with thinking (see `shared/context/render.ts`);
 * - pinned rows;
 * - a row whose content is nothing but thinking: dropping it would leave a message with no content,
 *   which the API refuses, and a stand-in text would change the conversation every later
 *   signature is bound to. It keeps its thinking and the plan says so.
 *
 * The original rows are archived whole and the live ones rewritten in place (same seq), so a
 * restore puts them back exactly. Skipped, with the reason, when nothing is left to drop. The
 * ledger's `blocks_cleared` counts the thinking blocks dropped. Pure: planning only.
 *
 * It does not apply to an `openai-chat` session: Chat Completions returns no reasoning to send back
 * (an OpenAI staff answer on the community forum: reasoning "is discarded after every API
 * request"), so its messages never hold thinking and the strategy skips with nothing to clear.
 *
 * In an `openai-responses` session a `reasoning` item is a row of its own: an older one loses its
 * `encrypted_content` and summary (shared/formats/openai-responses/clearing.ts), the row staying
 * for a restore, and the context leaves it out (the reasoning guide,
 * https://developers.openai.com/api/docs/guides/reasoning, lets earlier turns' reasoning go; the
 * newest turn's, which the function-calling guide says "must also be passed back" with the tool
 * outputs, is the open tool loop's and stays).
 */
import { z } from 'zod';
import type { MessageMeta } from '../contract/message.ts';
import { SESSION_FORMAT_RULES } from '../formats/registry.ts';
import { clearingPlan, contentOf, fmt } from '../planning/clearing.ts';
import type { Rewrite } from '../planning/types.ts';
import { skip } from '../planning/window.ts';
import type { StrategyUnit } from './unit.ts';

/** Assistant turns whose thinking stays when the shorthand names no number. */
export const DEFAULT_KEEP_THINKING_TURNS = 1;

export const clearThinkingStrategySchema = z
  .object({
    type: z.literal('clearThinking'),
    /** The newest assistant turns holding thinking whose thinking stays. */
    keep: z.number().int().min(0).max(100_000).default(DEFAULT_KEEP_THINKING_TURNS),
  })
  .strict();

export type ClearThinkingStrategy = z.infer<typeof clearThinkingStrategySchema>;

/** The seqs of each assistant turn (a run of adjacent assistant rows), oldest first. */
function assistantTurns(messages: MessageMeta[]): MessageMeta[][] {
  const turns: MessageMeta[][] = [];
  let run: MessageMeta[] | null = null;
  for (const m of messages) {
    if (m.role !== 'assistant') {
      run = null;
      continue;
    }
    if (run === null) {
      run = [];
      turns.push(run);
    }
    run.push(m);
  }
  return turns;
}

/**
 * The newest assistant turn when it is an open tool loop: it holds `tool_use` blocks and every row
 * after it is a user or tool row that answers calls. Judged on metadata alone, and on the safe
 * side: a trailing row with a result counts whatever else it holds. Null otherwise.
 */
function openToolLoop(messages: MessageMeta[], turns: MessageMeta[][]): MessageMeta[] | null {
  const last = turns[turns.length - 1];
  const end = last?.[last.length - 1];
  if (last === undefined || end === undefined) return null;
  if (!last.some((m) => m.toolUseIds.length > 0)) return null;
  const after = messages.filter((m) => m.seq > end.seq);
  const answering = after.every(
    (m) => (m.role === 'user' || m.role === 'tool') && m.toolResultIds.length > 0,
  );
  return answering ? last : null;
}

/** What the rule decides from the metadata: the rows it may rewrite, and why others stay. */
interface Candidates {
  rows: MessageMeta[];
  /** Turns holding thinking. */
  thinkingTurns: number;
  /** The first seq of the oldest kept turn, or null when none is kept. */
  firstKept: number | null;
  /** The open tool loop's seqs, or null. */
  loop: number[] | null;
  pinned: number;
}

function candidates(messages: MessageMeta[], keep: number): Candidates {
  const turns = assistantTurns(messages);
  const withThinking = turns.filter((t) => t.some((m) => m.thinking));
  const kept = new Set(withThinking.slice(Math.max(0, withThinking.length - keep)).flat());
  const loop = openToolLoop(messages, turns);
  for (const m of loop ?? []) kept.add(m);
  const older = withThinking.flat().filter((m) => m.thinking && !kept.has(m));
  const firstKeptTurn = keep > 0 ? (withThinking[withThinking.length - keep] ?? withThinking[0]) : undefined;
  return {
    rows: older.filter((m) => !m.pinned),
    thinkingTurns: withThinking.length,
    firstKept: firstKeptTurn?.[0]?.seq ?? null,
    loop: loop === null ? null : loop.map((m) => m.seq),
    pinned: older.filter((m) => m.pinned).length,
  };
}

export const clearThinking: StrategyUnit<ClearThinkingStrategy> = {
  type: 'clearThinking',
  // The schema's input allows the defaulted option to be absent; its output is the type.
  schema: clearThinkingStrategySchema as unknown as z.ZodType<ClearThinkingStrategy>,
  usage: 'clearThinking[:N]',
  // Tail options are passed on for the strict schema to refuse: it keeps turns, not a tail.
  shorthand: (n, tail) => ({ type: 'clearThinking', keep: n ?? DEFAULT_KEEP_THINKING_TURNS, ...tail }),
  describe: (strategy) => `clearThinking:${strategy.keep}`,
  // Each kept turn is an assistant row and the user row after it; the open tool loop always stays.
  kept: (strategy) => Math.max(strategy.keep, 1) * 2,
  summarizes: false,
  summaryOptions: () => null,
  reads: (messages, strategy) => candidates(messages, strategy.keep).rows.map((m) => m.seq),
  plan: (snapshot, messages, strategy) => {
    const name = 'clearThinking';
    const found = candidates(messages, strategy.keep);
    if (found.thinkingTurns === 0) return skip(name, 'nothing to clear: no assistant turn holds thinking');
    const notes = [
      found.firstKept === null
        ? 'no assistant turn keeps its thinking (keep 0)'
        : `the newest ${fmt(strategy.keep)} assistant turn(s) with thinking keep it (from seq ${found.firstKept})`,
    ];
    if (found.loop !== null) {
      notes.push(`the open tool loop keeps its thinking (seq ${found.loop[0]}..${found.loop.at(-1)})`);
    }
    if (found.pinned > 0) notes.push(`${fmt(found.pinned)} pinned row(s) with thinking stay`);

    const format = SESSION_FORMAT_RULES[snapshot.format];
    const rewrites: Rewrite[] = [];
    let dropped = 0;
    let thinkingOnly = 0;
    for (const m of found.rows) {
      const result = format.clearThinking(contentOf(snapshot.contents, m.seq));
      if (result === null) continue;
      if (result === 'thinking only') {
        thinkingOnly++;
        continue;
      }
      dropped += result.dropped;
      rewrites.push(format.rewriteOf(m, result.content));
    }
    if (thinkingOnly > 0) {
      notes.push(`${fmt(thinkingOnly)} row(s) holding nothing but thinking keep it (no empty message)`);
    }
    if (rewrites.length === 0) {
      notes.push(
        found.rows.length === 0
          ? `${fmt(found.thinkingTurns)} assistant turn(s) hold thinking, none older than the kept ones`
          : 'every older row left with thinking holds nothing else',
      );
    }
    return clearingPlan(
      { strategy: name, what: 'thinking block', clearAtLeast: 0, messageCount: messages.length },
      rewrites,
      dropped,
      notes,
    );
  },
};
