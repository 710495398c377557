/**
 * A strategy that writes no summary: nothing to pay for twice, so no lease. The session is read
 * under its row lock, planned and written in that one transaction (`FencedWrites.applyUnderLock`).
 */

import type { Plan } from '../../shared/planning/types.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import type { CompactionOutcome, PipelineDeps } from './deps.ts';
import { contentSeqsOf, decide, observe, type Run } from './run.ts';

/**
 * Reads, plans and writes `run` in one transaction under the row lock.
 * @param seenVersion the compaction version the gate read (the adapter reads again if it moved).
 * @throws as `FencedWrites.applyUnderLock`.
 */
export async function compactUnderLock(
  deps: PipelineDeps,
  run: Run,
  seenVersion: number,
): Promise<CompactionOutcome> {
  const { request } = run;
  let plan = null as Plan | null;
  const start = deps.clock.now();
  let decided = start;
  const result = await deps.writes.applyUnderLock(
    {
      tenantId: request.tenantId,
      sessionId: request.sessionId,
      idempotencyKey: request.idempotencyKey,
      seenVersion,
      contentSeqs: contentSeqsOf(run.policy.strategy),
    },
    (snapshot) => {
      const planning = deps.clock.now();
      observe(deps, { type: 'stage', stage: 'snapshot', ms: planning - start });
      plan = planCompaction(snapshot, snapshot.messages, run.policy.strategy);
      const decision = decide(deps, run, snapshot, plan);
      decided = deps.clock.now();
      observe(deps, { type: 'stage', stage: 'plan', ms: decided - planning });
      return decision;
    },
  );
  if (plan !== null) observe(deps, { type: 'stage', stage: 'apply', ms: deps.clock.now() - decided });
  return { ...result, plan };
}
