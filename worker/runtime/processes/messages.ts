/**
 * The messages between the primary of `compactor worker --processes N` and its worker processes,
 * over Node's cluster IPC channel (prom-client's metric requests travel on the same channel with
 * types of their own). Stopping needs no message: the primary forwards the signal itself.
 */
import type { Readiness } from '../../observability/health.ts';

/** The primary asks a worker process for its readiness. */
export interface ReadinessRequest {
  type: 'compactor:readiness-request';
  id: number;
}

/** A worker process answers: its readiness, or null while it is still starting. */
export interface ReadinessAnswer {
  type: 'compactor:readiness';
  id: number;
  readiness: Readiness | null;
}

/** Whether an IPC message is a {@link ReadinessRequest}. */
export function isReadinessRequest(message: unknown): message is ReadinessRequest {
  return (message as ReadinessRequest | null)?.type === 'compactor:readiness-request';
}

/** Whether an IPC message is a {@link ReadinessAnswer}. */
export function isReadinessAnswer(message: unknown): message is ReadinessAnswer {
  return (message as ReadinessAnswer | null)?.type === 'compactor:readiness';
}
