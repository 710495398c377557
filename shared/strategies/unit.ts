/**
 * What a compaction strategy is, in one place: its zod schema, its command-line shorthand, whether
 * it needs a summary, and its pure planning rule. Adding a strategy is one file that exports a
 * {@link StrategyUnit} and one line in the registry (`index.ts`); the pipeline, the Postgres
 * adapter and the CLI read everything else from the unit.
 */
import type { z } from 'zod';
import type { MessageMeta } from '../contract/message.ts';
import type { Plan, SessionSnapshot } from '../planning/types.ts';
import type { TailShorthand } from './tail.ts';

/** What a summarizing strategy asks of its summary. */
export interface SummaryOptions {
  /** Upper bound of the checkpoint, in tokens. */
  maxSummaryTokens: number;
  /** Model override for the `anthropic` summarizer. */
  model?: string | undefined;
  /**
   * On the job's last attempt, rather than fail: `extractive` summarizes offline, `anthropic` with
   * the `anthropic` summarizer.
   */
  fallback?: 'none' | 'extractive' | 'anthropic' | undefined;
  /** The summarizer the strategy names; absent: the process's. */
  summarizer?:
    | 'anthropic'
    | 'anthropic-compaction'
    | 'openai'
    | 'openai-compaction'
    | 'extractive'
    | undefined;
  /** The operator's summary instructions, for the `anthropic` summarizer (the extractive one ignores them). */
  instructions?: string | undefined;
  /** The least fidelity score a summary must reach to be committed (shared/fidelity/score.ts); absent: none. */
  minFidelity?: number | undefined;
  /** What a summary under `minFidelity` leads to; absent: `skip`. */
  onLowFidelity?: 'skip' | 'retry' | 'fallback' | undefined;
}

/** One strategy. `S` is its parsed shape; `S['type']` is its name. */
export interface StrategyUnit<S extends { type: string } = { type: string }> {
  /** The strategy's name: the `type` of its JSON form, recorded in the ledger. */
  readonly type: S['type'];
  /** Validates the JSON form (events, policies, the CLI). Strict: unknown keys are refused. */
  readonly schema: z.ZodType<S>;
  /**
   * The candidate JSON form of the shorthand `type[:N][:Ttokens][:userTurn]` (validated afterwards
   * by `schema`); `n` is the number after the colon, if any, and `tail` the tail options after it
   * (a strategy that keeps no tail passes them on for its strict schema to refuse).
   */
  shorthand(n: number | undefined, tail: TailShorthand): unknown;
  /**
   * The strategy for people: its shorthand (`slidingWindow:50`), plus in parentheses what the
   * shorthand leaves out.
   */
  describe(strategy: S): string;
  /** The shorthand's form for help texts, e.g. `slidingWindow:N`. */
  readonly usage: string;
  /**
   * Whether applying it writes a summary (an LLM call, or the extractive summarizer). A strategy
   * that summarizes takes the session's lease and calls its summarizer with no transaction open;
   * one that does not is read, planned and applied in one short transaction under the row lock.
   */
  readonly summarizes: boolean;
  /**
   * How a strategy that summarizes wants its summary (bound in tokens, model, fallback); null for
   * one that does not.
   */
  summaryOptions(strategy: S): SummaryOptions | null;
  /**
   * Messages it keeps verbatim (at least: a token tail may keep more). After a compaction that could not bring the session under its
   * trigger (the storm guard), as many new messages must arrive before another one may help.
   */
  kept(strategy: S): number;
  /**
   * For a strategy that rewrites messages in place (and writes no summary): the seqs whose stored
   * content its plan reads, chosen from the metadata alone, ascending. The caller reads them under
   * the same lock as the metadata and hands them to `plan` as `snapshot.contents`. Absent for
   * strategies that plan on metadata only.
   */
  reads?(messages: MessageMeta[], strategy: S): number[];
  /**
   * For a strategy that runs others in turn within one job (`auto`): those strategies, in order.
   * Each is its own compaction (its own ledger row under its own idempotency key, its own version
   * bump, restorable on its own), and each after the first runs only while the session is still
   * over its trigger. Absent for a strategy that is one compaction.
   */
  stages?(strategy: S): Array<{ type: string }>;
  /**
   * The planning rule: which messages leave (or are rewritten in place). Pure. The caller has
   * checked that `messages` are the snapshot's live messages, strictly ascending by seq.
   */
  plan(snapshot: SessionSnapshot, messages: MessageMeta[], strategy: S): Plan;
}
