/**
 * `compactor dashboard`: one HTTP server with
 * - `/queues`: Bull Board for the `compaction` and `compaction-sweep` queues (admin only; each
 *   job of a session links to its session page; its page loads nothing from other origins, see
 *   bull-board.ts);
 * - `/api/...`: the ledger API (api.ts), tenant-scoped;
 * - `/`: the landing page (landing-page.ts): every tenant for the admin, its own for a tenant;
 * - `/sessions`, `/sessions/:sessionId`: the server-rendered pages (page.ts), and
 *   `/sessions/:sessionId/compactions/:compactionId`: one compaction (details-page.ts);
 * - `/metrics` (admin), `/healthz` and `/readyz` (open, for orchestrators; `/readyz` names only
 *   which dependency is not ready, its durations and errors are for the admin).
 * Everything but the health checks needs credentials (auth.ts): reads the scope context:read,
 * writes sessions:compact, Bull Board and /metrics an admin credential with the scope admin; a
 * client whose credentials failed 10 times in a minute gets 429. Cross-site writes are refused by
 * an Origin check, and the pages run under a nonce-based Content-Security-Policy. Without
 * credentials (`--insecure`), only loopback `Host` and `Origin` values are answered (DNS rebinding).
 */
import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import { connectionOf, createProducer } from '../../../producer/index.ts';
import type { Scope } from '../../../shared/contract/api-keys.ts';
import { WEBHOOKS_QUEUE } from '../../../shared/contract/webhooks.ts';
import { COMPACTION_QUEUE } from '../../../shared/protocol/events.ts';
import { readinessProbe } from '../../observability/health.ts';
import { createDashboardMetrics, type DashboardMetrics } from '../../observability/metrics.ts';
import {
  BadCursorError,
  biggestSessions,
  failingSessions,
  listArchived,
  listLedger,
  listSessions,
  liveContext,
  tenantTotals,
} from '../../postgres/queries/dashboard.ts';
import { SWEEP_QUEUE } from '../../queue/sweeps/sweep.ts';
import { runAll, type Services } from '../../runtime/services.ts';
import { type AuthThrottleOptions, requestAuthenticator, retryAfterSeconds } from '../auth-throttle.ts';
import { bodyLeftUnread } from '../body/body-bytes.ts';
import { serverCredentials } from '../credentials.ts';
import { ApiError, type ApiErrorType } from '../errors.ts';
import { loopbackOnly } from '../loopback-guard.ts';
import { type Listening, listenOwning, opsRoutes } from '../ops.ts';
import { type ApiDeps, apiRoutes, compactionId, ownCompaction, ownSession } from './api.ts';
import { BOOTSTRAP_ADMIN, type Credentials, hasCredentials, type Principal } from './auth.ts';
import { bullBoard, offlineBullBoardViews } from './bull-board.ts';
import { type DashboardEnv, parseInput, scopeTenant } from './context.ts';
import { CONTEXT_PREVIEW_CHARS, CONTEXT_ROWS } from './context-panel.ts';
import { PREVIEW_CHARS, renderDetailsPage } from './details-page.ts';
import { renderErrorPage, STYLE_SOURCE } from './html.ts';
import { createJobWaiter } from './jobs.ts';
import {
  FAILING_WINDOW_MS,
  LANDING_ROWS,
  LANDING_TENANTS,
  renderAdminLanding,
  renderTenantLanding,
} from './landing-page.ts';
import { renderSessionList, renderSessionPage, renderTenantPrompt } from './page.ts';

/** Ledger rows the session page draws and lists (the newest; the API pages through the rest). */
const PAGE_LEDGER_ROWS = 200;
/** Archived messages per page of a compaction's page. */
const PAGE_ARCHIVED_ROWS = 100;

export interface DashboardOptions {
  /** Bull Board read-only, and the API refuses writes (403). */
  readOnly: boolean;
  credentials: Credentials;
  /** How failed authentication is throttled per client (default: 10 per minute). */
  authThrottle?: AuthThrottleOptions;
  /**
   * Started as `--insecure` (no credentials, on loopback): only a loopback `Host`, and writes only
   * from this server's loopback `Origin`, are answered; 403 otherwise (DNS rebinding,
   * worker/http/loopback-guard.ts).
   */
  loopbackOnly?: boolean;
}

/** What the app needs besides its options. */
export interface DashboardDeps extends Omit<ApiDeps, 'readOnly'> {
  queues: Queue[];
  /** Directory of Bull Board's page template (see {@link offlineBullBoardViews}). */
  bullBoardViews: string;
  metrics: DashboardMetrics;
  ready: Parameters<typeof opsRoutes>[0]['ready'];
  logger: Logger;
}

/**
 * The dashboard as a Hono app (no listening socket: tests call `app.request`).
 * Without credentials every request is treated as the admin (only `--insecure` on loopback).
 */
export function createDashboardApp(deps: DashboardDeps, options: DashboardOptions): Hono<DashboardEnv> {
  const { credentials, readOnly } = options;
  const app = new Hono<DashboardEnv>();
  const open = !hasCredentials(credentials);

  app.use('*', async (c, next) => {
    const started = performance.now();
    c.set('nonce', randomBytes(16).toString('base64'));
    await next();
    // Ids and status only: never the query string (cursors), headers or bodies.
    const principal = c.get('principal');
    const entry = {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
      ...(principal ? { role: principal.role } : {}),
      ...(c.get('tenantId') ? { tenantId: c.get('tenantId') } : {}),
    };
    if (c.req.method === 'GET' || c.req.method === 'HEAD') deps.logger.debug(entry, 'dashboard request');
    else deps.logger.info(entry, 'dashboard request');
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'same-origin');
    c.header('x-frame-options', 'DENY');
    // A body refused before its end leaves the rest on the connection: it cannot carry another request.
    if (bodyLeftUnread(c.req.raw)) c.header('connection', 'close');
  });

  const admit = requestAuthenticator(credentials, deps.logger, options.authThrottle);
  const auth: MiddlewareHandler<DashboardEnv> = async (c, next) => {
    if (open) {
      c.set('principal', BOOTSTRAP_ADMIN);
      return next();
    }
    const admission = await admit(c);
    if ('throttledMs' in admission) {
      c.header('retry-after', retryAfterSeconds(admission.throttledMs));
      throw new ApiError('rate_limit_error', 'too many failed authentications from this client: retry later');
    }
    if (!admission.ok) {
      deps.metrics.authFailed(admission.refused.reason === 'missing' ? 'missing' : 'invalid');
      c.header('www-authenticate', 'Basic realm="compactor", charset="UTF-8"');
      throw new ApiError(
        'authentication_error',
        admission.refused.reason === 'missing' ? 'credentials required' : 'invalid credentials',
      );
    }
    const principal = admission.principal;
    c.set('principal', principal);
    await next();
  };
  const adminOnly: MiddlewareHandler<DashboardEnv> = async (c, next) => {
    if (c.get('principal').role !== 'admin') {
      deps.metrics.authFailed('forbidden');
      throw new ApiError('permission_error', 'this needs the admin credential');
    }
    requireScope(c, c.get('principal'), 'admin');
    await next();
  };
  /** The pages and the ledger API: reads need context:read; compact and restore, sessions:compact. */
  const sessionScopes: MiddlewareHandler<DashboardEnv> = async (c, next) => {
    const read = c.req.method === 'GET' || c.req.method === 'HEAD';
    requireScope(c, c.get('principal'), read ? 'context:read' : 'sessions:compact');
    await next();
  };
  /** 403 naming the scope `principal` lacks, logged with its key id. */
  const requireScope = (c: Context<DashboardEnv>, principal: Principal, scope: Scope) => {
    if (principal.scopes.includes(scope)) return;
    deps.metrics.authFailed('forbidden');
    deps.logger.info(
      {
        reason: 'missing_scope',
        scope,
        ...(principal.keyId ? { keyId: principal.keyId } : {}),
        path: c.req.path,
      },
      'authorization failed',
    );
    throw new ApiError('permission_error', `this credential lacks the scope "${scope}"`);
  };

  // Open (--insecure): this machine's Host and Origin only, against DNS rebinding (loopback-guard.ts).
  if (open && options.loopbackOnly)
    app.use(
      '*',
      loopbackOnly((message) => errorResponse('permission_error', message)),
    );
  // Health checks answer without credentials; /metrics needs the admin.
  app.route(
    '/',
    opsRoutes({
      registry: deps.metrics.registry,
      ready: deps.ready,
      metricsGuard: [auth, adminOnly],
      logger: deps.logger,
      // /readyz's details (ms, errors) for the admin only.
      // Through the throttle: a token guessed at /readyz counts as any failed authentication.
      mayReadDetails: async (c) => {
        if (open) return true;
        const admitted = await admit(c);
        return admitted.ok && admitted.principal.role === 'admin';
      },
    }),
  );
  app.use('*', auth);
  app.use('*', sameOriginWrites);
  app.use(
    '*',
    bodyLimit({
      maxSize: 64 * 1024,
      onError: () => errorResponse('request_too_large', 'request body too large'),
    }),
  );

  app.use('/queues', adminOnly);
  app.use('/queues/*', adminOnly);
  app.route('/queues', bullBoard(deps.queues, { readOnly, viewsPath: deps.bullBoardViews }));

  for (const path of ['/api/*', '/', '/sessions', '/sessions/*']) app.use(path, sessionScopes);
  app.route('/api', apiRoutes({ ...deps, readOnly }));

  // The admin without `?tenant=` gets every tenant (one more row than shown, to tell if more exist).
  const adminLanding = async (c: Context<DashboardEnv>) =>
    htmlPage(
      c,
      renderAdminLanding(c.get('nonce'), await landingData(deps.db, undefined, LANDING_TENANTS + 1)),
    );
  app.get('/', scopeTenant(adminLanding), async (c) => {
    const data = await landingData(deps.db, c.get('tenantId'), 1);
    return htmlPage(c, renderTenantLanding(pageContext(c, readOnly), data));
  });
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('/sessions', scopeTenant(tenantPrompt), async (c) => {
    const page = await listSessions(deps.db, c.get('tenantId'), {
      limit: 50,
      cursor: c.req.query('cursor') || undefined,
    }).catch(badCursor);
    return htmlPage(c, renderSessionList(pageContext(c, readOnly), page));
  });
  app.get('/sessions/:sessionId', scopeTenant(), async (c) => {
    const session = await ownSession(deps.db, c.get('tenantId'), c.req.param('sessionId'));
    const [ledger, context] = await Promise.all([
      listLedger(deps.db, session.tenantId, session.id, { limit: PAGE_LEDGER_ROWS }),
      liveContext(deps.db, session.tenantId, session.id, {
        last: CONTEXT_ROWS,
        preview: CONTEXT_PREVIEW_CHARS,
      }),
    ]);
    const html = renderSessionPage(
      pageContext(c, readOnly),
      session,
      ledger.items,
      ledger.nextCursor !== null,
      context,
    );
    return htmlPage(c, html);
  });

  app.get('/sessions/:sessionId/compactions/:compactionId', scopeTenant(), async (c) => {
    const session = await ownSession(deps.db, c.get('tenantId'), c.req.param('sessionId'));
    const id = parseInput(compactionId, c.req.param('compactionId'), 'path.compactionId');
    const row = await ownCompaction(deps.db, session.tenantId, session.id, id);
    const cursor = c.req.query('cursor') || undefined;
    const archived = await listArchived(deps.db, row, {
      limit: PAGE_ARCHIVED_ROWS,
      cursor,
      content: false,
      preview: PREVIEW_CHARS,
    }).catch(badCursor);
    const html = renderDetailsPage(pageContext(c, readOnly), session, row, archived, {
      firstPage: cursor === undefined,
    });
    return htmlPage(c, html);
  });

  app.notFound((c) => respondError(c, new ApiError('not_found_error', 'not found')));
  app.onError((error, c) => {
    if (error instanceof ApiError) return respondError(c, error);
    deps.logger.error({ err: error, method: c.req.method, path: c.req.path }, 'dashboard request failed');
    return respondError(c, new ApiError('api_error', 'internal error'));
  });
  return app;
}

/** The landing page's lists, of one tenant or (undefined) of all; `tenants` rows at most. */
async function landingData(db: ApiDeps['db'], tenantId: string | undefined, tenants: number) {
  const since = new Date(Date.now() - FAILING_WINDOW_MS);
  const [totals, biggest, failing] = await Promise.all([
    tenantTotals(db, { tenantId, limit: tenants }),
    biggestSessions(db, { tenantId, limit: LANDING_ROWS }),
    failingSessions(db, { tenantId, since, limit: LANDING_ROWS }),
  ]);
  return { tenants: totals, biggest, failing };
}

/** A cursor the pages did not hand out is bad input. */
function badCursor(error: unknown): never {
  if (error instanceof BadCursorError)
    throw new ApiError('invalid_request_error', `query.cursor: ${error.message}`);
  throw error;
}

function tenantPrompt(c: Context<DashboardEnv>) {
  return htmlPage(c, renderTenantPrompt(c.get('nonce')));
}

function pageContext(c: Context<DashboardEnv>, readOnly: boolean) {
  return {
    nonce: c.get('nonce'),
    tenantId: c.get('tenantId'),
    admin: c.get('principal').role === 'admin',
    readOnly,
  };
}

/** An HTML page under a CSP that allows only the pages' stylesheet and this response's inline script. */
function htmlPage(c: Context<DashboardEnv>, html: string) {
  const nonce = c.get('nonce');
  c.header(
    'content-security-policy',
    `default-src 'none'; style-src ${STYLE_SOURCE}; script-src 'nonce-${nonce}'; connect-src 'self'; ` +
      "img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  );
  c.header('cache-control', 'no-store');
  return c.html(html);
}

/**
 * JSON in the HTTP API's shape (`{ error: { type, message, field? } }`) for the ledger API, Bull
 * Board's API and /metrics; a small page for the pages.
 */
function respondError(c: Context<DashboardEnv>, error: ApiError) {
  const path = c.req.path;
  if (path.startsWith('/sessions') || path === '/') {
    c.status(error.status);
    return htmlPage(c, renderErrorPage(error.status, error.message, c.get('nonce') ?? ''));
  }
  return c.json(error.body(), error.status);
}

/** An error answered before the app's handlers run (the body limit, the loopback guard). */
function errorResponse(type: ApiErrorType, message: string): Response {
  const error = new ApiError(type, message);
  return Response.json(error.body(), { status: error.status });
}

/**
 * Refuses writes (anything but GET/HEAD/OPTIONS) sent by a page of another site: browsers send
 * `Origin` (and `Sec-Fetch-Site`) on those, and resend cached basic-auth credentials with them.
 * Comparing `Origin` with `Host` holds only where credentials are needed (a page rebinding its own
 * name to this server has none to send); an open server checks `Host` and `Origin` against its
 * loopback origins first (loopback-guard.ts).
 */
const sameOriginWrites: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (!['GET', 'HEAD', 'OPTIONS'].includes(c.req.method)) {
    const origin = c.req.header('origin');
    const site = c.req.header('sec-fetch-site');
    let sameHost = true;
    if (origin !== undefined) {
      try {
        sameHost = new URL(origin).host === c.req.header('host');
      } catch {
        sameHost = false;
      }
    }
    if (!sameHost || (site !== undefined && site !== 'same-origin' && site !== 'none')) {
      throw new ApiError('permission_error', 'cross-site request refused');
    }
  }
  await next();
};

/** A running dashboard. */
export interface Dashboard extends Listening {
  app: Hono<DashboardEnv>;
}

/**
 * Starts `compactor dashboard` on `services`: checks it may start, opens the queues, the producer
 * and the readiness probe, and listens.
 * @throws {DashboardConfigError} without credentials, unless `insecure` on a loopback host.
 * @throws {Error} when the address cannot be bound.
 */
export async function startDashboard(
  services: Services,
  options: { port: number; host: string; readOnly: boolean; insecure: boolean },
): Promise<Dashboard> {
  const { config, logger } = services;
  const credentials = await serverCredentials(services, options);
  // First: it can refuse to start, before anything is opened.
  const views = offlineBullBoardViews();
  const link = services.queues.link();
  const [compaction, sweep, webhooks] = [COMPACTION_QUEUE, SWEEP_QUEUE, WEBHOOKS_QUEUE].map(
    (name) => new services.queues.Queue(name, { ...link.options }),
  ) as [Queue, Queue, Queue];
  const queues = [compaction, sweep, webhooks];
  for (const queue of queues) services.queueState.watch(queue, `${queue.name} queue`);
  const producer = createProducer({
    ...connectionOf(config),
    prefix: config.queuePrefix,
    // On Postgres the backlog counts go through the services' pool, not one of the producer's own.
    db: services.database.db,
  });
  // Its events connection blocks on reads, so it gets one of its own.
  const jobs = createJobWaiter(compaction, services.queues);
  const probe = readinessProbe(services.redis, services.database.sql);
  const metrics = createDashboardMetrics();
  metrics.watchQueues(queues);
  const app = createDashboardApp(
    {
      db: services.database.db,
      enqueue: (event) => producer.runCompleted(event),
      jobs,
      leases: services.leases,
      queues,
      bullBoardViews: views.path,
      metrics,
      ready: () => probe.check(),
      logger,
    },
    { readOnly: options.readOnly, credentials, loopbackOnly: options.insecure },
  );
  const cleanup = () =>
    runAll(logger, [
      ...queues.map((q) => () => q.close()),
      () => producer.close(),
      () => jobs.close(),
      () => probe.close(),
      () => link.close(),
      () => services.close(),
      () => views.remove(),
    ]);
  return { ...(await listenOwning(app, options, logger, cleanup)), app };
}
