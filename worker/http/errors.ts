/**
 * The HTTP API's errors: every 4xx and 5xx answers `{ "error": { "type", "message", "field"? } }`,
 * `type` in the words of the Messages API's own errors where one fits, `field` naming what is wrong
 * (`messages[2].content`, `wait`, `Idempotency-Key`). Pure: no I/O.
 */
import { z } from 'zod';
import { printable } from '../../shared/contract/errors.ts';
import { describeIssue } from '../../shared/protocol/api.ts';

/** Each error type: its HTTP status and when it is answered. */
export const ERROR_TYPES = {
  invalid_request_error: {
    status: 400,
    description:
      'The request is malformed: a body that is not UTF-8 (the offset of its first malformed byte named), not JSON, nested deeper than 128 levels, or not valid data of its Content-Encoding; a bad field; no tenant named.',
  },
  authentication_error: { status: 401, description: 'No credentials, or wrong ones.' },
  permission_error: {
    status: 403,
    description:
      'The credential may not act on the tenant named, or lacks the scope the route needs (named).',
  },
  not_found_error: {
    status: 404,
    description:
      "No such session for the tenant (another tenant's session gets the same answer), or no such route.",
  },
  conflict_error: {
    status: 409,
    description: 'The session id is taken, or an appended tool_use id is already in the session.',
  },
  request_too_large: {
    status: 413,
    description:
      'The body is larger than the limit (COMPACTOR_API_MAX_BODY_BYTES), as sent or as decoded of its Content-Encoding: a compressed body is refused as soon as what it decodes to passes the limit.',
  },
  session_limit_error: {
    status: 413,
    description:
      "The append would take the session past its tenant's maxSessionMessages, maxSessionTokens or maxContextTokens (a session may not hold more than a read returns; the limit is named in the message, with its value); nothing was written. Compact the session, or raise the limit.",
  },
  unsupported_media_type_error: {
    status: 415,
    description:
      'A body that is not application/json in UTF-8 (another charset), or sent with a Content-Encoding other than gzip, deflate or br (or more than one).',
  },
  idempotency_error: {
    status: 422,
    description:
      'The Idempotency-Key was used for another request (another session or body); nothing was written.',
  },
  context_limit_error: {
    status: 422,
    description:
      "The session's context is larger than its tenant's maxContextBytes or maxContextTokens (named in the message, with its value); nothing was loaded. Compact the session, or raise the limit.",
  },
  rate_limit_error: {
    status: 429,
    description:
      "Too many requests: the tenant is over its request rate (requestsPerSecond and burst) or has maxConcurrentContextReads under way, or this client failed authentication too often; nothing was done. Retry after the retry-after header's seconds.",
  },
  api_error: { status: 500, description: 'An unexpected error (logged); nothing more is told.' },
  unavailable_error: { status: 503, description: 'Redis (the queue) cannot be reached now; retry.' },
} as const;

/** Each error type's HTTP status. */
export const ERROR_STATUS = Object.fromEntries(
  Object.entries(ERROR_TYPES).map(([type, { status }]) => [type, status]),
) as { [T in keyof typeof ERROR_TYPES]: (typeof ERROR_TYPES)[T]['status'] };

/** An error type of the API. */
export type ApiErrorType = keyof typeof ERROR_STATUS;

/** The error body's schema (for the OpenAPI document). */
export const apiErrorSchema = z
  .object({
    error: z.object({
      type: z.enum(Object.keys(ERROR_STATUS) as [ApiErrorType, ...ApiErrorType[]]),
      message: z.string(),
      field: z
        .string()
        .optional()
        .describe(
          'The request field that is wrong: a body path such as messages[2].content, a query parameter or a header.',
        ),
    }),
  })
  .meta({ title: 'Error' });

/** The body of an error response. */
export type ApiErrorBody = z.infer<typeof apiErrorSchema>;

/** An error the API answers with its status and body. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly type: ApiErrorType,
    message: string,
    /** The field that is wrong, when one is. */
    readonly field?: string,
  ) {
    super(message);
  }

  /** The HTTP status of {@link type}. */
  get status(): (typeof ERROR_STATUS)[ApiErrorType] {
    return ERROR_STATUS[this.type];
  }

  /** `{ error: { type, message, field? } }`. */
  body(): ApiErrorBody {
    return {
      error: { type: this.type, message: this.message, ...(this.field ? { field: this.field } : {}) },
    };
  }
}

/** Where a value the API parses comes from; headers and query parameters are named as sent. */
export type InputPart = 'body' | 'query' | 'header' | 'path';

/**
 * Parses `input` with `schema`.
 * @throws {ApiError} `invalid_request_error` naming the first bad field, e.g.
 *   `messages[2].content: expected a string or a list of content blocks`.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, part: InputPart): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const { field, message } = issue ? describeIssue(issue) : { field: '', message: 'invalid' };
  const named = field === '' ? part : field;
  throw new ApiError('invalid_request_error', printable(`${named}: ${message}`), named);
}

/**
 * The field an `InvalidInputError` of the producer names at the start of its message
 * (`messages[0].role: expected ...`), if any.
 */
export function fieldOfMessage(message: string): string | undefined {
  return /^([A-Za-z_][\w]*(?:\[\d+\]|\.[A-Za-z_][\w]*)*): /.exec(message)?.[1];
}

/** The answer for an unknown session and for another tenant's: the caller cannot tell them apart. */
export function sessionNotFound(sessionId: string): ApiError {
  return new ApiError('not_found_error', printable(`session "${sessionId}" not found`));
}
