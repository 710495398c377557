/**
 * Every route of the HTTP API, as data: method, path, parameters, body and responses, each with
 * its zod schema. The app (app.ts) registers exactly these, one handler per `operationId`, and the
 * OpenAPI document (openapi.ts) is generated from them, so the two cannot list different routes.
 * Pure: no I/O.
 */
import type { z } from 'zod';
import type { Scope } from '../../../shared/contract/api-keys.ts';
import { appendRequestSchema, createSessionRequestSchema } from '../../../shared/protocol/api.ts';
import { runCompletedEventSchema } from '../../../shared/protocol/events.ts';
import {
  recallReadQuerySchema,
  recallReadResultSchema,
  recallSearchQuerySchema,
  recallSearchResultSchema,
} from '../../../shared/recall/schemas.ts';
import type { ApiErrorType } from '../errors.ts';
import {
  createKeyBodySchema,
  issuedKeySchema,
  keyListSchema,
  keyPathSchema,
  listKeysQuerySchema,
  revokedKeySchema,
  rotatedKeySchema,
  rotateKeyBodySchema,
} from './key-schemas.ts';
import {
  appendHeaderSchema,
  appendResultSchema,
  compactBodySchema,
  compactOutcomeSchema,
  compactQuerySchema,
  contextQuerySchema,
  enqueuedSchema,
  loadedContextSchema,
  purgedSchema,
  REPLAYED_HEADER,
  sessionCreatedSchema,
  sessionPathSchema,
  sessionToolsSchema,
  tenantHeaderSchema,
} from './schemas.ts';

/** A success response of a route. */
export interface ApiResponse {
  description: string;
  schema: z.ZodType;
  /** Response headers, by name, with what they mean. */
  headers?: Record<string, string>;
}

/** One route. `path` is in OpenAPI's form (`/v1/sessions/{id}`). */
export interface ApiRoute {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  summary: string;
  description: string;
  /**
   * Acts on one tenant: a tenant credential's own, or the one an admin credential names in
   * `Compactor-Tenant`. The key routes act on none.
   */
  tenantScoped: boolean;
  /** The scope a credential needs for it (shared/contract/api-keys.ts); without it: 403 naming it. */
  scope: Scope;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: { schema: z.ZodType; required: boolean };
  responses: Partial<Record<200 | 201 | 202, ApiResponse>>;
  /** The errors it may answer, besides those of every route (400, 401, 403, 429). */
  errors: ApiErrorType[];
}

/** The API's routes by `operationId`. */
export const API_ROUTES = {
  createSession: {
    method: 'post',
    path: '/v1/sessions',
    summary: 'Create a session',
    description:
      'Creates a session with its first messages (seqs 0, 1, ...) in one transaction. Pin the system prompt ("pinned": true) so no compaction removes it.',
    tenantScoped: true,
    scope: 'messages:write',
    headers: tenantHeaderSchema,
    body: { schema: createSessionRequestSchema, required: true },
    responses: { 201: { description: 'Created.', schema: sessionCreatedSchema } },
    errors: ['conflict_error', 'request_too_large', 'session_limit_error', 'unsupported_media_type_error'],
  },
  appendMessages: {
    method: 'post',
    path: '/v1/sessions/{id}/messages',
    summary: 'Append messages',
    description:
      'Appends Anthropic MessageParams to the session (or to the live session it continued in after a newSession compaction), giving them the next seqs; their content is stored exactly. With an Idempotency-Key, a retry appends nothing and gets the same answer, even when sent while the first is still running.',
    tenantScoped: true,
    scope: 'messages:write',
    params: sessionPathSchema,
    headers: appendHeaderSchema,
    body: { schema: appendRequestSchema, required: true },
    responses: {
      200: {
        description: 'Appended (or, for a repeated Idempotency-Key, appended by the first request).',
        schema: appendResultSchema,
        headers: { [REPLAYED_HEADER]: '"true" when this answers a repeated Idempotency-Key.' },
      },
    },
    errors: [
      'not_found_error',
      'conflict_error',
      'idempotency_error',
      'request_too_large',
      'session_limit_error',
      'unsupported_media_type_error',
    ],
  },
  runCompleted: {
    method: 'post',
    path: '/v1/events/run-completed',
    summary: 'Enqueue session.run.completed',
    description:
      'Enqueues the event on the BullMQ queue "compaction", as the producer does: the same eventId twice is a no-op, and events for a session with a waiting job coalesce into it. Its tenantId must be the tenant of the request, and its sessionId a session of that tenant (404 otherwise).',
    tenantScoped: true,
    scope: 'events:write',
    headers: tenantHeaderSchema,
    body: { schema: runCompletedEventSchema.meta({ title: 'RunCompletedEvent' }), required: true },
    responses: { 202: { description: 'Enqueued.', schema: enqueuedSchema } },
    errors: ['not_found_error', 'request_too_large', 'unsupported_media_type_error', 'unavailable_error'],
  },
  getContext: {
    method: 'get',
    path: '/v1/sessions/{id}/context',
    summary: "Load the session's next request",
    description:
      "The system and messages to pass to the Messages API next (an openai-chat session: format and the messages to pass to Chat Completions; an openai-responses session: format and the input to pass to the Responses API), from the session's live history (following its lineage to the live session), compacted or not. A context larger than the tenant's maxContextBytes or maxContextTokens is refused whole (422; a part of a request is no request an agent could send): compact the session. A tenant may have maxConcurrentContextReads under way at once per API process (429 beyond).",
    tenantScoped: true,
    scope: 'context:read',
    params: sessionPathSchema,
    query: contextQuerySchema,
    headers: tenantHeaderSchema,
    responses: { 200: { description: 'The context.', schema: loadedContextSchema } },
    errors: ['not_found_error', 'context_limit_error'],
  },
  searchRecall: {
    method: 'post',
    path: '/v1/sessions/{id}/recall/search',
    summary: 'Search what compactions archived',
    description:
      'Finds the archived messages of the session (by default of its whole lineage) that hold every word of the query: a file path (also by its parts), a command, an error text. Best first, each with its seq and a snippet; read them back with the read route. Summaries compactor wrote are not searched; what a retention pass expired or a restore put back is not found. A POST because a query may hold any characters; it changes nothing.',
    tenantScoped: true,
    scope: 'context:read',
    params: sessionPathSchema,
    headers: tenantHeaderSchema,
    body: { schema: recallSearchQuerySchema.meta({ title: 'RecallSearchRequest' }), required: true },
    responses: { 200: { description: 'The hits, best first.', schema: recallSearchResultSchema } },
    errors: ['not_found_error', 'request_too_large', 'unsupported_media_type_error'],
  },
  readRecall: {
    method: 'post',
    path: '/v1/sessions/{id}/recall/read',
    summary: 'Read archived messages back',
    description:
      'The originals of a seq range of the session that compactions archived, by seq, each exactly as the agent wrote it (images and documents included), while their stored content adds up to maxBytes (the first always); nextSeq says where to go on. Seqs the archive does not hold (live, restored, expired) are absent. A POST like the search; it changes nothing.',
    tenantScoped: true,
    scope: 'context:read',
    params: sessionPathSchema,
    headers: tenantHeaderSchema,
    body: { schema: recallReadQuerySchema.meta({ title: 'RecallReadRequest' }), required: true },
    responses: { 200: { description: 'The archived originals.', schema: recallReadResultSchema } },
    errors: ['not_found_error', 'request_too_large', 'unsupported_media_type_error'],
  },
  setSessionTools: {
    method: 'put',
    path: '/v1/sessions/{id}/tools',
    summary: "Declare the session's tools",
    description:
      "The tools the agent sends with this session's requests. The anthropic-compaction summarizer sends them on its compaction request: kept turns keep their thinking only when system and tools are the same there and afterwards.",
    tenantScoped: true,
    scope: 'messages:write',
    params: sessionPathSchema,
    headers: tenantHeaderSchema,
    body: { schema: sessionToolsSchema, required: true },
    responses: { 200: { description: 'Declared.', schema: sessionToolsSchema } },
    errors: ['not_found_error', 'request_too_large', 'unsupported_media_type_error'],
  },
  compactSession: {
    method: 'post',
    path: '/v1/sessions/{id}/compact',
    summary: 'Compact now',
    description:
      'Enqueues a manual compaction (which ignores the triggers) as a job of its own and waits up to `wait` ms for a worker to settle it.',
    tenantScoped: true,
    scope: 'sessions:compact',
    params: sessionPathSchema,
    query: compactQuerySchema,
    headers: tenantHeaderSchema,
    body: { schema: compactBodySchema, required: false },
    responses: {
      200: {
        description:
          'Settled within the wait: the job result and the ledger row, or the failure of a job that failed for good.',
        schema: compactOutcomeSchema,
      },
      202: {
        description: 'Enqueued, still running when the wait ended (or no wait asked).',
        schema: compactOutcomeSchema,
      },
    },
    errors: ['not_found_error', 'request_too_large', 'unsupported_media_type_error', 'unavailable_error'],
  },
  deleteSession: {
    method: 'delete',
    path: '/v1/sessions/{id}',
    summary: 'Delete a session',
    description:
      'Deletes the session with its lineage (the sessions it continued from and in) and everything held of them: live and archived messages, ledger rows, batch rows, idempotency keys. Nothing of it can be restored.',
    tenantScoped: true,
    scope: 'sessions:delete',
    params: sessionPathSchema,
    headers: tenantHeaderSchema,
    responses: { 200: { description: 'Deleted: rows per table.', schema: purgedSchema } },
    errors: ['not_found_error'],
  },
  createKey: {
    method: 'post',
    path: '/v1/admin/keys',
    summary: 'Issue a key',
    description:
      'Issues a tenant key (cpt_, acts on its tenant only) or an admin key (cpa_, acts on the tenant it names), with its scopes and an optional expiry. The secret is in this answer only; the database keeps its SHA-256.',
    tenantScoped: false,
    scope: 'admin',
    body: { schema: createKeyBodySchema, required: true },
    responses: {
      201: { description: 'Issued: the key and its secret, shown this once.', schema: issuedKeySchema },
    },
    errors: ['request_too_large', 'unsupported_media_type_error'],
  },
  listKeys: {
    method: 'get',
    path: '/v1/admin/keys',
    summary: 'List keys',
    description:
      'The keys still usable (with all=true, revoked and expired ones too), oldest first; never a secret.',
    tenantScoped: false,
    scope: 'admin',
    query: listKeysQuerySchema,
    responses: { 200: { description: 'The keys.', schema: keyListSchema } },
    errors: [],
  },
  revokeKey: {
    method: 'delete',
    path: '/v1/admin/keys/{keyId}',
    summary: 'Revoke a key',
    description:
      'Revokes the key now: every request with it is refused (401) from this answer on, also one in a rotation grace period.',
    tenantScoped: false,
    scope: 'admin',
    params: keyPathSchema,
    responses: { 200: { description: 'Revoked.', schema: revokedKeySchema } },
    errors: ['not_found_error'],
  },
  rotateKey: {
    method: 'post',
    path: '/v1/admin/keys/{keyId}/rotate',
    summary: 'Rotate a key',
    description:
      'Issues a new key with the same tenant, name, scopes and expiry, and revokes the old one after graceSeconds (default 0: now), so the services using it can move over.',
    tenantScoped: false,
    scope: 'admin',
    params: keyPathSchema,
    body: { schema: rotateKeyBodySchema, required: false },
    responses: {
      201: {
        description: 'The new key and its secret (shown this once), and the old key.',
        schema: rotatedKeySchema,
      },
    },
    errors: ['not_found_error', 'request_too_large', 'unsupported_media_type_error'],
  },
} as const satisfies Record<string, ApiRoute>;

/** An `operationId` of the API. */
export type OperationId = keyof typeof API_ROUTES;

/** The path of the OpenAPI document itself (served without credentials). */
export const OPENAPI_PATH = '/v1/openapi.json';

/**
 * Where recall's MCP server answers (streamable HTTP; worker/http/mcp/recall-server.ts), behind the
 * API's keys like every `/v1` path; a key needs `context:read`.
 */
export const MCP_PATH = '/v1/mcp';

/** `/v1/sessions/{id}` → `/v1/sessions/:id` (Hono's form). */
export function honoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}
