/**
 * `compactor doctor`: where this environment's queue is, and whether a worker listens there. One
 * line each for the database, its migrations and the queue backend, one per queue (waiting,
 * active, failed, live workers), and one that names a mismatch when the live workers listen on
 * another queue than this environment's (the producer's rule reads the same environment).
 */
import { WEBHOOKS_QUEUE } from '../../../shared/contract/webhooks.ts';
import { COMPACTION_QUEUE, SESSION_EVENTS_QUEUE } from '../../../shared/protocol/events.ts';
import {
  describePlace,
  type LiveWorker,
  mismatchOf,
  samePlace,
  WORKER_STALE_AFTER_MS,
} from '../../../shared/protocol/queue-workers.ts';
import { SWEEP_QUEUE } from '../../queue/sweeps/sweep.ts';
import { type InstallReport, inspectInstall } from '../../runtime/doctor.ts';
import type { CommandContext, ParsedArgs } from '../command.ts';
import { terminalText } from '../format.ts';

/** The queues the doctor counts, in the order it prints them. */
const QUEUES = [COMPACTION_QUEUE, WEBHOOKS_QUEUE, SWEEP_QUEUE, SESSION_EVENTS_QUEUE];

/** Runs `compactor doctor` (its spec, flags and help: specs/doctor.ts); resolves with the exit code. */
export async function runDoctor(_args: ParsedArgs, context: CommandContext): Promise<number> {
  const report = await inspectInstall(context.config(), QUEUES, WORKER_STALE_AFTER_MS);
  const { lines, ok } = doctorLines(report, WORKER_STALE_AFTER_MS);
  context.stdout.write(`${lines.map((line) => terminalText(line)).join('\n')}\n`);
  return ok ? 0 : 1;
}

/**
 * The doctor's lines for `report`, and whether all is well: the database answered and no
 * mismatch (live workers, none at this environment's queue).
 */
export function doctorLines(report: InstallReport, staleAfterMs: number): { lines: string[]; ok: boolean } {
  const lines: string[] = [];
  const { migrations, workers } = report;
  const reachable = !('error' in migrations);
  lines.push(
    `database: ${report.database.url} schema "${report.database.schema}": ${reachable ? 'reachable' : `unreachable (${migrations.error})`}`,
  );
  if (reachable) {
    const pending = migrations.shipped - migrations.applied;
    lines.push(
      `migrations: ${migrations.applied} of ${migrations.shipped} applied${pending > 0 ? ` (${pending} pending: run \`compactor migrate\`, or start \`compactor worker\`, which applies them)` : ''}`,
    );
  }
  lines.push(`queue backend: ${describePlace(report.queues)}`);
  const live = 'error' in workers ? [] : workers;
  for (const counts of report.counts) {
    const here = live.filter((w) => w.queues.includes(counts.name) && samePlace(w, report.queues));
    const jobs =
      'error' in counts
        ? `unreachable (${counts.error})`
        : `waiting ${counts.waiting}, active ${counts.active}, failed ${counts.failed}`;
    lines.push(`queue ${counts.name}: ${jobs}; live workers: ${describeIds(here, counts.name)}`);
  }
  if ('error' in workers) lines.push(`workers: the registry could not be read (${workers.error})`);
  const mismatch =
    live.length > 0
      ? mismatchOf(report.queues, COMPACTION_QUEUE, live, { who: 'this environment', staleAfterMs })
      : null;
  if (mismatch) lines.push(mismatch);
  else if (live.length === 0 && !('error' in workers))
    lines.push(
      `workers: none live in the last ${Math.round(staleAfterMs / 1000)} s (start \`compactor worker\`)`,
    );
  else if (!('error' in workers)) lines.push('match: the live workers take compaction jobs from this queue');
  return { lines, ok: reachable && mismatch === null };
}

/** The workers' ids, or what consumes the queue when none of compactor's does. */
function describeIds(workers: LiveWorker[], queue: string): string {
  if (workers.length > 0) return `${workers.length} (${workers.map((w) => w.id).join(', ')})`;
  return queue === SESSION_EVENTS_QUEUE ? "none (your service's subscriber reads it)" : 'none';
}
