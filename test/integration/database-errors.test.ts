/**
 * Database errors as a user meets them: each is produced for real by postgres.js and drizzle (a
 * closed port, a database that does not exist, a database without the schema, a table already
 * there before the migrations, an unknown role), then told by describeDatabaseError as one line of
 * cause and what to do, never drizzle's "Failed query: <SQL>" and never the password.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertSchema, openDatabase } from '../../producer/postgres/db.ts';
import { sessions } from '../../producer/postgres/schema.ts';
import { DatabaseError } from '../../shared/contract/errors.ts';
import { describeDatabaseError } from '../../worker/postgres/errors.ts';
import { migrateDatabase } from '../../worker/postgres/migrate.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor } from '../support/env.ts';
import { createTestDatabase, type TestDatabase } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';

const suffix = randomBytes(4).toString('hex');
/** No schema at all. */
const EMPTY = `compactor_dberr_empty_${suffix}`;
/** A `compactions` table made by hand before `migrate`. */
const TAKEN = `compactor_dberr_taken_${suffix}`;

let migrated: TestDatabase;

async function admin<T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end();
  }
}

/** What a drizzle query on `url` throws. */
async function failedQuery(url: string): Promise<unknown> {
  const database = openDatabase(url, { max: 1 });
  try {
    await database.db.select().from(sessions).limit(1);
  } catch (error) {
    return error;
  } finally {
    await database.close();
  }
  throw new Error(`the query on ${url} succeeded`);
}

function described(error: unknown, url: string): DatabaseError {
  const result = describeDatabaseError(error, { url });
  expect(result).toBeInstanceOf(DatabaseError);
  const message = (result as DatabaseError).message;
  expect(message).not.toMatch(/Failed query|select|params:/);
  expect(message).not.toContain('\n');
  return result as DatabaseError;
}

beforeAll(async () => {
  migrated = await createTestDatabase();
  await admin(async (sql) => {
    await sql.unsafe(`create database "${EMPTY}"`);
    await sql.unsafe(`create database "${TAKEN}"`);
  });
  const taken = postgres(databaseUrlFor(TAKEN), { max: 1, onnotice: () => {} });
  await taken`create schema compactor`;
  await taken`create table compactor.compactions (id int)`;
  await taken.end();
});

afterAll(async () => {
  await migrated?.drop();
  await admin(async (sql) => {
    await sql.unsafe(`drop database if exists "${EMPTY}" with (force)`);
    await sql.unsafe(`drop database if exists "${TAKEN}" with (force)`);
  });
});

describe('describeDatabaseError on what postgres.js and drizzle throw', () => {
  it('connection refused: host and port from the URL, never the password', async () => {
    const port = await freePort();
    const url = `postgres://postgres:hunter2@127.0.0.1:${port}/whatever`;
    const thrown = await failedQuery(url);
    // drizzle's wrapper quotes the SQL; postgres.js's socket error is its cause.
    expect((thrown as Error).message).toMatch(/^Failed query: select/);
    expect((thrown as Error).cause).toMatchObject({ code: 'ECONNREFUSED', port });
    const error = described(thrown, url);
    expect(error.message).toBe(
      `connection refused at 127.0.0.1:${port}: is PostgreSQL running there? (DATABASE_URL)`,
    );
    expect(error.code).toBe('ECONNREFUSED');
    expect(error.hint).toBe('is PostgreSQL running there? (DATABASE_URL)');
    expect(error.message).not.toContain('hunter2');
    // Without the URL, the socket error's own address and port.
    expect(describeDatabaseError(thrown)?.problem).toBe(`connection refused at 127.0.0.1:${port}`);
  });

  it('a database that does not exist: its name and how to create it', async () => {
    const name = `compactor_missing_${suffix}`;
    const url = databaseUrlFor(name);
    const error = described(await failedQuery(url), url);
    expect(error.message).toBe(
      `database "${name}" does not exist: create it (createdb ${name}) or point DATABASE_URL at another`,
    );
    expect(error.code).toBe('3D000');
  });

  it('a database name the shell would split is quoted in the createdb advice', async () => {
    const name = `compactor$missing_${suffix}`;
    const url = databaseUrlFor(name);
    expect(described(await failedQuery(url), url).hint).toBe(
      `create it (createdb '${name}') or point DATABASE_URL at another`,
    );
  });

  it('a database without the schema: the missing relation and `compactor migrate`', async () => {
    const url = databaseUrlFor(EMPTY);
    const error = described(await failedQuery(url), url);
    expect(error.message).toBe(
      'relation "sessions" does not exist: compactor\'s tables are missing from its schema; run `compactor migrate`',
    );
    expect(error.code).toBe('42P01');
  });

  it('a table made before the migrations: which, and that another tool may have applied them', async () => {
    const url = databaseUrlFor(TAKEN);
    const thrown = await migrateDatabase(url).then(
      () => expect.unreachable('migrate succeeded over an existing table'),
      (e: unknown) => e,
    );
    const error = described(thrown, url);
    expect(error.code).toBe('42P07');
    expect(error.message).toMatch(
      /^relation "compactions" already exists: compactor's migrations may have been applied by another tool/,
    );
  });

  it('an unknown role: authentication failed, with the user name', async () => {
    const user = `compactor_nobody_${suffix}`;
    const url = new URL(databaseUrlFor(EMPTY));
    url.username = user;
    url.password = 'hunter2';
    const error = described(await failedQuery(url.toString()), url.toString());
    expect(error.code).toMatch(/^28(000|P01)$/);
    expect(error.message).toMatch(
      new RegExp(
        `^authentication failed for user "${user}" \\(.*\\): check the user and password in DATABASE_URL$`,
      ),
    );
    expect(error.message).not.toContain('hunter2');
  });

  it('an error that is not the database’s is left alone', () => {
    expect(describeDatabaseError(new Error('disk full'))).toBeNull();
    expect(describeDatabaseError('text')).toBeNull();
  });
});

describe('assertSchema', () => {
  it('names the database that has no schema', async () => {
    const database = openDatabase(databaseUrlFor(EMPTY), { max: 1 });
    try {
      await expect(assertSchema(database)).rejects.toThrow(
        new DatabaseError(`no compactor tables in schema "compactor" of database "${EMPTY}"`, {
          hint: 'run `compactor migrate`',
          code: null,
        }),
      );
    } finally {
      await database.close();
    }
  });

  it('passes on a migrated database', async () => {
    await expect(assertSchema(migrated.database)).resolves.toBeUndefined();
  });
});
