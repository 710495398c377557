/**
 * Hostile input over every route that takes any, as `compactor api` serves it (real HTTP, issued
 * keys beside the environment's tokens, large bodies handled in worker threads on the file's
 * database): the REST operations of the OpenAPI document, each session format's messages, and the
 * MCP server. The cases are data (hostile-cases.ts), generated per operation from the document, so
 * a route that takes input and has no cases fails here. Every request must be answered below 500,
 * with the documented error shape (the REST `{ error: { type, message, field? } }` at its type's
 * status; JSON-RPC errors on MCP, never "internal error"), naming the field where the API promises
 * it; and a refused request must write nothing: every table's rows (count and content) and the
 * queue's jobs are the same after it as before.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../shared/policy/limits.ts';
import { createApiApp } from '../../worker/http/api/index.ts';
import { apiOffload } from '../../worker/http/api/offload.ts';
import { openApiDocument } from '../../worker/http/api/openapi.ts';
import { MCP_PATH } from '../../worker/http/api/routes.ts';
import { TenantLimits } from '../../worker/http/api/tenant-limits.ts';
import { apiErrorSchema, ERROR_STATUS } from '../../worker/http/errors.ts';
import { type Listening, listen } from '../../worker/http/ops.ts';
import { createKey, keyStore } from '../../worker/postgres/api-keys.ts';
import { PolicyCache } from '../../worker/postgres/policy-cache.ts';
import { answerOf } from '../support/answers.ts';
import { useIntegration } from '../support/integration.ts';
import {
  type Caller,
  formatCases,
  type HostileCase,
  mcpCases,
  operationCases,
  operationsOf,
  type Target,
  takesInput,
  VALID_BODIES,
} from './hostile-cases.ts';
import { HOSTILE_TARGET, hostileRequest, seedHostileSessions } from './hostile-setup.ts';

const ctx = useIntegration();

const TOKENS = { acme: 'hostile-acme-token-3f9c1d', globex: 'hostile-globex-token-7a2e4b' } as const;
const ADMIN_TOKEN = 'hostile-admin-token-5e8d2c';
/** The body limit: above the 3.9 MB MCP body, so that its nesting is what is refused. */
const MAX_BODY = 4 * 2 ** 20;

const operations = operationsOf(openApiDocument());
const inputOperations = operations.filter(takesInput);

let server: Listening;
let readerKey = '';
const target: Target = { maxBodyBytes: MAX_BODY, ...HOSTILE_TARGET, keyId: '' };
/** Requests sent, and their statuses. */
const sent = new Map<number, number>();

beforeAll(async () => {
  const db = ctx.tdb.database.db;
  const offload = apiOffload({ maxBodyBytes: MAX_BODY, database: { url: ctx.tdb.url } });
  ctx.onTeardown(() => offload.close());
  const app = createApiApp(
    {
      db,
      producer: ctx.producer,
      offload,
      // A rate no suite of requests in a row reaches: the cases are about input, not about rates.
      limits: new TenantLimits({
        policies: new PolicyCache(db),
        defaults: { ...DEFAULT_LIMITS, requestsPerSecond: 1_000_000, burst: 10_000_000 },
      }),
    },
    {
      credentials: {
        adminToken: ADMIN_TOKEN,
        adminUser: undefined,
        adminPassword: undefined,
        tenantTokens: Object.entries(TOKENS).map(([tenantId, token]) => ({ tenantId, token })),
        keys: keyStore(db),
      },
      authThrottle: { failures: 100_000 },
      maxBodyBytes: MAX_BODY,
    },
  );
  server = await listen(app, 0, '127.0.0.1');
  ctx.onTeardown(() => server.close());

  readerKey = (await createKey(db, { tenantId: 'acme', name: 'reader', scopes: ['context:read'] })).secret;
  target.keyId = (await createKey(db, { tenantId: 'acme', name: 'rotation target' })).key.id;
  await seedHostileSessions(db, async () => {
    // The anthropic session compacted, so that it has an archive.
    const outcome = await ctx.compactInProcess({
      tenantId: 'acme',
      sessionId: HOSTILE_TARGET.sessions.anthropic,
      strategy: { type: 'slidingWindow', maxMessages: 3 },
    });
    expect(outcome.row?.status).toBe('applied');
  });
});

// ---------------------------------------------------------------------------------------------
// Sending and judging

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
  body: any;
}

function authorization(as: Caller): string | undefined {
  if (as === 'acme') return `Bearer ${TOKENS.acme}`;
  if (as === 'admin') return `Bearer ${ADMIN_TOKEN}`;
  if (as === 'reader') return `Bearer ${readerKey}`;
  return undefined;
}

async function send(c: HostileCase): Promise<Answer> {
  const { url, init } = hostileRequest(server.url, c, target, authorization(c.as));
  const answer = await answerOf(() => fetch(url, init));
  sent.set(answer.status, (sent.get(answer.status) ?? 0) + 1);
  return answer;
}

let tables: string[] | undefined;

/**
 * Everything a request could write: each table's row count and a digest of its rows (less
 * `last_used_at`, which authentication touches), and the compaction queue's jobs.
 */
async function written(): Promise<string> {
  const sql = ctx.tdb.database.sql;
  tables ??= (
    await sql<Array<{ name: string }>>`
      select table_name as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`
  ).map((r) => r.name);
  const parts = tables.map(
    (t) =>
      `(select count(*) || ':' || coalesce(md5(string_agg((to_jsonb(x) - 'last_used_at')::text, ',' order by (to_jsonb(x) - 'last_used_at')::text)), '') from "${t}" x) as "${t}"`,
  );
  const [[row], jobs] = await Promise.all([
    sql.unsafe(`select ${parts.join(', ')}`),
    ctx.producer.queue.getJobCounts(),
  ]);
  return JSON.stringify({ ...row, jobs });
}

/** What is wrong with a REST answer to `c`, if anything. */
function restProblems(c: HostileCase, answer: Answer): string[] {
  const problems: string[] = [];
  if (answer.status < 400) return [`accepted with ${answer.status}`];
  if (c.path === MCP_PATH) answer = { ...answer, body: apiErrorOfJsonRpc(answer.body) };
  const shape = apiErrorSchema.safeParse(answer.body);
  if (!shape.success) problems.push('not the documented error shape');
  else if (ERROR_STATUS[shape.data.error.type] !== answer.status)
    problems.push(`type ${shape.data.error.type} at status ${answer.status}`);
  const error = answer.body?.error;
  const fits = (c.expect ?? [{}]).some(
    (o) =>
      (o.status === undefined || o.status === answer.status) &&
      (o.field === undefined ||
        (typeof o.field === 'string' ? error?.field === o.field : o.field.test(String(error?.field)))) &&
      (o.message === undefined || o.message.test(String(error?.message))),
  );
  if (!fits)
    problems.push(`not ${JSON.stringify(c.expect, (_k, v) => (v instanceof RegExp ? String(v) : v))}`);
  return problems;
}

/**
 * `/v1/mcp` answers the API's refusals (credentials, tenant header, body) as a JSON-RPC error whose
 * `data` carries the API error's `type` and `field`: read it back as the API's error shape, so the
 * route's generated cases are judged like every other route's. Anything else is left as it is.
 */
function apiErrorOfJsonRpc(body: Answer['body']): Answer['body'] {
  const error = body?.error;
  if (body?.jsonrpc !== '2.0' || typeof error?.message !== 'string' || typeof error.data?.type !== 'string')
    return body;
  const field = typeof error.data.field === 'string' ? { field: error.data.field } : {};
  return { error: { type: error.data.type, message: error.message, ...field } };
}

/** The text of a JSON-RPC answer's error or tool error, or null when it is neither. */
function mcpErrorText(body: Answer['body']): { text: string; code?: number } | null {
  if (typeof body?.error?.message === 'string') return { text: body.error.message, code: body.error.code };
  if (body?.result?.isError === true)
    return { text: (body.result.content ?? []).map((p: { text?: string }) => p.text ?? '').join(' ') };
  return null;
}

/** What is wrong with an MCP answer to `c`, if anything. */
function mcpProblems(c: HostileCase, answer: Answer): string[] {
  const outcome = c.mcp;
  if (!outcome) return ['no expectation'];
  const answers: Answer['body'][] = Array.isArray(answer.body) ? answer.body : [answer.body];
  const errors = answers.map(mcpErrorText);
  const problems: string[] = [];
  for (const error of errors) {
    if (error === null && outcome.kind !== 'any') problems.push('answered without an error');
    else if (error === null) continue;
    else if (error.code === -32603 || /^internal error$/i.test(error.text.trim()))
      problems.push(`internal error: ${error.text}`);
  }
  if (outcome.kind === 'refused') {
    if (!outcome.status.includes(answer.status))
      problems.push(`status ${answer.status}, not ${outcome.status}`);
    if (outcome.message && !outcome.message.test(errors[0]?.text ?? ''))
      problems.push(`message does not match ${outcome.message}`);
  }
  if (outcome.kind === 'tool-error') {
    if (answer.status !== 200) problems.push(`status ${answer.status}`);
    if (!outcome.message.test(errors[0]?.text ?? ''))
      problems.push(`message does not match ${outcome.message}`);
  }
  return problems;
}

/** What the database and queue held after the last request (each request's "before"). */
let state: string | undefined;

/** Sends each case; the failures, one line each (empty when every case was answered as it must be). */
async function run(cases: HostileCase[]): Promise<string[]> {
  const failures: string[] = [];
  for (const c of cases) {
    const before = state ?? (await written());
    const answer = await send(c).catch((error: Error) => ({
      status: 0,
      body: { thrown: String((error as { cause?: unknown }).cause ?? error) },
    }));
    const problems: string[] = [];
    if (answer.status === 0) problems.push('no answer');
    else if (answer.status >= 500) problems.push(`status ${answer.status}`);
    problems.push(...(c.route === 'mcp' ? mcpProblems(c, answer) : restProblems(c, answer)));
    state = await written();
    if (state !== before) problems.push('wrote');
    if (problems.length > 0)
      failures.push(
        `${c.name}: ${problems.join('; ')} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 240)}`,
      );
  }
  return failures;
}

// ---------------------------------------------------------------------------------------------
// The cases

describe('hostile input', () => {
  it('has cases for every operation of the OpenAPI document that takes input', () => {
    expect(inputOperations.map((op) => op.operationId).sort()).toEqual(
      operations
        .filter((op) => op.operationId !== 'getOpenApiDocument' && op.operationId !== 'getApiIndex')
        .map((op) => op.operationId)
        .sort(),
    );
    for (const op of inputOperations) {
      if (op.body) expect(VALID_BODIES[op.operationId], `a valid body of ${op.operationId}`).toBeDefined();
      const cases = operationCases(op, target);
      expect(cases.length, op.operationId).toBeGreaterThanOrEqual(op.body ? 30 : 5);
    }
  });

  for (const op of inputOperations) {
    it(`${op.method} ${op.path} (${op.operationId}): refused, below 500, writing nothing`, async () => {
      expect(await run(operationCases(op, target))).toEqual([]);
    });
  }

  it('each session format: malformed messages refused naming the field, writing nothing', async () => {
    expect(await run(formatCases(target))).toEqual([]);
  });

  it('MCP: bad JSON-RPC, bad tool arguments and bad bodies refused, never an internal error', async () => {
    expect(await run(mcpCases(target))).toEqual([]);
  });

  it('sent at least 250 requests, none answered 5xx', () => {
    const total = [...sent.values()].reduce((a, b) => a + b, 0);
    console.info(
      `${total} hostile requests: ${[...sent]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${n}× ${status}`)
        .join(', ')}`,
    );
    expect(total).toBeGreaterThanOrEqual(250);
    expect([...sent.keys()].filter((status) => status >= 500)).toEqual([]);
  });
});
