/**
 * `compactor compact`: compacts one session now, in-process, through the pipeline; `--dry-run`
 * shows what would happen and writes nothing.
 */

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertSchema } from '../../../producer/postgres/db.ts';
import {
  isPermanent,
  LeaseBusyError,
  RateLimitedError,
  TransientError,
  toError,
} from '../../../shared/contract/errors.ts';
import type { EffectivePolicy } from '../../../shared/policy/policy.ts';
import { type Strategy, strategyUnit, summaryInstructionsSchema } from '../../../shared/strategies/index.ts';
import { explainStays, type Plan, type StayReason } from '../../../shared/strategies/plan.ts';
import { systemClock } from '../../pipeline/clock.ts';
import { afterLastAttempt } from '../../pipeline/last-attempt.ts';
import {
  type CompactionOutcome,
  previewCompaction as preview,
  runCompaction,
} from '../../pipeline/pipeline.ts';
import {
  IN_PROCESS_ATTEMPTS,
  type InProcessRetryOptions,
  inProcessRetry,
} from '../../queue/compaction/job-actions.ts';
import { openServices, type Services } from '../../runtime/services.ts';
import { type CommandContext, flag, optionalText, type ParsedArgs, text, UsageError } from '../command.ts';
import { formatCount, jsonLine, seqRanges, terminalText } from '../format.ts';
import { strategyOption } from '../strategy-option.ts';

/** What `compact --dry-run` reports; `--json` prints it as is. */
export interface CompactionPreview {
  dryRun: true;
  tenantId: string;
  sessionId: string;
  /** The strategy that would run. */
  strategy: Strategy;
  /** Where it comes from: the `--strategy` override, the agent's or tenant's policy, the default. */
  policy: {
    source: EffectivePolicy['source'] | 'override';
    mode: EffectivePolicy['mode'];
    triggers: EffectivePolicy['triggers'];
  };
  /** Highest seq the plan saw. */
  snapshotSeq: number;
  plan: Plan;
  /** Messages at or below the cutoff that stay, each with its reason (compact plans only). */
  stays: StayReason[];
}

/**
 * Plans a compaction of the session without writing anything: the policy in force (or the
 * `strategy` override), the session's snapshot, and the plan the pipeline would carry out now.
 * The one place the dry run decides anything, so it can follow the pipeline's planning exactly.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function previewCompaction(
  services: Pick<Services, 'reads'>,
  request: {
    tenantId: string;
    sessionId: string;
    strategy?: Strategy | undefined;
    instructions?: string | undefined;
  },
): Promise<CompactionPreview> {
  const { tenantId, sessionId } = request;
  const { policy, snapshot, plan } = await preview(services.reads, request);
  const { strategy, source, mode, triggers } = policy;
  const stays = plan.action === 'compact' ? explainStays(snapshot.messages, plan) : [];
  return {
    dryRun: true,
    tenantId,
    sessionId,
    strategy,
    policy: { source: request.strategy ? 'override' : source, mode, triggers },
    snapshotSeq: snapshot.snapshotSeq,
    plan,
    stays,
  };
}

/**
 * The `--instructions` text, trimmed, or undefined when absent; validated like the strategy's
 * `instructions` field.
 * @throws {UsageError} naming the option and what is wrong with the text.
 */
export function instructionsOption(args: ParsedArgs): string | undefined {
  const value = optionalText(args, 'instructions');
  if (value === undefined) return undefined;
  const parsed = summaryInstructionsSchema.safeParse(value);
  if (!parsed.success)
    throw new UsageError(`--instructions: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

/** A strategy in the `--strategy` shorthand where it has one, plus what the shorthand leaves out. */
export function strategyLabel(strategy: Strategy): string {
  return strategyUnit(strategy).describe(strategy);
}

/**
 * The preview for people: which seqs leave and which stay below the cutoff, as ranges
 * (`1-34, 36-69`), and why the cutoff sits where it does. Ids and stored text are escaped
 * ({@link terminalText}).
 * @returns lines without newlines.
 */
export function previewLines(preview: CompactionPreview): string[] {
  const { plan, policy } = preview;
  const label = (name: string) => name.padEnd(9);
  const lines = [
    `dry run: session "${preview.sessionId}" of tenant "${preview.tenantId}", up to seq ${preview.snapshotSeq}; nothing written`,
    `${label('strategy')}${strategyLabel(preview.strategy)}`,
    `${label('policy')}${policy.source}, mode ${policy.mode}, triggers ${JSON.stringify(policy.triggers)}`,
  ];
  if (plan.action === 'skip') {
    lines.push(`${label('plan')}skip: ${plan.reason}`);
    return lines.map(terminalText);
  }
  if (plan.clearing) {
    const { rewrites, tokensFreed } = plan.clearing;
    lines.push(
      `${label('plan')}${rewrites.length} messages rewritten in place (${formatCount(tokensFreed)} tokens freed), none leave`,
      `${label('cleared')}${seqRanges(rewrites.map((r) => r.seq))}`,
    );
    plan.notes.forEach((note, i) => {
      lines.push(`${label(i === 0 ? 'why' : '')}${note}`);
    });
    return lines.map(terminalText);
  }
  lines.push(
    `${label('plan')}${plan.leavingSeqs.length} messages leave (${formatCount(plan.leavingTokens)} tokens), ${plan.keptCount} stay`,
    `${label('leaving')}${seqRanges(plan.leavingSeqs)}`,
  );
  if (plan.summarySeq !== null)
    lines.push(
      `${label('summary')}covers ${seqRanges(plan.coverSeqs) || 'nothing new'}; written at seq ${plan.summarySeq}`,
    );
  const byReason = new Map<string, number[]>();
  for (const s of preview.stays) byReason.set(s.reason, [...(byReason.get(s.reason) ?? []), s.seq]);
  const stays = [...byReason].map(([reason, seqs]) => `${seqRanges(seqs)} (${reason})`);
  lines.push(`${label('stays')}${[...stays, `above ${plan.cutoffSeq} (the kept window)`].join('; ')}`);
  plan.notes.forEach((note, i) => {
    lines.push(`${label(i === 0 ? 'why' : '')}${note}`);
  });
  return lines.map(terminalText);
}

/**
 * Runs `attempt` until it succeeds, waiting between attempts as the worker's table says
 * ({@link inProcessRetry}: a 429's retry-after, the jobs' exponential backoff for a 529, a 5xx or
 * a lost connection), at most {@link IN_PROCESS_ATTEMPTS} times; a permanent error is thrown at once.
 * @param progress receives one line per wait (see {@link retryLine}).
 * @throws the last error, when it is permanent or no attempt is left.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  progress: (line: string) => void,
  options: InProcessRetryOptions = { leaseBusyDelayMs: 1_000, random: Math.random },
): Promise<T> {
  const attempts = options.attempts ?? IN_PROCESS_ATTEMPTS;
  let backoffs = 0;
  for (let k = 1; ; k++) {
    try {
      return await attempt();
    } catch (thrown) {
      const error = toError(thrown);
      const wait = inProcessRetry(error, { attempt: k, backoffs }, { ...options, attempts });
      if (wait === null) throw error;
      if (wait.backoff) backoffs++;
      progress(retryLine(error, wait.ms, k + 1, attempts));
      await sleep(wait.ms);
    }
  }
}

/**
 * The progress line of a wait before a retry, e.g. `429 from the Messages API: retrying in 1 s
 * (attempt 2 of 5)`.
 * @param waitMs the wait, ms (shown in s).
 * @param next the attempt about to run, 1-based, of `attempts`.
 */
export function retryLine(error: Error, waitMs: number, next: number, attempts: number): string {
  return `${retryCause(error)}: retrying in ${Number((waitMs / 1000).toFixed(1))} s (attempt ${next} of ${attempts})`;
}

/** What went wrong, in a few words: the Messages API's status where there is one. */
function retryCause(error: Error): string {
  if (error instanceof RateLimitedError) return '429 from the Messages API';
  if (error instanceof TransientError && error.status !== null)
    return `${error.status} from the Messages API`;
  if (error instanceof LeaseBusyError) return 'another worker is compacting the session';
  return error.message.split('\n')[0] ?? error.name;
}

/** Runs `compactor compact` (its spec, flags and help: specs/compact.ts); resolves with the exit code. */
export async function runCompact(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const sessionId = text(args, 'session');
  const override = strategyOption(args);
  const instructions = instructionsOption(args);
  const c = context.config();
  const services = openServices(c, context.logger(c.logLevel), { poolSize: 2, listenForPolicies: false });
  try {
    await assertSchema(services.database);
    if (flag(args, 'dry-run')) {
      const preview = await previewCompaction(services, {
        tenantId,
        sessionId,
        strategy: override,
        instructions,
      });
      context.stdout.write(
        flag(args, 'json') ? `${jsonLine(preview, 2)}\n` : `${previewLines(preview).join('\n')}\n`,
      );
      return 0;
    }
    // One key for every attempt: an attempt that applied and then failed to answer makes the
    // next one a duplicate that returns its row, so the compaction applies once.
    const request = {
      tenantId,
      sessionId,
      strategy: override,
      instructions,
      trigger: 'manual' as const,
      idempotencyKey: `manual:${randomUUID()}`,
      eventId: null,
    };
    const deps = { ...services, clock: systemClock };
    let outcome: CompactionOutcome;
    try {
      outcome = await withRetries(
        () => runCompaction(deps, request),
        (line) => context.stderr.write(`${terminalText(line)}\n`),
      );
    } catch (thrown) {
      // Retries used up: as a job's last attempt, the strategy's fallback summarizer, else a failed
      // ledger row. An error no retry can fix (bad input, a bad key, an unknown session) is the
      // caller's to fix and changes nothing; nor does a session another process is compacting.
      const error = toError(thrown);
      if (error instanceof LeaseBusyError || isPermanent(error)) throw error;
      const fallen = await afterLastAttempt(deps, request, error, services.logger);
      if (!fallen) throw error;
      outcome = fallen;
    }
    // A manual compaction never batches: it always has its ledger row.
    context.stdout.write(`${jsonLine(outcome.row)}\n`);
    return 0;
  } finally {
    await services.close();
  }
}
