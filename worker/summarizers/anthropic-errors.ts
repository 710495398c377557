/**
 * The one place that maps @anthropic-ai/sdk errors to compactor's retry policy (429 honours
 * retry-after, 529/5xx back off, 4xx other than 429 fail clearly).
 *
 * - a request that can never succeed as sent (400, 401, 402, 403, 404, 413, 422; a 429 for a spend
 *   limit) becomes a {@link SummarizerConfigError}: permanent, the worker fails the job;
 * - 429 becomes a {@link RateLimitedError} carrying the server's `retry-after`;
 * - 408, 409, 5xx, 529, connection errors, timeouts and a response body that is not JSON become an
 *   {@link AnthropicTransientError}: BullMQ retries with backoff;
 * - anything else (a caller's abort included) is returned unchanged.
 *
 * Every mapped error keeps the API's request id (`request-id` header) in its message and fields, so
 * a failed job in Bull Board can be traced on Anthropic's side, and the SDK error as `cause`.
 */
import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import {
  TransientError as AnthropicTransientError,
  RateLimitedError,
  SummarizerConfigError,
} from '../../shared/contract/errors.ts';
import { parseRetryAfterMs } from './retry-after.ts';

// The LLM error classes belong to the taxonomy in shared/contract/errors.ts; re-exported here
// where the SDK's errors are mapped to them.
// Shared with the `openai` summarizer's mapping; re-exported where it was first defined.
export { AnthropicTransientError, parseRetryAfterMs, RateLimitedError };

/** What the mapping may mention in its messages. */
export interface AnthropicErrorContext {
  /** The model the request asked for. */
  model?: string | undefined;
  /** The endpoint the client called (its `baseURL`): an unreachable API is named by its host. */
  baseURL?: string | undefined;
  /** Clock for an HTTP-date `retry-after`, ms since the epoch; default `Date.now()`. */
  nowMs?: number | undefined;
  /**
   * `gen_ai.provider.name` of the platform the request went to (./anthropic-platform.ts): on
   * `aws.bedrock` and `gcp.vertex_ai` a refused request names the platform and its own settings
   * to check (credentials, model access, region) instead of the Anthropic API key. Default
   * `anthropic`.
   */
  provider?: string | undefined;
}

/** 429 error codes that no wait of seconds can fix: someone must raise a limit. */
const SPEND_LIMIT_CODES = new Set(['enforced_spend_limit_reached', 'contract_spend_limit_reached']);

/**
 * Maps an error thrown by `client.messages.create` to the error compactor throws. Returns, never
 * throws: use as `throw mapAnthropicError(error, { model })`.
 * @returns a {@link SummarizerConfigError} (permanent), {@link RateLimitedError} or
 *   {@link AnthropicTransientError} (transient), or `error` itself when it is none of the SDK's.
 */
export function mapAnthropicError(error: unknown, context: AnthropicErrorContext = {}): unknown {
  if (error instanceof APIUserAbortError) return error;
  if (error instanceof APIConnectionError) {
    // Includes APIConnectionTimeoutError; no response, so no status and no request id.
    const at = hostOf(context.baseURL);
    return new AnthropicTransientError(
      `Anthropic API${at ? ` at ${at}` : ''} unreachable: ${error.message}`,
      {
        status: null,
        requestId: null,
        cause: error,
      },
    );
  }
  if (error instanceof SyntaxError) {
    // The SDK parses a 2xx JSON body itself; a truncated or garbled body surfaces as a SyntaxError.
    return new AnthropicTransientError(
      `Anthropic API returned a body that is not valid JSON: ${error.message}`,
      {
        status: null,
        requestId: null,
        cause: error,
      },
    );
  }
  if (!(error instanceof APIError) || typeof error.status !== 'number') return error;

  const status = error.status;
  const requestId = requestIdOf(error);
  const detail = describe(error, requestId);
  const model = context.model ? `"${context.model}"` : 'the configured model';

  if (status === 429) {
    if (error.errorCode && SPEND_LIMIT_CODES.has(error.errorCode)) {
      return new SummarizerConfigError(
        `Anthropic spend limit reached ${detail}: raise the organization's spend limit, or use the ` +
          'extractive summarizer (unset ANTHROPIC_API_KEY) until it resets',
        { cause: error },
      );
    }
    const retryAfterMs = parseRetryAfterMs(error.headers, context.nowMs ?? Date.now());
    const wait = retryAfterMs === null ? 'no retry-after given' : `retry after ${retryAfterMs} ms`;
    return new RateLimitedError(`Anthropic rate limit ${detail}; ${wait}`, {
      retryAfterMs,
      requestId,
      cause: error,
    });
  }
  const platform = context.provider ? PLATFORM_FIXES[context.provider] : undefined;
  const fix = platform?.fixes[status] ?? CONFIG_FIXES[status];
  if (fix)
    return new SummarizerConfigError(
      `${platform?.name ?? 'Anthropic'} rejected the request ${detail}: ${fix(model)}`,
      { cause: error },
    );
  if (status === 408 || status === 409 || status >= 500) {
    const what = status === 529 ? 'overloaded' : status >= 500 ? 'server error' : 'request not completed';
    return new AnthropicTransientError(`Anthropic API ${what} ${detail}; retry later`, {
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
    `the request is invalid for ${model}; check COMPACTOR_MODEL or the strategy's model, maxSummaryTokens ` +
    '(max_tokens) and that the leaving messages fit the context window',
  401: () => 'the API key is not valid; set a valid ANTHROPIC_API_KEY',
  402: () => "the organization's billing needs attention; fix billing in the Anthropic console",
  403: (model) =>
    `the API key may not use ${model} or this endpoint; check the key's workspace and permissions`,
  404: (model) =>
    `${model} or the endpoint does not exist; check COMPACTOR_MODEL or the strategy's model, and ANTHROPIC_BASE_URL`,
  413: () =>
    'the request is too large; summarize fewer messages at once (raise keepRecent or compact more often)',
  422: (model) =>
    `the request was understood but cannot be processed by ${model}; check the model and its parameters`,
};

/**
 * What to fix on a cloud platform, where the statuses that name Anthropic's key, console or base
 * URL above mean the platform's credentials, model access and region instead (Bedrock's and
 * Vertex AI's Claude guides: model access is enabled per region on Bedrock, per project in Vertex
 * AI's Model Garden). Statuses not listed keep {@link CONFIG_FIXES}' advice.
 */
const PLATFORM_FIXES: Readonly<
  Record<string, { name: string; fixes: Readonly<Record<number, (model: string) => string>> }>
> = {
  'aws.bedrock': {
    name: 'Amazon Bedrock',
    fixes: {
      401: () =>
        "the AWS credentials are not valid; check the AWS SDK's credential chain or AWS_BEARER_TOKEN_BEDROCK",
      403: (model) =>
        `the AWS credentials may not invoke ${model}; allow bedrock:InvokeModel in their IAM policy and ` +
        'enable access to the model in AWS_REGION',
      404: (model) =>
        `${model} is not a model id or inference profile of Bedrock in AWS_REGION; check COMPACTOR_MODEL`,
    },
  },
  'gcp.vertex_ai': {
    name: 'Google Vertex AI',
    fixes: {
      401: () =>
        'the Google credentials are not valid or have expired; check COMPACTOR_VERTEX_ACCESS_TOKEN or ' +
        'Application Default Credentials',
      403: (model) =>
        `the Google credentials may not use ${model} in ANTHROPIC_VERTEX_PROJECT_ID; enable the model in ` +
        "Vertex AI's Model Garden and give the credentials the Vertex AI User role (roles/aiplatform.user)",
      404: (model) =>
        `${model} is not served in CLOUD_ML_REGION for ANTHROPIC_VERTEX_PROJECT_ID; check COMPACTOR_MODEL and the region`,
    },
  },
};

/** `host:port` of a base URL (never its path or credentials), or undefined when there is none. */
function hostOf(baseURL: string | undefined): string | undefined {
  if (!baseURL) return undefined;
  try {
    return new URL(baseURL).host;
  } catch {
    return undefined;
  }
}

function requestIdOf(error: APIError): string | null {
  if (error.requestID) return error.requestID;
  const body = error.error as { request_id?: unknown } | undefined;
  return typeof body?.request_id === 'string' ? body.request_id : null;
}

/** `(429 rate_limit_error: Number of requests ...; request-id req_...)`. */
function describe(error: APIError, requestId: string | null): string {
  const kind = [error.status, error.type ?? undefined, error.errorCode ?? undefined]
    .filter(Boolean)
    .join(' ');
  const apiMessage = error.apiMessage ? `: ${error.apiMessage}` : '';
  return `(${kind}${apiMessage}; request-id ${requestId ?? 'none'})`;
}
