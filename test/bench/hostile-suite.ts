/**
 * Part 13 of `npm run bench` (alone: `npm run bench -- --parts 13`): the API's memory through the
 * whole hostile-input suite. The cases of test/security/hostile-input.test.ts (hostile-cases.ts:
 * every operation that takes input, each session format's malformed messages, the MCP server's
 * JSON-RPC, decompression bombs and bodies at the size limit included) are sent one after the
 * other to `compactor api` built and in a process of its own, as it starts by default (heap
 * bounded, default body limit), and its RSS is sampled throughout. The test judges the answers;
 * this part reports the process's peak RSS (target: under 512 MB) and high-water mark.
 *
 * Only the request rate is raised, and the cases come from many loopback addresses (so that they
 * are answered rather than counted against the rate or the failed-authentication throttle): the
 * cases are about input, as in the test.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type postgres from 'postgres';
import { Agent, fetch } from 'undici';
import { openDatabase } from '../../producer/postgres/db.ts';
import { DEFAULT_API_MAX_BODY_BYTES } from '../../worker/config/config.ts';
import { openApiDocument } from '../../worker/http/api/openapi.ts';
import { createKey } from '../../worker/postgres/api-keys.ts';
import {
  type Caller,
  formatCases,
  type HostileCase,
  mcpCases,
  operationCases,
  operationsOf,
  type Target,
  takesInput,
} from '../security/hostile-cases.ts';
import { HOSTILE_TARGET, hostileRequest, seedHostileSessions } from '../security/hostile-setup.ts';
import { answerOf } from '../support/answers.ts';
import { REDIS_URL } from '../support/env.ts';
import { buildCli, startApiProcess } from './noisy-neighbor.ts';
import { fmt } from './report.ts';

/** A section writer, as `Report.section`. */
type Section = (title: string, header: string[], rows: string[][], notes?: string[]) => void;

/**
 * Runs part 13 on database `url` (migrated), under the queue prefix `prefix()` gives.
 * @param apiNodeOptions the API process's `NODE_OPTIONS`; '' for none.
 */
export async function hostileSuite(
  url: string,
  _sql: postgres.Sql,
  prefix: () => string,
  section: Section,
  apiNodeOptions: string,
): Promise<void> {
  const database = openDatabase(url, { max: 2 });
  const target: Target = { maxBodyBytes: DEFAULT_API_MAX_BODY_BYTES, ...HOSTILE_TARGET, keyId: '' };
  const tokens = { acme: `bench-acme-${randomUUID()}`, globex: `bench-globex-${randomUUID()}` };
  const admin = `bench-admin-${randomUUID()}`;
  let reader = '';
  try {
    await seedHostileSessions(database.db);
    reader = (await createKey(database.db, { tenantId: 'acme', name: 'reader', scopes: ['context:read'] }))
      .secret;
    target.keyId = (await createKey(database.db, { tenantId: 'acme', name: 'rotation target' })).key.id;
  } finally {
    await database.close();
  }
  const cli = await buildCli();
  const env = {
    DATABASE_URL: url,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix(),
    COMPACTOR_LOG_LEVEL: 'warn',
    COMPACTOR_DASHBOARD_TOKEN: admin,
    COMPACTOR_LIMIT_REQUESTS_PER_SECOND: '100000',
    COMPACTOR_LIMIT_BURST: '1000000',
  };
  const api = await startApiProcess(cli, env, tokens, apiNodeOptions);
  const authorization: Record<Caller, string | undefined> = {
    acme: `Bearer ${tokens.acme}`,
    admin: `Bearer ${admin}`,
    reader: `Bearer ${reader}`,
    nobody: undefined,
  };
  try {
    const operations = operationsOf(openApiDocument()).filter(takesInput);
    const cases = [
      ...operations.flatMap((op) => operationCases(op, target)),
      ...formatCases(target),
      ...mcpCases(target),
    ];
    api.rss.reset();
    const started = performance.now();
    const statuses = new Map<string, number>();
    for (const [n, c] of cases.entries()) {
      const status = await send(api.url, c, target, authorization[c.as], n);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    const ms = performance.now() - started;
    const peak = api.rss.reset();
    const hwm = await api.rss.highWater();
    const mb = (kb: number) => `${fmt(kb / 1024, 0)} MB`;
    const counts = [...statuses]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, n]) => `${n}× ${status}`)
      .join(', ');
    section(
      `13. The hostile-input suite against compactor api (its own process${apiNodeOptions ? `, ${apiNodeOptions}` : ', as it starts by default'})`,
      ['requests', 'wall s', 'API peak RSS (target < 512 MB)', 'high-water mark (VmHWM)'],
      [
        [
          String(cases.length),
          fmt(ms / 1000, 1),
          `**${mb(peak)}** (${peak < 512 * 1024 ? 'met' : 'missed'})`,
          mb(hwm),
        ],
      ],
      [
        `Answered ${counts}. The cases of test/security/hostile-input.test.ts, one after the other: every operation that takes input, each session format's malformed messages and the MCP server's JSON-RPC, bodies up to the default limit (${fmt(DEFAULT_API_MAX_BODY_BYTES / 2 ** 20, 0)} MiB), a 3.9 MB body nested 1,950,000 deep and decompression bombs included. Default limits but the request rate (raised, so that each case is answered); RSS is sampled every 50 ms from /proc. The test judges the answers; this part measures the process.`,
      ],
    );
  } finally {
    api.stop();
    await Promise.all(CLIENTS.map((client) => client.close()));
  }
}

/**
 * Client addresses the cases are sent from, in turn: the API throttles a client after 10 refused
 * credentials a minute (auth-throttle.ts), and the cases refuse many; from one address every case
 * after the tenth would be answered 429 before its body is read.
 */
const CLIENTS = Array.from({ length: 200 }, (_, i) => clientAt(`127.0.1.${i + 1}`));

/** An HTTP client whose connections leave from `localAddress` (undici's own connector ignores it). */
function clientAt(localAddress: string): Agent {
  return new Agent({
    connect: (options, done) => {
      const socket = connect({ host: options.hostname, port: Number(options.port), localAddress });
      socket.once('connect', () => done(null, socket));
      socket.once('error', (error) => done(error, null));
    },
  });
}

/** Sends case `c` from client `n` (of {@link CLIENTS}): its status, or `no answer`. */
async function send(
  base: string,
  c: HostileCase,
  target: Target,
  auth: string | undefined,
  n: number,
): Promise<string> {
  const { url, init } = hostileRequest(base, c, target, auth);
  const request = () =>
    fetch(url, { ...init, dispatcher: CLIENTS[n % CLIENTS.length] }) as unknown as Promise<Response>;
  return answerOf(request).then(
    (answer) => String(answer.status),
    () => 'no answer',
  );
}
