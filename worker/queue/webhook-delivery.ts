/**
 * One webhook delivery attempt over HTTP: POST the body, signed, and tell what came back. No
 * database and no retry: the webhook worker records the attempt and lets BullMQ retry.
 */
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from '../../producer/webhook-signature.ts';

/** What to send. */
export interface DeliveryRequest {
  url: string;
  secret: string;
  /** The event id (the compaction id), sent as `Compactor-Event-Id`. */
  eventId: string;
  /** The exact JSON text to POST and sign. */
  body: string;
  /** How long to wait for the response's status, ms. */
  timeoutMs: number;
  /** Wall clock, ms since the epoch (the signature's timestamp). Default `Date.now`. */
  now?: () => number;
}

/** What one attempt found. */
export interface DeliveryOutcome {
  /** A 2xx response. */
  delivered: boolean;
  /** The response's status, or null when none came. */
  statusCode: number | null;
  /** Why it was not delivered (`HTTP 503 Service Unavailable`, `no response within 10000 ms`); null when delivered. */
  error: string | null;
  /** From sending the request to its response's status (or the failure), ms. */
  durationMs: number;
}

/**
 * POSTs `body` to `url` with `Content-Type: application/json`, `Compactor-Event-Id` and
 * `Compactor-Signature` (producer/webhook-signature.ts). Redirects are not followed (a 3xx is
 * not delivered). Never throws: a refused connection or a timeout is an outcome too.
 */
export async function postWebhook(request: DeliveryRequest): Promise<DeliveryOutcome> {
  const timestampS = Math.floor((request.now ?? Date.now)() / 1000);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(request.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(request.timeoutMs),
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'compactor-webhooks',
        [EVENT_ID_HEADER]: request.eventId,
        [SIGNATURE_HEADER]: signatureHeader(request.body, request.secret, timestampS),
      },
      body: request.body,
    });
    const durationMs = elapsed();
    // The body is not read: only the status counts.
    await response.body?.cancel().catch(() => {});
    const delivered = response.status >= 200 && response.status < 300;
    return {
      delivered,
      statusCode: response.status,
      error: delivered
        ? null
        : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
      durationMs,
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

/** A failed request in one line: the timeout, or the network error's code and message. */
function describeFailure(error: unknown, timeoutMs: number): string {
  const e = error as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no response within ${timeoutMs} ms`;
  const cause = e?.cause;
  if (cause?.code) return `request failed: ${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return `request failed: ${e?.message ?? String(error)}`;
}
