/**
 * `compactor` commands against a database they cannot use: each prints one line, the cause and
 * what to do (never drizzle's SQL text, never the password), and exits 1. The commands run
 * in-process through the CLI's entry (see `runCli`); test/e2e/cli.test.ts covers the real process.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { databaseUrlFor, REDIS_URL } from '../support/env.ts';
import { adminStatement } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';

const EMPTY = `compactor_cli_empty_${randomBytes(4).toString('hex')}`;

/** Runs `compactor <args>` against `databaseUrl`; expects exit code 1 and one line on stderr. */
async function failing(args: string[], databaseUrl: string): Promise<string> {
  const result = await runCli(args, {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    COMPACTOR_LOG_LEVEL: 'warn',
  });
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  return lines[0] as string;
}

beforeAll(async () => {
  await adminStatement(`create database "${EMPTY}"`);
});

afterAll(async () => {
  await adminStatement(`drop database if exists "${EMPTY}" with (force)`);
});

describe('compactor on a database it cannot use', () => {
  it('no schema: each command says so before doing anything', async () => {
    const url = databaseUrlFor(EMPTY);
    const hint = `no compactor tables in schema "compactor" of database "${EMPTY}": run \`compactor migrate\``;
    expect(await failing(['history', '--tenant', 't', '--session', 's'], url)).toBe(
      `compactor history: ${hint}`,
    );
    expect(await failing(['sessions', 'list', '--tenant', 't'], url)).toBe(
      `compactor sessions list: ${hint}`,
    );
    expect(await failing(['policy', 'list', '--tenant', 't'], url)).toBe(`compactor policy list: ${hint}`);
    expect(await failing(['sweep', '--dry-run'], url)).toBe(`compactor sweep: ${hint}`);
  });

  it('connection refused: host and port, not the password', async () => {
    const port = await freePort();
    const line = await failing(
      ['context', '--tenant', 't', '--session', 's'],
      `postgres://postgres:hunter2@127.0.0.1:${port}/compactor`,
    );
    expect(line).toBe(
      `compactor context: connection refused at 127.0.0.1:${port}: is PostgreSQL running there? (DATABASE_URL)`,
    );
  });

  it('a database that does not exist: its name and how to create it', async () => {
    const name = `${EMPTY}_missing`;
    const url = databaseUrlFor(name);
    const hint = `database "${name}" does not exist: create it (createdb ${name}) or point DATABASE_URL at another`;
    expect(await failing(['history', '--tenant', 't', '--session', 's'], url)).toBe(
      `compactor history: ${hint}`,
    );
    expect(await failing(['migrate'], url)).toBe(`compactor migrate: ${hint}`);
  });
});
