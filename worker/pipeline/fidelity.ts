/**
 * The fidelity check's place in the pipeline: the facts of the leaving messages are gathered while
 * the summarizer reads them, and a summary is scored (shared/fidelity/score.ts) before it is
 * committed.
 *
 * Why gather in passing: the leaving messages arrive as pages (`SessionReads.pagedMessages`) so a
 * long history is never whole in memory; the check keeps only bounded facts of each page
 * (`LeavingFacts`), so observing the pages as the summarizer pulls them costs no second read and
 * no more memory than the summarizer's own. A summarizer that does not read every page (one that
 * sends the conversation itself, or stops early) leaves the facts incomplete: the check then reads
 * the pages again on its own ({@link completeFacts}). Pure but for that read.
 */
import type { Message } from '../../shared/contract/message.ts';
import {
  checkFidelity,
  describeParts,
  type FidelityCheck,
  LeavingFacts,
  type PlanFacts,
} from '../../shared/fidelity/score.ts';
import { compactionBlockOf } from '../../shared/summary/compaction-block.ts';
import type { Leaving } from '../../shared/summary/summarizer.ts';
import type { SummaryToWrite } from './summary.ts';

/** Leaving messages that feed `facts` on their first full pass. */
export interface ObservedLeaving {
  leaving: Leaving;
  facts: LeavingFacts;
  /** Whether the first pass read every page (else the facts are incomplete). */
  complete(): boolean;
}

/** Wraps `leaving` so that the summarizer's first pass over it also gathers the check's facts. */
export function observeLeaving(leaving: Leaving): ObservedLeaving {
  const facts = new LeavingFacts();
  if (Array.isArray(leaving)) {
    facts.observe(leaving);
    return { leaving, facts, complete: () => true };
  }
  let passes = 0;
  let done = false;
  const wrapped: AsyncIterable<Message[]> = {
    async *[Symbol.asyncIterator]() {
      const first = passes++ === 0;
      for await (const page of leaving) {
        if (first) facts.observe(page);
        yield page;
      }
      if (first) done = true;
    },
  };
  return { leaving: wrapped, facts, complete: () => done };
}

/** The facts of every leaving message: those observed, or (when the pass was cut short) a fresh read of `reread`. */
export async function completeFacts(observed: ObservedLeaving, reread: () => Leaving): Promise<LeavingFacts> {
  if (observed.complete()) return observed.facts;
  const facts = new LeavingFacts();
  const again = reread();
  if (Array.isArray(again)) facts.observe(again);
  else for await (const page of again) facts.observe(page);
  return facts;
}

/**
 * Scores a summary as the agent will read it: its rendered text, working set and last request. A
 * summary that is a compaction block is read as the block (what `loadContext` sends by default): its
 * content alone, not the extractive checkpoint stored beside it as the portable copy.
 */
export function scoreSummary(facts: LeavingFacts, summary: SummaryToWrite, plan: PlanFacts): FidelityCheck {
  const block = compactionBlockOf(summary.blocks ?? null);
  if (block) return checkFidelity(facts, { text: block.content, workingSet: [], lastUserRequest: '' }, plan);
  return checkFidelity(
    facts,
    {
      text: summary.text,
      workingSet: summary.checkpoint.workingSet,
      lastUserRequest: summary.checkpoint.lastUserRequest,
    },
    plan,
  );
}

/** Whether a summary scored under the strategy's `minFidelity` (and so may not be committed). */
export function belowMinimum(check: FidelityCheck, minFidelity: number | undefined): boolean {
  return minFidelity !== undefined && check.score < minFidelity;
}

/** The reason a summary under `minFidelity` is not committed: its score, the minimum and the parts. */
export function lowFidelityReason(summarizer: string, check: FidelityCheck, minimum: number): string {
  return (
    `the ${summarizer} summary's fidelity ${check.score} is below minFidelity ${minimum} ` +
    `(${describeParts(check.parts)})`
  );
}

/**
 * The reason a summary is skipped when its fallback scored under `minFidelity` too: the first
 * summary's {@link lowFidelityReason} (`low`), then the fallback's score and parts.
 */
export function fallbackLowReason(low: string, fallback: string, check: FidelityCheck): string {
  return `${low}; the ${fallback} fallback scored ${check.score} (${describeParts(check.parts)}) too: skipped`;
}
