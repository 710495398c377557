/**
 * Runs once per `vitest run`: checks that Postgres and Redis answer, finds (or installs) Chromium
 * for the browser tests, times one `compactor` start (the base of every test's patience:
 * patience.ts), and builds a migrated template database (compactor's schema and BullMQ's
 * queue schema) that each test file clones
 * (CREATE DATABASE ... TEMPLATE is far faster than migrating per file). The template is dropped at
 * the end.
 */

import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrateQueueSchema } from '../../producer/queue/backend.ts';
import { migrateDatabase } from '../../worker/postgres/migrate.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor, REDIS_URL } from './env.ts';
import { CHROMIUM_HINT, findChromium, installChromium } from './find-chromium.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    /** The queue backend of the project's test files (vitest.config.ts). */
    queueBackend: 'redis' | 'postgres';
    /** The Chromium binary for the browser tests; empty when none could be had. */
    chromium: string;
    /** How long loading `compactor worker`'s modules took in a child process at the start of the run, ms. */
    cliStartMs: number;
  }
}

export default async function setup(project: TestProject) {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`tests need Redis at ${REDIS_URL}: ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
  const started = timeCliStart();
  started.catch(() => {}); // awaited below; a set-up that fails first must not leave it unhandled
  const chromium = findChromium() ?? installChromium();
  if (!chromium) {
    // CI must run every test: a missing browser fails the run there instead of skipping.
    if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(CHROMIUM_HINT);
    console.warn(`skipping the browser tests: ${CHROMIUM_HINT}`);
  }
  project.provide('chromium', chromium ?? '');
  const template = `compactor_tpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${template}"`);
  } catch (error) {
    await admin.end();
    throw new Error(`tests need Postgres at ${ADMIN_DATABASE_URL}: ${(error as Error).message}`);
  }
  await migrateDatabase(databaseUrlFor(template));
  // BullMQ's tables too, for the files on the postgres queue backend: each file's clone has them.
  await migrateQueueSchema({ connection: databaseUrlFor(template) });
  project.provide('templateDatabase', template);
  const cliStartMs = await started;
  project.provide('cliStartMs', cliStartMs);
  console.info(`a compactor start took ${cliStartMs} ms here now: the tests' deadlines scale from it`);
  return async () => {
    await admin.unsafe(`drop database if exists "${template}" with (force)`);
    await admin.end();
  };
}

/**
 * Loads, in a child process run as the tests' children run (node, the sources through tsx), what
 * `compactor worker` loads before it connects (worker/cli/serve.ts and everything under it: the
 * SDKs, BullMQ, Hono, Bull Board), and resolves with how long that took from spawn to exit, ms;
 * rejects with its output when it fails. (`compactor --version` loads almost nothing, so its time
 * no longer tells how slow the machine is.)
 */
function timeCliStart(): Promise<number> {
  const began = performance.now();
  const serve = pathToFileURL(fileURLToPath(new URL('../../worker/cli/serve.ts', import.meta.url))).href;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `await import(${JSON.stringify(serve)})`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Math.round(performance.now() - began));
      else reject(new Error(`loading compactor worker's modules exited ${code}: ${output}`));
    });
  });
}
