/**
 * The HTTP API as a Hono app, for `compactor api` or for mounting in a server of your own:
 *
 * ```ts
 * const api = createApiApp({ db, producer, logger }, { credentials });
 * app.route('/compactor', api);   // POST /compactor/v1/sessions, ...
 * ```
 *
 * The routes are those of routes.ts (one handler per operationId), all under `/v1`. Every route
 * but `GET /v1` (the index, api-index.ts) and `GET /v1/openapi.json` needs credentials (issued keys or the environment's, dashboard/auth.ts)
 * holding the route's scope (403 naming it otherwise); a client whose credentials failed 10 times
 * in a minute gets 429 (auth-throttle.ts). Session routes act on one tenant: a tenant credential's
 * own, or the one an admin credential names in the `Compactor-Tenant` header; the key routes
 * (`/v1/admin/keys`) on none. Bodies are JSON in UTF-8, at most `maxBodyBytes` decoded (413 beyond),
read by one reader on every route that takes one, `/v1/mcp` included (body-reader.ts). Each tenant is
 * held to its limits (shared/policy/limits.ts, tenant-limits.ts): its request rate (429 with
 * `retry-after`; a request whose body is refused counts as `REFUSED_BODY_COST`), its sessions' size (413 naming the limit), its context size (422) and context
 * reads at once (429). Errors are `{ error: { type, message, field? } }` (errors.ts).
 */
import type { ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { type Logger, pino } from 'pino';
import {
  createSession,
  type LoadContextInput,
  loadContext,
  type Producer,
  pruneAppendRequests,
  readRecall,
  searchRecall,
  setSessionTools,
} from '../../../producer/index.ts';
import type { Db } from '../../../producer/postgres/db.ts';
import type { Scope } from '../../../shared/contract/api-keys.ts';
import {
  CompactionFailedError,
  ContextLimitError,
  InvalidInputError,
} from '../../../shared/contract/errors.ts';
import type { Limits } from '../../../shared/policy/limits.ts';
import { createSessionRequestSchema } from '../../../shared/protocol/api.ts';
import { runCompletedEventSchema } from '../../../shared/protocol/events.ts';
import { recallReadQuerySchema, recallSearchQuerySchema } from '../../../shared/recall/schemas.ts';
import { DEFAULT_API_MAX_BODY_BYTES } from '../../config/config.ts';
import { PolicyCache } from '../../postgres/policy-cache.ts';
import { purgeSessions } from '../../postgres/purge.ts';
import { sessionExists } from '../../postgres/queries/sessions.ts';
import { type AuthThrottleOptions, requestAuthenticator, retryAfterSeconds } from '../auth-throttle.ts';
import { bodyLeftUnread } from '../body/body-bytes.ts';
import { bodyReader, bodyRefused } from '../body/body-reader.ts';
import {
  type AuthResult,
  BOOTSTRAP_ADMIN,
  type Credentials,
  hasCredentials,
  type Principal,
} from '../dashboard/auth.ts';
import { ApiError, parseInput, sessionNotFound } from '../errors.ts';
import { loopbackOnly } from '../loopback-guard.ts';
import { assertJsonRpcMessages, jsonRpcError } from '../mcp/json-rpc.ts';
import { handleRecallMcp } from '../mcp/recall-server.ts';
import { toApiError } from './api-errors.ts';
import { apiIndex, INDEX_PATH } from './api-index.ts';
import { appendBody, nativeMessage } from './append.ts';
import { keyHandlers } from './key-handlers.ts';
import { type ApiOffload, apiOffload, OFF_THREAD_BYTES, OFF_THREAD_CONTEXT_BYTES } from './offload.ts';
import { API_VERSION, openApiDocument } from './openapi.ts';
import { API_ROUTES, type ApiRoute, honoPath, MCP_PATH, OPENAPI_PATH, type OperationId } from './routes.ts';
import {
  appendHeaderSchema,
  compactBodySchema,
  compactQuerySchema,
  contextQuerySchema,
  IDEMPOTENCY_HEADER,
  REPLAYED_HEADER,
  sessionPathSchema,
  sessionToolsSchema,
  TENANT_HEADER,
  tenantHeaderSchema,
} from './schemas.ts';
import { bufferStream, jsonPieces, pieceStream } from './stream-json.ts';
import { TenantLimits } from './tenant-limits.ts';

/** What the API reads and writes through. */
export interface ApiDeps {
  /** The compactor database (sessions, messages, ledger). */
  db: Db;
  /** Enqueues events and manual compactions: `createProducer`'s, given `db` so a settled compaction carries its ledger row. */
  producer: Pick<Producer, 'runCompleted' | 'compactNow'>;
  /** Request log (method, path, status, ms, tenant; never bodies or headers); default: none. */
  logger?: Logger;
  /**
   * The tenants' limits: where they are read and the request rate counted (`compactor api` counts
   * in Redis with the worker's policy cache). Default: the built-in limits under each tenant's
   * policy (read again at most every 60 s), its rate counted in this process's memory.
   */
  limits?: TenantLimits;
  /**
   * Where large requests are handled (offload.ts): `apiOffload` with the database's URL, whose
   * threads then append large bodies and read large contexts on connections of their own; the
   * caller closes it. Default: a thread pool that only reads large bodies' JSON.
   */
  offload?: ApiOffload;
}

/** How the API behaves. */
export interface ApiOptions {
  /**
   * Who may call it: the environment's credentials and the issued keys (`keys`). With none at all,
   * every request is the admin: only for a server that authenticates before it (or `--insecure` on
   * a loopback address).
   */
  credentials: Credentials;
  /** How failed authentication is throttled per client (default: 10 per minute). */
  authThrottle?: AuthThrottleOptions;
  /** Largest request body, bytes, as decoded of its Content-Encoding (default 10 MiB); larger: 413. */
  maxBodyBytes?: number;
  /**
   * Started as `--insecure` (no credentials, on loopback): only a loopback `Host`, and writes only
   * from this server's loopback `Origin`, are answered; 403 otherwise (DNS rebinding,
   * worker/http/loopback-guard.ts). Leave it off when mounting the API behind your own
   * authentication.
   */
  loopbackOnly?: boolean;
  /**
   * Where the app is mounted (`/compactor` for `app.route('/compactor', api)`): the server URL
   * the OpenAPI document gives, so its paths resolve. Default `/`.
   */
  basePath?: string;
}

/**
 * Hono's environment of the API: who is asking, and for which tenant; `jsonRpc` on `/v1/mcp`,
 * whose errors are answered as JSON-RPC error responses.
 */
export type ApiEnv = {
  Variables: { principal: Principal; tenantId: string; limits: Limits; jsonRpc: boolean };
};

/** How often an API process deletes expired idempotency keys at most, ms. */
const PRUNE_EVERY_MS = 10 * 60 * 1000;

/** The handler of one operation. */
type Handler = (c: Context<ApiEnv>) => Promise<Response>;

/**
 * The API as a Hono app (no listening socket: serve it with `@hono/node-server`, or mount it with
 * `app.route(prefix, api)`).
 */
export function createApiApp(deps: ApiDeps, options: ApiOptions): Hono<ApiEnv> {
  const { db, producer } = deps;
  const logger = deps.logger ?? pino({ level: 'silent' });
  const open = !hasCredentials(options.credentials);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_API_MAX_BODY_BYTES;
  const offload = deps.offload ?? apiOffload({ maxBodyBytes });
  const reader = bodyReader({ maxBodyBytes, setting: 'COMPACTOR_API_MAX_BODY_BYTES', offload });
  const readJson = (c: Context<ApiEnv>, required: boolean) => reader.json(c.req.raw, required);
  const limits = deps.limits ?? new TenantLimits({ policies: new PolicyCache(db) });
  let lastPrune = 0;
  let document: Record<string, unknown> | undefined;

  const app = new Hono<ApiEnv>();
  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    const tenantId = c.get('tenantId');
    const entry = {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
      ...(tenantId ? { tenantId } : {}),
    };
    if (c.res.status >= 500) logger.warn(entry, 'api request');
    else logger.debug(entry, 'api request');
    c.header('x-content-type-options', 'nosniff');
    c.header('cache-control', 'no-store');
    if (bodyLeftUnread(c.req.raw)) c.header('connection', 'close');
    const inForce = c.get('limits');
    if (tenantId && inForce && bodyRefused(c.req.raw)) {
      limits.penalize(tenantId, inForce).catch((error: Error) => {
        logger.warn({ tenantId, error: error.message }, 'could not count a refused body against the tenant');
      });
    }
  });

  // Open (--insecure): this machine's Host and Origin only, against DNS rebinding (loopback-guard.ts).
  if (open && options.loopbackOnly) {
    app.use(
      '*',
      loopbackOnly((message) =>
        Response.json(new ApiError('permission_error', message).body(), { status: 403 }),
      ),
    );
  }

  app.get(INDEX_PATH, (c) => c.json(apiIndex(API_VERSION, options.basePath)));

  // Before authentication, so that its refusals are JSON-RPC errors too.
  app.use(MCP_PATH, async (c, next) => {
    c.set('jsonRpc', true);
    await next();
  });

  app.get(OPENAPI_PATH, (c) => {
    document ??= openApiDocument(options.basePath ? { basePath: options.basePath } : {});
    return c.json(document);
  });

  const admit = requestAuthenticator(options.credentials, logger, options.authThrottle);
  const auth: MiddlewareHandler<ApiEnv> = async (c, next) => {
    if (open) {
      c.set('principal', BOOTSTRAP_ADMIN);
      return next();
    }
    const admission = await admit(c);
    if ('throttledMs' in admission) {
      const seconds = retryAfterSeconds(admission.throttledMs);
      c.header('retry-after', seconds);
      throw new ApiError(
        'rate_limit_error',
        `too many failed authentications from this client: retry in ${seconds} s`,
      );
    }
    if (!admission.ok) {
      c.header('www-authenticate', 'Bearer realm="compactor"');
      throw new ApiError('authentication_error', refusal(admission.refused));
    }
    c.set('principal', admission.principal);
    await next();
  };
  app.use('/v1/*', auth);
  /**
   * Holds the request's tenant to its request rate, and hands the handlers its limits.
   * @throws {ApiError} 429 with `retry-after` past the rate.
   */
  const limitTenant = async (c: Context<ApiEnv>) => {
    const tenantId = c.get('tenantId');
    const inForce = await limits.of(tenantId);
    c.set('limits', inForce);
    const waitMs = await limits.request(tenantId, inForce);
    if (waitMs !== null) {
      c.header('retry-after', String(Math.ceil(waitMs / 1000)));
      throw new ApiError(
        'rate_limit_error',
        `tenant "${tenantId}" is over its request rate (requestsPerSecond ${inForce.requestsPerSecond}, burst ${inForce.burst}); retry after the retry-after seconds`,
      );
    }
  };

  /**
   * A context read's response body. A context over {@link OFF_THREAD_CONTEXT_BYTES} of stored
   * content is read in a worker thread when the offload has a database: Postgres measures it first
   * (the read at that cap loads no message), and only then is it loaded where it is rendered.
   */
  const contextBody = async (input: LoadContextInput, end: () => void) => {
    const cap = input.maxBytes ?? Number.POSITIVE_INFINITY;
    if (offload.context === null || cap <= OFF_THREAD_CONTEXT_BYTES) {
      return pieceStream(jsonPieces({ ...(await loadContext(db, input)) }, ['messages']), end);
    }
    try {
      const context = await loadContext(db, { ...input, maxBytes: OFF_THREAD_CONTEXT_BYTES });
      return pieceStream(jsonPieces({ ...context }, ['messages']), end);
    } catch (error) {
      const large =
        error instanceof ContextLimitError &&
        error.limit === 'maxContextBytes' &&
        error.value === OFF_THREAD_CONTEXT_BYTES &&
        error.size <= cap;
      if (!large) throw error;
      return bufferStream(await offload.context(input), end);
    }
  };

  const handlers: Record<OperationId, Handler> = {
    async createSession(c) {
      const body = parseInput(createSessionRequestSchema, await readJson(c, true), 'body');
      const created = await createSession(db, {
        tenantId: c.get('tenantId'),
        sessionId: body.id,
        agentId: body.agentId ?? null,
        contextWindow: body.contextWindow ?? null,
        ...(body.format ? { format: body.format } : {}),
        messages: (body.messages ?? []).map((message, seq) => ({ seq, ...nativeMessage(message) })),
        limits: limits.defaults,
      });
      return c.json({ sessionId: body.id, ...created }, 201);
    },

    async appendMessages(c) {
      const { id } = parseInput(sessionPathSchema, c.req.param(), 'path');
      const headers = parseInput(appendHeaderSchema, headersOf(c), 'header');
      const key = headers[IDEMPOTENCY_HEADER];
      const target = {
        tenantId: c.get('tenantId'),
        sessionId: id,
        idempotencyKey: key,
        defaultLimits: limits.defaults,
      };
      const bytes = await reader.bytes(c.req.raw);
      const appended =
        offload.append && bytes.byteLength >= OFF_THREAD_BYTES
          ? await offload.append(bytes, c.req.header('content-type'), target)
          : await appendBody(db, await reader.value(bytes, c.req.raw, true), target);
      if (key !== undefined && !appended.replayed && Date.now() - lastPrune > PRUNE_EVERY_MS) {
        lastPrune = Date.now();
        pruneAppendRequests(db).catch((error: unknown) =>
          logger.warn({ err: error }, 'pruning idempotency keys failed'),
        );
      }
      if (appended.replayed) c.header(REPLAYED_HEADER, 'true');
      return c.json({ sessionId: appended.sessionId, seqs: appended.seqs }, 200);
    },

    async runCompleted(c) {
      const event = parseInput(runCompletedEventSchema, await readJson(c, true), 'body');
      if (event.tenantId !== c.get('tenantId')) {
        throw new ApiError(
          'permission_error',
          `tenantId: the event's tenant must be the tenant of the request ("${c.get('tenantId')}")`,
          'tenantId',
        );
      }
      // Refused now rather than failed later in a worker. A session created before this request
      // was sent is committed, so it is found; one deleted after is the worker's to skip.
      if (!(await sessionExists(db, event.tenantId, event.sessionId))) throw sessionNotFound(event.sessionId);
      const enqueued = await producer.runCompleted(event).catch(unavailable);
      return c.json(enqueued, 202);
    },

    async getContext(c) {
      const { id } = parseInput(sessionPathSchema, c.req.param(), 'path');
      const query = parseInput(contextQuerySchema, c.req.query(), 'query');
      const tenantId = c.get('tenantId');
      const inForce = c.get('limits');
      const end = limits.startContextRead(tenantId, inForce);
      if (end === null) {
        c.header('retry-after', '1');
        throw new ApiError(
          'rate_limit_error',
          `tenant "${tenantId}" has ${inForce.maxConcurrentContextReads} context reads under way, its limit maxConcurrentContextReads; retry after the retry-after seconds`,
        );
      }
      try {
        const input: LoadContextInput = {
          tenantId,
          sessionId: id,
          // The body is in the session's format: the Anthropic shape, or `format: 'openai-chat'`'s
          // or `format: 'openai-responses'`'s.
          format: 'any',
          maxBytes: inForce.maxContextBytes,
          maxTokens: inForce.maxContextTokens,
          ...(query.thinking ? { thinking: query.thinking } : {}),
          ...(query.compactionBlock ? { compactionBlock: query.compactionBlock } : {}),
        };
        // Written as the client reads; the read ends when the last byte is sent.
        return c.body(await contextBody(input, end), 200, { 'content-type': 'application/json' });
      } catch (error) {
        end();
        throw error;
      }
    },

    async searchRecall(c) {
      const { id } = parseInput(sessionPathSchema, c.req.param(), 'path');
      const query = parseInput(recallSearchQuerySchema, await readJson(c, true), 'body');
      return c.json(await searchRecall(db, { tenantId: c.get('tenantId'), sessionId: id, ...query }), 200);
    },

    async readRecall(c) {
      const { id } = parseInput(sessionPathSchema, c.req.param(), 'path');
      const range = parseInput(recallReadQuerySchema, await readJson(c, true), 'body');
      return c.json(await readRecall(db, { tenantId: c.get('tenantId'), sessionId: id, ...range }), 200);
    },

    async setSessionTools(c) {
      const { id } = parseInput(sessionPathSchema, c.req.param(), 'path');
      const { tools } = parseInput(sessionToolsSchema, await readJson(c, true), 'body');
      await setSessionTools(db, c.get('tenantId'), id, tools as ToolUnion[] | null);
      return c.json({ tools }, 200);
    },

    async compactSession(c) {
      const { id } = parseInput(sessionPathSchema, c.req.param(), 'path');
      const { wait = 0 } = parseInput(compactQuerySchema, c.req.query(), 'query');
      // No body asks for nothing; a body of JSON `null` is a body, and not the object it must be.
      const sent = await readJson(c, false);
      const body = parseInput(compactBodySchema, sent === undefined ? {} : sent, 'body');
      const tenantId = c.get('tenantId');
      if (!(await sessionExists(db, tenantId, id))) throw sessionNotFound(id);
      const target = { tenantId, sessionId: id, ...(body.strategy ? { strategy: body.strategy } : {}) };
      let outcome: Awaited<ReturnType<Producer['compactNow']>>;
      try {
        outcome = await producer.compactNow(target, { timeoutMs: wait });
      } catch (error) {
        if (error instanceof CompactionFailedError) {
          return c.json({ state: 'failed', jobId: error.jobId, error: error.message }, 200);
        }
        return unavailable(error);
      }
      if (outcome.state === 'running') return c.json({ state: 'running', jobId: outcome.jobId }, 202);
      return c.json(outcome, 200);
    },

    ...keyHandlers(db, readJson),

    async deleteSession(c) {
      const { id } = parseInput(sessionPathSchema, c.req.param(), 'path');
      const purged = await purgeSessions(db, { tenantId: c.get('tenantId'), sessionId: id });
      logger.info({ tenantId: c.get('tenantId'), sessionId: id, sessions: purged.sessions }, 'purged');
      return c.json(purged, 200);
    },
  };

  /** @throws {ApiError} 403 when the request's credential lacks `scope`. */
  const requireScope = (c: Context<ApiEnv>, scope: Scope) => {
    const principal = c.get('principal');
    if (principal.scopes.includes(scope)) return;
    logger.info(
      { reason: 'missing_scope', scope, ...(principal.keyId ? { keyId: principal.keyId } : {}) },
      'authorization failed',
    );
    throw new ApiError('permission_error', `this credential lacks the scope "${scope}" this route needs`);
  };

  for (const [operationId, route] of Object.entries(API_ROUTES) as Array<[OperationId, ApiRoute]>) {
    const handler = handlers[operationId];
    app.on(route.method.toUpperCase(), honoPath(route.path), async (c) => {
      requireScope(c, route.scope);
      if (route.tenantScoped) {
        c.set('tenantId', tenantOf(c));
        await limitTenant(c);
      }
      return handler(c);
    });
  }

  /**
   * A POST's JSON-RPC message(s), read as every body is; the refusal otherwise, as a JSON-RPC error
   * (a parse error when the body is not JSON, an invalid request when it is not a message).
   */
  const mcpBody = async (c: Context<ApiEnv>): Promise<{ body: unknown } | Response> => {
    let body: unknown;
    try {
      body = await reader.json(c.req.raw, true);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return c.json(jsonRpcError(error, true), error.status);
    }
    assertJsonRpcMessages(body);
    return { body };
  };

  // Recall's MCP server (streamable HTTP, stateless): the tenant's archive, as the recall routes.
  app.all(MCP_PATH, async (c) => {
    requireScope(c, 'context:read');
    c.set('tenantId', tenantOf(c));
    await limitTenant(c);
    const read = c.req.method === 'POST' ? await mcpBody(c) : { body: undefined };
    if (read instanceof Response) return read;
    return handleRecallMcp(c.req.raw, read.body, db, c.get('tenantId'), logger);
  });

  app.notFound((c) => {
    const error = new ApiError('not_found_error', `no route ${c.req.method} ${c.req.path}`);
    return c.json(error.body(), error.status);
  });
  app.onError((thrown, c) => {
    const error = toApiError(thrown, c.req.param('id') ?? '');
    if (error.type === 'api_error') {
      logger.error({ err: thrown, method: c.req.method, path: c.req.path }, 'api request failed');
    }
    if (c.get('jsonRpc')) return c.json(jsonRpcError(error, false), error.status);
    return c.json(error.body(), error.status);
  });
  return app;
}

/**
 * The tenant a request acts on: a tenant credential's own, or the admin's `Compactor-Tenant`.
 * @throws {ApiError} 400 when the admin names none or a malformed one; 403 when a tenant
 *   credential names another tenant.
 */
function tenantOf(c: Context<ApiEnv>): string {
  const named = parseInput(tenantHeaderSchema, headersOf(c), 'header')[TENANT_HEADER];
  const principal = c.get('principal');
  if (principal.role === 'tenant') {
    if (named !== undefined && named !== principal.tenantId) {
      throw new ApiError(
        'permission_error',
        `${TENANT_HEADER}: this credential is scoped to its own tenant`,
        TENANT_HEADER,
      );
    }
    return principal.tenantId;
  }
  if (named === undefined) {
    throw new ApiError(
      'invalid_request_error',
      `${TENANT_HEADER}: required with the admin credential (name the tenant to act on)`,
      TENANT_HEADER,
    );
  }
  return named;
}

/** What a refused caller is told: whether its key was revoked or expired, never which secret was wrong. */
function refusal(result: Extract<AuthResult, { ok: false }>): string {
  switch (result.reason) {
    case 'missing':
      return 'credentials required: send Authorization: Bearer <key>';
    case 'malformed':
      return 'malformed credentials: send Authorization: Bearer <key>';
    case 'revoked':
      return `key ${result.keyId} was revoked`;
    case 'expired':
      return `key ${result.keyId} expired`;
    default:
      return 'invalid credentials';
  }
}

/** The request's headers by their canonical names in the schemas (`Idempotency-Key`, ...). */
function headersOf(c: Context<ApiEnv>): Record<string, string | undefined> {
  return {
    [TENANT_HEADER]: c.req.header(TENANT_HEADER),
    [IDEMPOTENCY_HEADER]: c.req.header(IDEMPOTENCY_HEADER),
  };
}

/** A producer call that failed for another reason than its input: Redis is out of reach. */
function unavailable(error: unknown): never {
  if (error instanceof InvalidInputError) throw error;
  throw new ApiError('unavailable_error', `the queue cannot be reached: ${(error as Error).message}`);
}
