/**
 * The JSON-RPC 2.0 side of `/v1/mcp` (the MCP streamable HTTP transport carries JSON-RPC messages):
 * the shape a body must have before the MCP SDK is handed it, and the API's errors told as JSON-RPC
 * error responses. Pure: no I/O.
 *
 * The message shapes are those the SDK's own schemas accept (`JSONRPCMessageSchema`, strict
 * objects; at most 100 messages in a batch), checked here first so that a refusal names the field
 * that is wrong in one short sentence rather than the SDK's generic "Invalid JSON-RPC message".
 */
import { printable } from '../../../shared/contract/errors.ts';
import { ApiError, type ApiErrorBody } from '../errors.ts';

/** JSON-RPC 2.0's error codes (§5.1), and the one the MCP SDK uses for a transport's refusals. */
export const JSON_RPC_CODES = {
  /** The body could not be read as JSON: not UTF-8, nested too deep, not JSON, empty. */
  parseError: -32700,
  /** The body is JSON but not a request the server takes: not a message, too large, wrong media type. */
  invalidRequest: -32600,
  /** An unexpected failure (the API's 500). */
  internalError: -32603,
  /** Any other refusal of the request (credentials, scope, rate): the SDK's transport errors use it. */
  serverError: -32000,
} as const;

/** The most messages in one batch, as the MCP SDK's transport allows. */
export const MAX_BATCH = 100;

/** A JSON-RPC error response, its `data` the API's error (`type`, and `field` when one is wrong). */
export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: null;
  error: { code: number; message: string; data: Omit<ApiErrorBody['error'], 'message'> };
}

/**
 * The JSON-RPC error response telling `error`, with the status it keeps. `fromBody`: the error
 * came from reading the body as JSON (a parse error) rather than from anything else.
 */
export function jsonRpcError(error: ApiError, fromBody: boolean): JsonRpcErrorBody {
  return {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: codeOf(error, fromBody),
      message: error.message,
      data: { type: error.type, ...(error.field ? { field: error.field } : {}) },
    },
  };
}

function codeOf(error: ApiError, fromBody: boolean): number {
  if (error.type === 'api_error') return JSON_RPC_CODES.internalError;
  if (fromBody && error.type === 'invalid_request_error') return JSON_RPC_CODES.parseError;
  if (fromBody || error.type === 'invalid_request_error') return JSON_RPC_CODES.invalidRequest;
  return JSON_RPC_CODES.serverError;
}

/**
 * Checks that `value` (a body's JSON) is a JSON-RPC message or a batch of them.
 * @throws {ApiError} 400 `invalid_request_error` naming the first field that is wrong
 *   (`method: must be a string`, `[2].jsonrpc: must be "2.0"`).
 */
export function assertJsonRpcMessages(value: unknown): void {
  if (!Array.isArray(value)) {
    assertMessage(value, '');
    return;
  }
  if (value.length === 0) throw refused('body', 'an empty batch');
  if (value.length > MAX_BATCH) throw refused('body', `a batch of at most ${MAX_BATCH} messages`);
  for (const [i, message] of value.entries()) assertMessage(message, `[${i}]`);
}

/** The fields of each kind of message (JSON-RPC 2.0 §4, §5). */
const FIELDS = {
  request: ['jsonrpc', 'id', 'method', 'params'],
  response: ['jsonrpc', 'id', 'result', 'error'],
} as const;

function assertMessage(value: unknown, at: string): void {
  const field = (name: string) => (at === '' ? name : `${at}.${name}`);
  if (!isObject(value)) throw refused(at || 'body', 'must be a JSON-RPC message (an object)');
  if (value.jsonrpc !== '2.0') throw refused(field('jsonrpc'), 'must be "2.0"');
  const isRequest = 'method' in value;
  if (!isRequest && !('result' in value) && !('error' in value)) {
    throw refused(
      at || 'body',
      'needs "method" (a request or notification), or "result" or "error" (a response)',
    );
  }
  const allowed: readonly string[] = isRequest ? FIELDS.request : FIELDS.response;
  const extra = Object.keys(value).find((key) => !allowed.includes(key));
  if (extra !== undefined) {
    const kind = isRequest ? 'a request' : 'a response';
    throw refused(field(extra.slice(0, 40)), `not a field of ${kind} (JSON-RPC 2.0)`);
  }
  if ('id' in value && !isId(value.id)) throw refused(field('id'), 'must be a string or an integer');
  if (isRequest) {
    if (typeof value.method !== 'string') throw refused(field('method'), 'must be a string');
    if ('params' in value && !isObject(value.params)) throw refused(field('params'), 'must be an object');
    return;
  }
  if ('result' in value && 'error' in value) throw refused(at || 'body', 'has both "result" and "error"');
  if ('result' in value) {
    if (!('id' in value)) throw refused(field('id'), 'required in a response');
    if (!isObject(value.result)) throw refused(field('result'), 'must be an object');
    return;
  }
  const error = value.error;
  if (!isObject(error)) throw refused(field('error'), 'must be an object');
  if (!Number.isInteger(error.code)) throw refused(field('error.code'), 'must be an integer');
  if (typeof error.message !== 'string') throw refused(field('error.message'), 'must be a string');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): boolean {
  return typeof value === 'string' || Number.isInteger(value);
}

function refused(field: string, problem: string): ApiError {
  return new ApiError('invalid_request_error', printable(`${field}: ${problem}`), printable(field));
}
