/**
 * The sweep's retention pass: for every session whose effective policy sets `retentionDays`, drop
 * the archived originals older than that (worker/postgres/retention.ts), recording each session's
 * drop as one `expired` ledger row. Only tenants with a policy that sets it are walked, their
 * sessions in keyset order, a page at a time; a session with nothing due costs one index probe.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../../producer/postgres/db.ts';
import { resolvePolicy } from '../../../shared/policy/policy.ts';
import { retentionCutoff } from '../../../shared/policy/retention.ts';
import { PolicyCache } from '../../postgres/policy-cache.ts';
import {
  type ExpiredTotals,
  expirableTotals,
  expireArchivedOriginals,
  tenantSessionPages,
  tenantsWithRetention,
} from '../../postgres/retention.ts';

/** One session's drop, as `compactor sweep` prints it. */
export interface ExpiredSession extends ExpiredTotals {
  tenantId: string;
  sessionId: string;
  retentionDays: number;
  /** Messages archived before this instant were (or, on a dry run, would be) dropped. */
  before: Date;
}

/** What one retention pass did (or, on a dry run, would do). */
export interface RetentionResult {
  /** Sessions whose effective policy sets `retentionDays`. */
  checked: number;
  /** Sessions that lost archived originals (each has one new `expired` ledger row). */
  sessions: number;
  /** Archived messages dropped, and their estimated tokens. */
  messages: number;
  tokens: number;
  ms: number;
  /** The first sessions that lost something (at most 100). */
  sample: ExpiredSession[];
}

/** How {@link runRetention} runs. */
export interface RetentionOptions {
  /** Wall clock, ms since the epoch. */
  now?: () => number;
  /** Only count what would go; delete and record nothing. */
  dryRun?: boolean;
  /** Archived rows deleted per transaction. Default 1,000. */
  batchSize?: number;
  /** Sessions read per page. Default 1,000. */
  pageSize?: number;
}

/** Runs one retention pass over every tenant with a policy that sets `retentionDays`. */
export async function runRetention(db: Db, options: RetentionOptions = {}): Promise<RetentionResult> {
  const started = performance.now();
  const now = options.now ?? Date.now;
  const policies = new PolicyCache(db);
  const result: RetentionResult = { checked: 0, sessions: 0, messages: 0, tokens: 0, ms: 0, sample: [] };
  for (const tenantId of await tenantsWithRetention(db)) {
    for await (const page of tenantSessionPages(db, tenantId, options.pageSize ?? 1_000)) {
      for (const session of page) {
        const found = await policies.get(tenantId, session.agentId);
        const { retentionDays } = resolvePolicy(undefined, found.agent, found.tenant);
        if (retentionDays === undefined) continue;
        result.checked++;
        const before = retentionCutoff(retentionDays, now());
        const totals = options.dryRun
          ? await expirableTotals(db, tenantId, session.id, before)
          : await expireArchivedOriginals(db, {
              tenantId,
              sessionId: session.id,
              retentionDays,
              before,
              batchSize: options.batchSize,
              ledgerRowId: randomUUID(),
            });
        if (totals.messages === 0) continue;
        result.sessions++;
        result.messages += totals.messages;
        result.tokens += totals.tokens;
        if (result.sample.length < 100)
          result.sample.push({ tenantId, sessionId: session.id, retentionDays, before, ...totals });
      }
    }
  }
  result.ms = performance.now() - started;
  return result;
}
