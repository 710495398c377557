/**
 * docker-compose.yml, read as Compose reads it (YAML merge keys, `${VAR:-default}` interpolation)
 * without a Docker engine: the settings the stack's guarantees rest on, and an environment each
 * compactor service accepts.
 */
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../worker/config/config.ts';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  expose?: string[];
  container_name?: string;
  healthcheck?: { test: string[]; interval?: string; start_period?: string };
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
  stop_grace_period?: string;
}

let compose: { services: Record<string, Service>; volumes: Record<string, unknown> };

/** Compose's `${VAR:-default}` / `${VAR}` interpolation with an empty environment. */
function interpolate(value: string): string {
  return value.replace(
    /\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g,
    (_m, _name, fallback: string | undefined) => fallback ?? '',
  );
}

function service(name: string): Service {
  const s = compose.services[name];
  if (!s) throw new Error(`no service "${name}"`);
  return s;
}

function env(name: string, extra: Record<string, string> = {}): Record<string, string> {
  const raw = service(name).environment ?? {};
  return {
    ...Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, interpolate(String(v))])),
    ...extra,
  };
}

beforeAll(async () => {
  const text = await readFile(new URL('../../docker-compose.yml', import.meta.url), 'utf8');
  compose = parse(text, { merge: true });
});

describe('docker-compose.yml', () => {
  it('runs Redis with an append-only file and noeviction, on a volume', () => {
    const redis = service('redis');
    const command = redis.command as string[];
    expect(command[0]).toBe('redis-server');
    expect(command[command.indexOf('--appendonly') + 1]).toBe('yes');
    expect(command[command.indexOf('--maxmemory-policy') + 1]).toBe('noeviction');
    expect(redis.volumes).toContain('redis-data:/data');
    expect(redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('runs Postgres on a volume, with a health check', () => {
    const pg = service('postgres');
    expect(pg.image).toMatch(/^postgres:1[5-9]/);
    expect(pg.volumes).toContain('postgres-data:/var/lib/postgresql/data');
    expect(pg.healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(Object.keys(compose.volumes).sort()).toEqual(['postgres-data', 'redis-data']);
  });

  it('migrates once, after Postgres is healthy', () => {
    const migrate = service('migrate');
    expect(migrate.command).toEqual(['migrate']);
    expect(migrate.restart).toBe('no');
    expect(migrate.depends_on?.postgres).toEqual({ condition: 'service_healthy' });
  });

  it('runs a worker that scales and reports its health', () => {
    const worker = service('worker');
    expect((worker.command as string[])[0]).toBe('worker');
    // --scale worker=N needs no fixed name and no host port.
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
    const e = env('worker');
    expect(e.COMPACTOR_METRICS_PORT).toBe('9464');
    expect(worker.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${e.COMPACTOR_METRICS_PORT}/healthz`);
    expect(worker.depends_on).toEqual({
      redis: { condition: 'service_healthy' },
      migrate: { condition: 'service_completed_successfully' },
    });
    expect(worker.stop_grace_period).toBeDefined();
    expect(worker.restart).toBe('unless-stopped');
  });

  it('runs the dashboard with credentials from the environment, on the host loopback only', () => {
    const dashboard = service('dashboard');
    const command = dashboard.command as string[];
    expect(command[0]).toBe('dashboard');
    expect(command).not.toContain('--insecure');
    const raw = dashboard.environment ?? {};
    for (const name of [
      'COMPACTOR_DASHBOARD_TOKEN',
      'COMPACTOR_DASHBOARD_USER',
      'COMPACTOR_DASHBOARD_PASSWORD',
      'COMPACTOR_DASHBOARD_TOKENS',
    ]) {
      expect(raw[name]).toBe(`\${${name}:-}`); // from the user's environment, no default secret
    }
    const port = command[command.indexOf('--port') + 1];
    expect(dashboard.ports?.map(interpolate)).toEqual([`127.0.0.1:3000:${port}`]);
    expect(dashboard.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${port}/healthz`);
    expect(dashboard.depends_on?.redis).toEqual({ condition: 'service_healthy' });
    expect(dashboard.depends_on?.migrate).toEqual({ condition: 'service_completed_successfully' });
  });

  it('gives every compactor service an environment it accepts, pointed at the stack', () => {
    for (const name of ['migrate', 'worker', 'dashboard']) {
      const e = env(
        name,
        name === 'dashboard' ? { COMPACTOR_DASHBOARD_TOKEN: 'a-token-of-sixteen-chars' } : {},
      );
      const config = loadConfig(e);
      expect(config.databaseUrl).toMatch(/@postgres:5432\//);
      expect(config.redisUrl).toBe('redis://redis:6379');
      expect(service(name).image).toBe('compactor:local');
    }
    // Loopback by default; exposing it to the network is the operator's choice, with a token.
    expect(loadConfig(env('worker')).metrics).toEqual({ port: 9464, host: '127.0.0.1', token: undefined });
  });
});
