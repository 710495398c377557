/**
 * `compactor key create|list|revoke|rotate` as an operator runs them (the CLI's own entry, on the
 * file's database), checked against a live HTTP API on the same database: a created key works at
 * once with its scopes, is printed once and never listed with its secret, a revoked key is refused
 * on the next request, and a rotation hands over to a new key, at once or after a grace period.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { serverCredentials } from '../../worker/http/credentials.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { runCli } from '../support/cli.ts';
import { REDIS_URL } from '../support/env.ts';
import { silentLogger } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';

const ctx = useIntegration();

let server: Listening;

beforeAll(async () => {
  server = await startKeyedApi(ctx);
});

const run = (...args: string[]) =>
  runCli(args, { DATABASE_URL: ctx.tdb.url, REDIS_URL, COMPACTOR_LOG_LEVEL: 'warn' });

/** A request to the API with `key`; resolves with the status. */
async function statusWith(key: string, method: string, path: string): Promise<number> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}` },
  });
  await response.body?.cancel();
  return response.status;
}

/** `key create`, which must succeed; its printed JSON. */
async function create(...args: string[]) {
  const created = await run('key', 'create', ...args);
  expect(created.code, created.stderr).toBe(0);
  expect(created.stderr).toContain('shown this once');
  return JSON.parse(created.stdout) as { id: string; prefix: string; secret: string; scopes: string[] };
}

describe('compactor key', () => {
  it('creates a scoped key that works at once, printed once and listed without its secret', async () => {
    const key = await create('--tenant', 'acme', '--name', 'acme reader', '--scopes', 'context:read');
    expect(key.secret.startsWith(`${key.prefix}_`)).toBe(true);
    expect(key.prefix).toMatch(/^cpt_[0-9a-f]{16}$/);
    expect(key.scopes).toEqual(['context:read']);
    expect(await statusWith(key.secret, 'GET', '/v1/sessions/none/context')).toBe(404);
    expect(await statusWith(key.secret, 'DELETE', '/v1/sessions/none')).toBe(403);

    const table = await run('key', 'list', '--tenant', 'acme');
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(key.prefix);
    expect(table.stdout).toContain('context:read');
    const json = await run('key', 'list', '--json');
    const listed = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(listed.map((k: { id: string }) => k.id)).toContain(key.id);
    for (const output of [table.stdout, json.stdout]) expect(output).not.toContain(key.secret.slice(21));
    const stored = await ctx.tdb.database.sql`select * from api_keys`;
    expect(JSON.stringify(stored)).not.toContain(key.secret.slice(21));
  });

  it('revokes a key: the next request with it is refused, and it leaves the list', async () => {
    const key = await create('--admin', '--name', 'on-call', '--expires-in', '30d');
    expect(key.prefix).toMatch(/^cpa_/);
    expect(await statusWith(key.secret, 'GET', '/v1/admin/keys')).toBe(200);
    const revoked = await run('key', 'revoke', '--id', key.id);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout).state).toBe('revoked');
    expect(await statusWith(key.secret, 'GET', '/v1/admin/keys')).toBe(401);
    expect((await run('key', 'list', '--admin', '--json')).stdout).not.toContain(key.id);
    expect((await run('key', 'list', '--admin', '--all', '--json')).stdout).toContain(key.id);
    const again = await run('key', 'revoke', '--id', key.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('nothing revoked');
  });

  it('rotates a key: the new one has its scopes; the old one ends now, or after the grace', async () => {
    const first = await create(
      '--tenant',
      'globex',
      '--name',
      'globex agents',
      '--scopes',
      'context:read,events:write',
    );
    const rotated = await run('key', 'rotate', '--id', first.id, '--grace', '1h');
    expect(rotated.code, rotated.stderr).toBe(0);
    const second = JSON.parse(rotated.stdout);
    expect(second).toMatchObject({ tenantId: 'globex', name: 'globex agents', rotatedFrom: first.id });
    expect(second.scopes).toEqual(['context:read', 'events:write']);
    expect(second.old.id).toBe(first.id);
    for (const key of [first.secret, second.secret]) {
      expect(await statusWith(key, 'GET', '/v1/sessions/none/context')).toBe(404);
    }
    const third = JSON.parse((await run('key', 'rotate', '--id', second.id)).stdout);
    expect(await statusWith(second.secret, 'GET', '/v1/sessions/none/context')).toBe(401);
    expect(await statusWith(third.secret, 'GET', '/v1/sessions/none/context')).toBe(404);
  });

  it('lets a server without environment credentials start once a usable key is issued', async () => {
    await ctx.tdb.database.sql`
      update api_keys set revoked_at = now() where revoked_at is null or revoked_at > now()`;
    const services = {
      config: {
        ...ctx.config,
        dashboard: {
          ...ctx.config.dashboard,
          adminToken: undefined,
          adminUser: undefined,
          adminPassword: undefined,
          tenantTokens: [],
        },
      },
      logger: silentLogger,
      database: ctx.tdb.database,
    };
    const options = { host: '0.0.0.0', insecure: false };
    await expect(serverCredentials(services, options)).rejects.toThrow(
      /issue a key \(compactor key create\)/,
    );
    await create('--tenant', 'acme', '--name', 'first-key');
    const credentials = await serverCredentials(services, options);
    expect(credentials.keys).toBeDefined();
  });

  it('refuses bad input, naming it, and writes nothing', async () => {
    const before = await ctx.tdb.database.sql`select count(*)::int as n from api_keys`;
    const usage: Array<[string[], string]> = [
      [['key', 'create', '--name', 'x'], 'either --tenant T'],
      [['key', 'create', '--name', 'x', '--tenant', 'acme', '--admin'], 'either --tenant T'],
      [
        ['key', 'create', '--name', 'x', '--tenant', 'acme', '--scopes', 'context:read,purge'],
        'unknown scope "purge"',
      ],
      [
        ['key', 'create', '--name', 'x', '--tenant', 'acme', '--expires-in', 'soon'],
        '--expires-in must be a duration',
      ],
      [['key', 'rotate', '--id', '0123456789abcdef', '--grace', '-1h'], '--grace'],
    ];
    for (const [args, message] of usage) {
      const answer = await run(...args);
      expect(answer.code, args.join(' ')).toBe(2);
      expect(answer.stderr).toContain(message);
    }
    const refused: Array<[string[], string]> = [
      [
        ['key', 'create', '--name', 'x', '--tenant', 'acme', '--scopes', 'admin'],
        '"admin" is for admin keys only',
      ],
      [['key', 'create', '--name', 'x', '--tenant', 'bad tenant'], 'tenant'],
      [['key', 'revoke', '--id', 'not-an-id'], 'must be a key id'],
      [['key', 'rotate', '--id', '0123456789abcdef'], 'nothing rotated'],
    ];
    for (const [args, message] of refused) {
      const answer = await run(...args);
      expect(answer.code, args.join(' ')).toBe(1);
      expect(answer.stderr).toContain(message);
    }
    expect(await ctx.tdb.database.sql`select count(*)::int as n from api_keys`).toEqual(before);
  });
});
