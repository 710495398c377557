/**
 * What follows an applied compaction, wherever it was applied (the compaction worker, the message
 * batch poller): `session.compacted` on the `session-events` queue, then, when the tenant has an
 * enabled webhook, its delivery job on the `webhooks` queue, with the same event as body. Both
 * jobs are keyed by the compaction id, so telling one compaction twice adds nothing.
 */
import type { CompactionRow } from '../../../producer/postgres/schema.ts';
import type { Checkpoint } from '../../../shared/summary/checkpoint.ts';
import { watchWebhookPresence } from '../../postgres/webhook-presence.ts';
import { checkpointOf } from '../../postgres/webhooks.ts';
import { runAll, type Services } from '../../runtime/services.ts';
import { createWebhookEnqueuer } from '../webhooks/webhook-queue.ts';
import { createSessionEventsPublisher } from './session-events.ts';

/** The hook of `ProcessorDeps.onApplied` and `PollDeps.onApplied`, and what it holds open. */
export interface AppliedHooks {
  /**
   * Tells an applied ledger row (other rows are ignored). `checkpoint` is the one the apply wrote
   * (`WriteResult.checkpoint`); without it (a duplicate told again) the session's is read back.
   * @throws when the queue or Postgres fails: the caller's job retries and tells it again.
   */
  onApplied(row: CompactionRow, checkpoint?: Checkpoint | null): Promise<void>;
  /** Closes the queues (not the services' connections). */
  close(): Promise<void>;
}

/**
 * The hooks on `services`' queues, Postgres and config.
 * @param options.poolSize the session-events queue's pool on the `postgres` backend (default 3,
 *   `DEFAULT_QUEUE_POOL_SIZE`): a worker sizes it from its concurrency, as it publishes once per job.
 */
export function createAppliedHooks(services: Services, options: { poolSize?: number } = {}): AppliedHooks {
  const { config } = services;
  const publisher = createSessionEventsPublisher(services.queues, options);
  const presence = watchWebhookPresence(services.database.db, services.database.sql);
  const webhooks = createWebhookEnqueuer(services.queues, services.database.db, {
    backoffMs: config.webhookBackoffMs,
  });
  return {
    async onApplied(row, written) {
      if (row.status !== 'applied') return;
      // Only a summary writes a checkpoint; a sliding window's event carries none.
      const checkpoint =
        row.summary === null
          ? null
          : (written ??
            (await checkpointOf(services.database.db, row.tenantId, row.childSessionId ?? row.sessionId)));
      const event = await publisher.compacted(row, checkpoint);
      if (event && (await presence.has(row.tenantId))) await webhooks.enqueue(event, true);
    },
    close: () =>
      runAll(services.logger, [() => publisher.close(), () => webhooks.close(), () => presence.close()]),
  };
}
