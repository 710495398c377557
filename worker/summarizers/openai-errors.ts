/**
 * Maps errors of the `openai` SDK to compactor's retry policy, the same as the Anthropic
 * summarizer's (./anthropic-errors.ts): 429 honours retry-after, 5xx and timeouts back off, 4xx
 * other than 429 fail clearly.
 *
 * - a request that can never succeed as sent (400, 401, 402, 403, 404, 413, 422; a 429 whose code
 *   is `insufficient_quota`, which no wait fixes) becomes a {@link SummarizerConfigError}: permanent,
 *   the worker fails the job;
 * - 429 becomes a {@link RateLimitedError} carrying the server's `retry-after-ms`/`retry-after`;
 * - 408, 409, 5xx, connection errors, timeouts and a 2xx body that is not JSON become a
 *   {@link TransientError}: BullMQ retries with backoff;
 * - anything else (a caller's abort included) is returned unchanged.
 *
 * Every mapped error keeps the server's request id (`x-request-id`) in its message and the SDK
 * error as `cause`. {@link isResponseFormatUnsupported} recognizes the 400 of a server without
 * structured outputs, which the summarizer answers by asking for a forced tool call instead.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { RateLimitedError, SummarizerConfigError, TransientError } from '../../shared/contract/errors.ts';
import { parseRetryAfterMs } from './retry-after.ts';

/** What the mapping may mention in its messages. */
export interface OpenAIErrorContext {
  /** The model the request asked for. */
  model?: string | undefined;
  /** The endpoint the client called (its `baseURL`): an unreachable server is named by its host. */
  baseURL?: string | undefined;
  /** Clock for an HTTP-date `retry-after`, ms since the epoch; default `Date.now()`. */
  nowMs?: number | undefined;
}

/** 429 codes that no wait of seconds can fix: someone must add credit or raise a limit. */
const QUOTA_CODES = new Set(['insufficient_quota', 'billing_hard_limit_reached']);

/**
 * Maps an error thrown by `client.chat.completions.create` to the error compactor throws. Returns,
 * never throws: use as `throw mapOpenAIError(error, { model })`.
 */
export function mapOpenAIError(error: unknown, context: OpenAIErrorContext = {}): unknown {
  if (error instanceof APIUserAbortError) return error;
  const at = hostOf(context.baseURL);
  const server = `OpenAI-compatible API${at ? ` at ${at}` : ''}`;
  if (error instanceof APIConnectionError) {
    return new TransientError(`${server} unreachable: ${error.message}`, {
      status: null,
      requestId: null,
      cause: error,
    });
  }
  if (error instanceof SyntaxError) {
    return new TransientError(`${server} returned a body that is not valid JSON: ${error.message}`, {
      status: null,
      requestId: null,
      cause: error,
    });
  }
  if (!(error instanceof APIError) || typeof error.status !== 'number') return error;
  const status = error.status;
  const requestId = error.requestID ?? null;
  const detail = describe(error, requestId);
  const model = context.model ? `"${context.model}"` : 'the configured model';
  if (status === 429) {
    if (error.code && QUOTA_CODES.has(error.code)) {
      return new SummarizerConfigError(
        `${server} quota exhausted ${detail}: add credit or raise the limit, or use another summarizer until then`,
        { cause: error },
      );
    }
    const retryAfterMs = parseRetryAfterMs(error.headers, context.nowMs ?? Date.now());
    const wait = retryAfterMs === null ? 'no retry-after given' : `retry after ${retryAfterMs} ms`;
    return new RateLimitedError(`${server} rate limit ${detail}; ${wait}`, {
      retryAfterMs,
      requestId,
      cause: error,
    });
  }
  const fix = CONFIG_FIXES[status];
  if (fix)
    return new SummarizerConfigError(`${server} rejected the request ${detail}: ${fix(model)}`, {
      cause: error,
    });
  if (status === 408 || status === 409 || status >= 500) {
    const what = status >= 500 ? 'server error' : 'request not completed';
    return new TransientError(`${server} ${what} ${detail}; retry later`, {
      status,
      requestId,
      cause: error,
    });
  }
  return error;
}

/** What to fix, per permanent status. */
const CONFIG_FIXES: Readonly<Record<number, (model: string) => string>> = {
  400: (model) =>
    `the request is invalid for ${model}; check COMPACTOR_OPENAI_MODEL or the strategy's model, ` +
    'COMPACTOR_OPENAI_STRUCTURED_OUTPUTS (tool for a server without response_format json_schema), and that the leaving messages fit the context window',
  401: () => 'the API key is not valid; set a valid OPENAI_API_KEY',
  402: () => 'the account needs payment; fix billing with the provider',
  403: (model) =>
    `the API key may not use ${model} or this endpoint; check the key's project and permissions`,
  404: (model) =>
    `${model} or the endpoint does not exist; check COMPACTOR_OPENAI_MODEL or the strategy's model, and OPENAI_BASE_URL (it ends in /v1 for most servers)`,
  413: () => 'the request is too large; lower COMPACTOR_MAX_INPUT_TOKENS or compact more often',
  422: (model) =>
    `the request was understood but cannot be processed by ${model}; check the model and its parameters`,
};

/**
 * Whether `error` is a server's refusal of `response_format` of type `json_schema`: a 400 whose
 * message or `param` names `response_format` or `json_schema` (OpenAI answers `Invalid parameter:
 * 'response_format' of type 'json_schema' is not supported with this model`; compatible servers word
 * it their own way, but name the field). Not a refusal of the schema itself (`Invalid schema for
 * response_format ...`, the strict-mode checks), which a forced tool with the same schema would get too.
 */
export function isResponseFormatUnsupported(error: unknown): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false;
  const text = `${error.param ?? ''} ${error.message}`;
  // `Invalid schema for response_format '…'` refuses the schema, not the field: a tool would fail too.
  return /response_format|json_schema/i.test(text) && !/invalid schema/i.test(error.message);
}

/**
 * The `error.type` of a failed request: the server's error code or type (`rate_limit_exceeded`,
 * `server_error`, ...) or, without one, the HTTP status; `timeout` and `connection_error` without
 * a response; `cancelled` when the request was aborted; the error's class name otherwise.
 */
export function openAIErrorType(error: unknown): string {
  if (error instanceof APIUserAbortError) return 'cancelled';
  if (error instanceof APIConnectionTimeoutError) return 'timeout';
  if (error instanceof APIConnectionError) return 'connection_error';
  if (error instanceof APIError)
    return error.code ?? error.type ?? (error.status !== undefined ? String(error.status) : 'api_error');
  return error instanceof Error && error.name ? error.name : '_OTHER';
}

/** `host:port` of a base URL (never its path or credentials), or undefined when there is none. */
function hostOf(baseURL: string | undefined): string | undefined {
  if (!baseURL) return undefined;
  try {
    return new URL(baseURL).host;
  } catch {
    return undefined;
  }
}

/** `(429 rate_limit_exceeded: Rate limit reached ...; request-id req_...)`. */
function describe(error: APIError, requestId: string | null): string {
  const kind = [error.status, error.code ?? error.type ?? undefined].filter(Boolean).join(' ');
  const body = error.error as { message?: unknown } | undefined;
  const message = typeof body?.message === 'string' ? `: ${body.message}` : '';
  return `(${kind}${message}; request-id ${requestId ?? 'none'})`;
}
