/**
 * What the API tells a caller about an error a handler threw: the producer's and the database's
 * errors mapped onto the API's error types (worker/http/errors.ts). Pure, so that a request handled
 * in a worker thread (offload.ts) is answered exactly as one handled on the event loop.
 */
import {
  ContextLimitError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  SessionContinuedError,
  SessionExistsError,
  SessionLimitError,
  SessionNotFoundError,
  ToolUseIdTakenError,
} from '../../../shared/contract/errors.ts';
import { ApiError, fieldOfMessage, sessionNotFound } from '../errors.ts';
import { IDEMPOTENCY_HEADER } from './schemas.ts';

/**
 * The {@link ApiError} answered for `error`; anything unexpected is `api_error` (500), which tells
 * the caller nothing more.
 * @param sessionId the session the request named (for the not-found answer).
 */
export function toApiError(error: Error, sessionId: string): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof SessionNotFoundError) return sessionNotFound(sessionId);
  if (error instanceof IdempotencyKeyReusedError) {
    return new ApiError('idempotency_error', error.message, IDEMPOTENCY_HEADER);
  }
  if (error instanceof SessionExistsError) return new ApiError('conflict_error', error.message, 'id');
  if (error instanceof ToolUseIdTakenError) return new ApiError('conflict_error', error.message, error.field);
  if (error instanceof SessionContinuedError) return new ApiError('conflict_error', error.message);
  if (error instanceof SessionLimitError)
    return new ApiError('session_limit_error', error.message, 'messages');
  if (error instanceof ContextLimitError) return new ApiError('context_limit_error', error.message);
  if (error instanceof InvalidInputError) {
    return new ApiError('invalid_request_error', error.message, fieldOfMessage(error.message));
  }
  return new ApiError('api_error', 'internal error');
}
