/**
 * One webhook delivery attempt over HTTP: POST the body, signed, through the address policy's
 * agents, and tell what came back. No database and no retry: the webhook worker records the
 * attempt and lets BullMQ retry.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { webhookHeaders } from '../../../producer/webhook-signature.ts';
import { DELIVERY_FAILURES } from '../../../shared/contract/webhooks.ts';
import {
  checkWebhookUrl,
  isAddressRefusal,
  type WebhookAgents,
  WebhookTargetError,
  type WebhookTargetPolicy,
} from '../../outbound/webhook-targets.ts';

/** What to send. */
export interface DeliveryRequest {
  url: string;
  secret: string;
  /** The `webhook-id` (derived from the tenant and the compaction id: `webhookMessageId`). */
  messageId: string;
  /** The exact JSON text to POST and sign. */
  body: string;
  /** How long to wait for the response's status, ms. */
  timeoutMs: number;
  /** The operator's address policy, and the agents that enforce it as each connection is made. */
  targets: { policy: WebhookTargetPolicy; agents: WebhookAgents };
  /** Wall clock, ms since the epoch (the signature's timestamp). Default `Date.now`. */
  now?: () => number;
  /**
   * Resolves the host for the connection (its answer is what the agent checks and connects to);
   * default `dns.lookup`. Tests hand in their own.
   */
  lookup?: LookupFunction | undefined;
}

/** What one attempt found. */
export interface DeliveryOutcome {
  /** A 2xx response. */
  delivered: boolean;
  /** The response's status, or null when none came. */
  statusCode: number | null;
  /**
   * Why it was not delivered, for the operator: `HTTP 503 Service Unavailable`, or a class of
   * `DELIVERY_FAILURES` and its detail (`connection failed: ECONNREFUSED 10.0.0.5:443`,
   * `timed out: no response within 10000 ms`); null when delivered. A tenant is shown only the
   * class (`tenantDeliveryError`).
   */
  error: string | null;
  /** From sending the request to its response's status (or the failure), ms. */
  durationMs: number;
}

/**
 * POSTs `body` to `url` with `Content-Type: application/json` and the Standard Webhooks headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`; producer/webhook-signature.ts). The URL
 * is checked against the address policy first, and the connection's resolved address as it is
 * made. Redirects are not followed (a 3xx is not delivered). Never throws: a refused address, a
 * refused connection or a timeout is an outcome too.
 */
export async function postWebhook(request: DeliveryRequest): Promise<DeliveryOutcome> {
  const timestampS = Math.floor((request.now ?? Date.now)() / 1000);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    checkWebhookUrl(request.url, request.targets.policy);
    const url = new URL(request.url);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'compactor-webhooks',
      ...webhookHeaders(request.messageId, timestampS, request.body, request.secret),
    };
    const response = await send(url, request, headers);
    const delivered = response.status >= 200 && response.status < 300;
    return {
      delivered,
      statusCode: response.status,
      error: delivered
        ? null
        : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
      durationMs: elapsed(),
    };
  } catch (error) {
    return {
      delivered: false,
      statusCode: null,
      error: describeFailure(error, request.timeoutMs),
      durationMs: elapsed(),
    };
  }
}

/**
 * One POST through the policy's agent; resolves with the response's status as soon as it comes (the
 * response body is not read), rejects on a refused address, a network error or the timeout.
 */
function send(
  url: URL,
  request: DeliveryRequest,
  headers: Record<string, string>,
): Promise<{ status: number; statusText: string }> {
  const { body, timeoutMs } = request;
  const post = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new TimedOut()), timeoutMs);
  return new Promise<{ status: number; statusText: string }>((resolve, reject) => {
    const req = post(
      url,
      {
        method: 'POST',
        agent: request.targets.agents.for(url),
        ...withLookup(request.targets.agents.lookup(request.lookup)),
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        signal: abort.signal,
      },
      (response) => {
        resolve({ status: response.statusCode ?? 0, statusText: response.statusMessage ?? '' });
        response.destroy();
      },
    );
    req.on('error', (error) => reject(abort.signal.aborted ? new TimedOut() : error));
    req.end(body);
  }).finally(() => clearTimeout(timer));
}

/** The request option `lookup`, when there is one to give. */
function withLookup(lookup: LookupFunction | undefined): { lookup?: LookupFunction } {
  return lookup ? { lookup } : {};
}

class TimedOut extends Error {
  override name = 'TimeoutError';
}

/** A failed request in one line: its class (`DELIVERY_FAILURES`), then the detail for the operator. */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof TimedOut) return `${DELIVERY_FAILURES.timedOut}: no response within ${timeoutMs} ms`;
  if (error instanceof WebhookTargetError || isAddressRefusal(error)) {
    return `${DELIVERY_FAILURES.refusedByPolicy}: ${(error as Error).message}`;
  }
  const e = error as Error & { code?: string };
  return `${DELIVERY_FAILURES.connectionFailed}: ${e?.code ? `${e.code} ` : ''}${e?.message ?? String(error)}`;
}
