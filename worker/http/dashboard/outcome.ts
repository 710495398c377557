/**
 * What "compact now" tells a person: one line saying what happened to the compaction it started,
 * from where the job stood when the wait ended (jobs.ts) and, when one was written, its ledger row.
 * Pure.
 */
import type { JobSettlement } from './jobs.ts';

/** What happened, in one word (the API's `outcome`, the page's class). */
export type Outcome = 'applied' | 'skipped' | 'duplicate' | 'batched' | 'failed' | 'running' | 'unknown';

/** The outcome and the line shown for it. */
export interface DescribedOutcome {
  outcome: Outcome;
  message: string;
}

/** What else the line may say. */
export interface OutcomeContext {
  /** How long the request waited, ms (said when the job is still running). */
  waitedMs: number;
  /** Whether the event joined a job of the session that was already waiting. */
  coalesced: boolean;
  /** The ledger row the job wrote, when it names one: its token counts. */
  tokens?: { before: number | null; after: number | null } | null | undefined;
}

/** The outcome of a manual compaction and its line, e.g. `applied: messages 120 → 11, tokens 9,000 → 1,200`. */
export function describeOutcome(settlement: JobSettlement, context: OutcomeContext): DescribedOutcome {
  const described = describe(settlement, context);
  if (!context.coalesced) return described;
  return {
    ...described,
    message: `joined the compaction already waiting for this session; ${described.message}`,
  };
}

function describe(settlement: JobSettlement, context: OutcomeContext): DescribedOutcome {
  switch (settlement.state) {
    case 'failed':
      return { outcome: 'failed', message: `failed: ${clip(settlement.error)}` };
    case 'running': {
      const last = settlement.lastError ? `; the last attempt failed: ${clip(settlement.lastError)}` : '';
      const waited = `${Math.round(context.waitedMs / 100) / 10} s`;
      return {
        outcome: 'running',
        message: `still running after ${waited} (job ${settlement.jobState}${last}); the ledger will show the outcome`,
      };
    }
    case 'unknown':
      return { outcome: 'unknown', message: 'the job is no longer in the queue; see the ledger' };
    case 'completed':
      break;
  }
  const result = settlement.result;
  if (!result) return { outcome: 'unknown', message: 'finished; see the ledger for the outcome' };
  const reason = result.reason ? clip(result.reason) : null;
  if (result.ledgerStatus === 'batched') {
    return { outcome: 'batched', message: reason ?? 'queued for a message batch' };
  }
  if (result.ledgerStatus === 'skipped') {
    const skipped = `skipped: ${reason ?? 'no reason recorded'}`;
    return result.status === 'duplicate'
      ? { outcome: 'duplicate', message: `already decided by an earlier event: ${skipped}` }
      : { outcome: 'skipped', message: skipped };
  }
  const sizes = [`messages ${num(result.messagesBefore)} → ${num(result.messagesAfter)}`];
  if (context.tokens) sizes.push(`tokens ${num(context.tokens.before)} → ${num(context.tokens.after)}`);
  const line = `${result.ledgerStatus}: ${sizes.join(', ')}${reason ? ` (${reason})` : ''}`;
  if (result.status === 'duplicate') {
    return { outcome: 'duplicate', message: `already done by an earlier event: ${line}` };
  }
  return { outcome: result.ledgerStatus === 'applied' ? 'applied' : 'unknown', message: line };
}

function num(v: number | null): string {
  return v === null ? '?' : v.toLocaleString('en-US');
}

/** Error texts can be long (a stack, a provider's body): the line keeps the start. */
function clip(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
