/**
 * `/readyz` of `compactor worker --processes N`: the primary asks every worker process for its own
 * readiness (health.ts) and serves one answer, ready only when all N answered ready. Pure.
 */
import type { Readiness, ReadinessCheck } from './health.ts';

/**
 * The primary's readiness: whether all processes answered (`processes`), and each dependency's
 * worst answer among them (absent while none has answered: the primary does not know).
 */
export interface ProcessesReadiness {
  ready: boolean;
  checks: { redis?: ReadinessCheck; postgres?: ReadinessCheck; processes: ReadinessCheck };
}

/**
 * Merges the answers of the worker processes (null: a process that is not running, still starting,
 * or did not answer in time) into one report for `expected` processes. A dependency is ok when every
 * answer says so; its ms is the slowest answer's, its error the first failing one's.
 */
export function mergeReadiness(expected: number, answers: readonly (Readiness | null)[]): ProcessesReadiness {
  const got = answers.filter((a): a is Readiness => a !== null);
  const missing = Math.max(0, expected - got.length);
  const processes: ReadinessCheck = {
    ok: missing === 0,
    ms: 0,
    ...(missing === 0
      ? {}
      : { error: `${missing} of ${expected} worker processes not running or not answering` }),
  };
  const postgres = worst(got.map((a) => a.checks.postgres));
  const redisChecks = got.map((a) => a.checks.redis).filter((c): c is ReadinessCheck => c !== undefined);
  const redis = worst(redisChecks);
  const ready = processes.ok && got.every((a) => a.ready);
  return { ready, checks: { ...(redis ? { redis } : {}), ...(postgres ? { postgres } : {}), processes } };
}

/** One check standing for several: ok when all are, the slowest ms, the first error. */
function worst(checks: readonly ReadinessCheck[]): ReadinessCheck | undefined {
  if (checks.length === 0) return undefined;
  const failed = checks.find((c) => !c.ok);
  const ms = Math.max(...checks.map((c) => c.ms));
  return failed ? { ok: false, ms, ...(failed.error ? { error: failed.error } : {}) } : { ok: true, ms };
}
