/**
 * `compactor dev` on a configured database, as a user runs it: a child process of the real bin
 * script on this machine's Postgres and Redis. A database that does not exist yet is created (as
 * `compactor demo` does) and every URL the command prints answers 200 with the credentials it
 * prints; a server it cannot reach fails at once in one line. The embedded database's `dev` is
 * embedded-cli.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseUrlFor, REDIS_URL } from '../support/env.ts';
import { adminStatement, cleanRedis, testPrefix } from '../support/fixtures.ts';
import { patient } from '../support/patience.ts';
import { freePort } from '../support/ports.ts';
import { type Child, killAllChildren, runCompactor, startCompactor } from '../support/processes.ts';

const MISSING = `compactor_dev_${randomBytes(4).toString('hex')}`;
const prefix = testPrefix();

afterAll(async () => {
  await killAllChildren();
  await cleanRedis(prefix);
  await adminStatement(`drop database if exists "${MISSING}" with (force)`);
});

/** What every run gets: Redis, this file's queue prefix, any free server ports. */
function env(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix,
    COMPACTOR_LOG_LEVEL: 'warn',
    COMPACTOR_API_PORT: '0',
    COMPACTOR_DASHBOARD_PORT: '0',
  };
}

/** Resolves with stdout once it holds `text`; rejects when the child ends first. */
function printed(child: Child, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!child.output().stdout.includes(text)) return;
      child.stdout?.off('data', check);
      resolve(child.output().stdout);
    };
    child.stdout?.on('data', check);
    check();
    child.done.then((run) =>
      reject(new Error(`exited ${run.code} before printing "${text}": ${run.stderr}`)),
    );
  });
}

/** Each URL `dev` printed (the lines `api`, `dashboard`), with the header its credentials make. */
function printedUrls(stdout: string): Array<{ url: string; authorization: string }> {
  const api = /^api +(\S+) +Authorization: Bearer (\S+)$/m.exec(stdout);
  const dashboard = /^dashboard +(\S+) +user (\S+), password (\S+)$/m.exec(stdout);
  expect(api, stdout).not.toBeNull();
  expect(dashboard, stdout).not.toBeNull();
  const basic = Buffer.from(`${dashboard?.[2]}:${dashboard?.[3]}`).toString('base64');
  return [
    { url: api?.[1] as string, authorization: `Bearer ${api?.[2]}` },
    { url: dashboard?.[1] as string, authorization: `Basic ${basic}` },
  ];
}

describe('compactor dev on a configured database', () => {
  it(
    'creates a database that does not exist, and every URL it prints answers 200 with its credentials',
    async () => {
      const child = startCompactor(['dev'], env(databaseUrlFor(MISSING)));
      const stdout = await printed(child, 'Ctrl-C stops everything.');
      expect(child.output().stderr).toContain(`compactor dev: created database ${MISSING}\n`);

      const urls = printedUrls(stdout);
      expect(urls.map((u) => new URL(u.url).pathname)).toEqual(['/v1', '/']);
      for (const { url, authorization } of urls) {
        const answer = await fetch(url, { headers: { authorization } });
        expect(answer.status, `${url}: ${await answer.clone().text()}`).toBe(200);
      }
      // The API's URL says where to go next, and each path it names is served there.
      const index = (await (await fetch(urls[0]?.url as string)).json()) as { openapi: string; mcp: string };
      expect(index).toMatchObject({ openapi: '/v1/openapi.json', mcp: '/v1/mcp' });
      const origin = new URL(urls[0]?.url as string).origin;
      const openapi = await fetch(`${origin}${index.openapi}`);
      expect(openapi.status).toBe(200);
      expect(Object.keys(((await openapi.json()) as { paths: object }).paths)).toContain('/v1');

      child.kill('SIGINT');
      const run = await child.done;
      expect(run.code, run.stderr).toBe(0);
    },
    patient(60_000),
  );

  it(
    'fails at once in one line when the server cannot be reached',
    async () => {
      const port = await freePort();
      const run = await runCompactor(['dev'], env(`postgres://postgres:hunter2@127.0.0.1:${port}/compactor`));
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `compactor dev: connection refused at 127.0.0.1:${port}: is PostgreSQL running there? (DATABASE_URL)\n`,
      );
    },
    patient(30_000),
  );
});
