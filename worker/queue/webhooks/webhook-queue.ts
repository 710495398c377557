/**
 * Enqueues webhook deliveries: after an applied compaction, one job on the `webhooks` queue when
 * the tenant has an enabled webhook. The job id is the compaction id, so an event told twice (a
 * compaction job retried after it committed) adds no second job. The job carries the exact body,
 * so every attempt sends (and signs) the same bytes.
 */
import type { Db } from '../../../producer/postgres/db.ts';
import type { QueueBackend } from '../../../producer/queue/backend.ts';
import {
  WEBHOOK_ATTEMPTS,
  WEBHOOK_DELIVERY,
  WEBHOOKS_QUEUE,
  type WebhookJob,
} from '../../../shared/contract/webhooks.ts';
import { jobIdOf, keepCompletedFor, type SessionCompactedEvent } from '../../../shared/protocol/events.ts';
import { hasEnabledWebhook } from '../../postgres/webhooks.ts';

/** Adds delivery jobs. */
export interface WebhookEnqueuer {
  /**
   * Enqueues the delivery of `event` when its tenant has an enabled webhook (`hasWebhook`, when the
   * caller read it already; else read here).
   * @returns whether a job was asked for (false: no enabled webhook).
   * @throws when the queue or Postgres cannot be reached (the caller's job retries).
   */
  enqueue(event: SessionCompactedEvent, hasWebhook?: boolean): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * An enqueuer on the backend's `queues` (a shared Redis connection is not closed by it).
 * @param options.backoffMs the first retry's delay, ms; doubling after each failed attempt.
 */
export function createWebhookEnqueuer(
  queues: QueueBackend,
  db: Db,
  options: { backoffMs: number },
): WebhookEnqueuer {
  // Enqueued after an apply, before the job (or batch row) that applied it is finished: that commit
  // makes the add durable, and a finish lost with it tells the compaction again.
  const link = queues.link({ shared: true, asyncCommit: true });
  const queue = new queues.Queue(WEBHOOKS_QUEUE, {
    ...link.options,
    defaultJobOptions: {
      attempts: WEBHOOK_ATTEMPTS,
      backoff: { type: 'exponential', delay: options.backoffMs },
      removeOnComplete: keepCompletedFor(queues.kind),
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
  queue.on('error', () => {});
  return {
    async enqueue(event, hasWebhook) {
      if (!(hasWebhook ?? (await hasEnabledWebhook(db, event.tenantId)))) return false;
      const data: WebhookJob = {
        tenantId: event.tenantId,
        eventId: event.compactionId,
        body: JSON.stringify(event),
      };
      await queue.add(WEBHOOK_DELIVERY, data, { jobId: jobIdOf(event.tenantId, event.compactionId) });
      return true;
    },
    close: () => queue.close().finally(() => link.close()),
  };
}
