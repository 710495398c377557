/**
 * The webhook worker: a BullMQ Worker on the `webhooks` queue. Each job is one event for one
 * tenant: it reads the tenant's webhook now (a URL or secret changed since the event still
 * applies; a webhook removed or disabled since ends the job without a request), makes one attempt,
 * records it in `webhook_deliveries`, and throws unless the receiver answered 2xx, so BullMQ
 * retries it with exponential backoff, 8 attempts in all. Receivers may see an event more than once
 * (a lost response, a crash after the POST): they dedupe by `webhook-id`, which is derived from the
 * tenant and the compaction id and signed. Every request goes through the operator's address policy
 * (worker/outbound/webhook-targets.ts), checked again as it connects.
 */
import type { LookupFunction } from 'node:net';
import { type Job, UnrecoverableError, type Worker } from 'bullmq';
import {
  WEBHOOK_ATTEMPTS,
  WEBHOOKS_QUEUE,
  webhookJobSchema,
  webhookMessageId,
} from '../../../shared/contract/webhooks.ts';
import { describeZodError } from '../../../shared/protocol/events.ts';
import { STRICT_WEBHOOK_TARGETS, webhookAgents } from '../../outbound/webhook-targets.ts';
import { recordDelivery, webhookForDelivery } from '../../postgres/webhooks.ts';
import { runAll, type Services } from '../../runtime/services.ts';
import { postWebhook } from './webhook-delivery.ts';

/** What a finished delivery job returns (BullMQ's `returnvalue`). */
export interface WebhookJobResult {
  /** False when the tenant had no enabled webhook any more: nothing was sent. */
  delivered: boolean;
  attempt: number;
  statusCode: number | null;
}

/** How {@link startWebhookWorker} runs. */
export interface WebhookWorkerOptions {
  /** Deliveries at once. Default 8. */
  concurrency?: number;
  /** Resolves receivers' host names for each connection; default `dns.lookup` (tests hand in their own). */
  lookup?: LookupFunction;
}

/** A running webhook worker. */
export interface WebhookWorker {
  worker: Worker<unknown, WebhookJobResult>;
  /** Stops taking jobs and waits for the running deliveries (unless `force`). Memoized. */
  close(force?: boolean): Promise<void>;
}

/**
 * Starts a webhook worker on `services` (a queue connection of its own, their Postgres pool
 * shared; they are not closed by it). Requests time out after `config.webhookTimeoutMs` and reach only what
 * `config.webhookTargets` allows (default: public https receivers).
 */
export function startWebhookWorker(services: Services, options: WebhookWorkerOptions = {}): WebhookWorker {
  const { config, logger } = services;
  const db = services.database.db;
  const link = services.queues.link({ poolSize: 4 });
  const policy = config.webhookTargets ?? STRICT_WEBHOOK_TARGETS;
  const targets = { policy, agents: webhookAgents(policy) };
  const deliver = async (job: Job): Promise<WebhookJobResult> => {
    const parsed = webhookJobSchema.safeParse(job.data);
    if (!parsed.success)
      throw new UnrecoverableError(`invalid webhook job: ${describeZodError(parsed.error, 'job')}`);
    const { tenantId, eventId, body } = parsed.data;
    const attempt = job.attemptsMade + 1;
    const webhook = await webhookForDelivery(db, tenantId);
    if (!webhook) {
      logger.info({ tenantId, eventId }, 'webhook removed or disabled since the event; nothing sent');
      return { delivered: false, attempt, statusCode: null };
    }
    const outcome = await postWebhook({
      ...webhook,
      messageId: webhookMessageId(tenantId, eventId),
      body,
      timeoutMs: config.webhookTimeoutMs,
      targets,
      lookup: options.lookup,
    });
    try {
      await recordDelivery(db, { tenantId, eventId, attempt, url: webhook.url, ...outcome });
    } catch (error) {
      // A delivered event is not sent again because its log row could not be written.
      logger.warn({ tenantId, eventId, attempt, err: error }, 'webhook delivery not recorded');
    }
    if (!outcome.delivered) {
      throw new Error(
        `webhook delivery attempt ${attempt} of ${job.opts.attempts ?? WEBHOOK_ATTEMPTS} failed: ${outcome.error}`,
      );
    }
    logger.info(
      { tenantId, eventId, attempt, statusCode: outcome.statusCode, ms: outcome.durationMs },
      'webhook delivered',
    );
    return { delivered: true, attempt, statusCode: outcome.statusCode };
  };
  const worker = new services.queues.Worker<unknown, WebhookJobResult>(WEBHOOKS_QUEUE, deliver, {
    ...link.options,
    concurrency: options.concurrency ?? 8,
    // A job's lock must outlive its request.
    lockDuration: Math.max(config.lockDurationMs, config.webhookTimeoutMs + 10_000),
    stalledInterval: config.stalledIntervalMs,
  });
  services.queueState.watch(worker, 'webhook worker');
  worker.on('failed', (job, error) => {
    const final = !job || error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    const { tenantId, eventId } = (job?.data ?? {}) as { tenantId?: string; eventId?: string };
    logger.warn(
      { tenantId, eventId, attemptsMade: job?.attemptsMade, final, err: error },
      'webhook delivery failed',
    );
  });
  let closing: Promise<void> | undefined;
  return {
    worker,
    close: (force = false) => {
      closing ??= runAll(logger, [
        () => worker.close(force),
        () => link.close(),
        async () => targets.agents.destroy(),
      ]);
      return closing;
    },
  };
}
