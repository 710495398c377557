/**
 * The bad-input corpus (test/bad-input/): malformed and hostile events and transcripts. Each one must
 * be refused with an error naming what is wrong, must not be retried, and must change nothing in
 * Postgres. Real Redis, Postgres, BullMQ worker and `compactor` command.
 *
 * Corpus format:
 * - `events/<case>.json`: `{ description, event, expect }`. `event` is the raw job data, `expect` a
 *   substring of the error. With `seeded: true` the event is valid by the schema and bad only against
 *   the database (unknown session, foreign tenant): the producer enqueues it and the worker fails it.
 *   A value `{ "$repeat": "x", "count": N }` stands for "x" repeated N times (multi-MB cases stay small
 *   on disk).
 * - `transcripts/<case>.jsonl`, with `transcripts/expectations.json` mapping each file name to a
 *   substring of the error. Bytes a text file cannot hold (non-UTF-8, raw NUL, raw escapes) and the
 *   oversized content are generated below ({@link GENERATED_TRANSCRIPTS}).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { importTranscript } from '../../producer/import.ts';
import { createSession, SessionExistsError } from '../../producer/index.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { TranscriptError } from '../../shared/contract/transcript.ts';
import { jobIdOf, RUN_COMPLETED, type RunCompletedInput } from '../../shared/protocol/events.ts';
import type { CompactionWorker } from '../../worker/queue/compaction/worker.ts';
import { runCli } from '../support/cli.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const CORPUS = fileURLToPath(new URL('./bad-input/', import.meta.url));
const EVENTS_DIR = path.join(CORPUS, 'events');
const TRANSCRIPTS_DIR = path.join(CORPUS, 'transcripts');

/** The owner of the seeded session that the `seeded` cases aim at. */
const OWNER = { tenantId: 'acme', sessionId: 'owned' } as const;

// ---------------------------------------------------------------------------------------------------
// The corpus

interface EventCase {
  name: string;
  description: string;
  event: unknown;
  expected: string;
  seeded: boolean;
  /** The BullMQ job id for the raw enqueue: the eventId when BullMQ can take it, else generated. */
  jobId: string;
}

const eventFileSchema = z
  .object({
    description: z.string().min(1),
    event: z.unknown(),
    expect: z.string().min(1),
    seeded: z.boolean().optional(),
  })
  .strict()
  .refine((f) => 'event' in f, { message: 'event is required' });

/** Replaces `{ "$repeat": s, "count": n }` by `s.repeat(n)`; keeps own `__proto__` keys as data. */
function expand(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expand);
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 2 && typeof o.$repeat === 'string' && typeof o.count === 'number') {
    return o.$repeat.repeat(o.count);
  }
  return Object.fromEntries(keys.map((k) => [k, expand(o[k])]));
}

/** Whether BullMQ accepts `id` as a custom job id (and it is a sane Redis key). */
function usableJobId(id: unknown): id is string {
  return (
    typeof id === 'string' &&
    /^[\x21-\x7e]{1,200}$/.test(id) &&
    !id.includes(':') &&
    `${Number.parseInt(id, 10)}` !== id
  );
}

function loadEventCases(): EventCase[] {
  const used = new Set<string>();
  return readdirSync(EVENTS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const raw = eventFileSchema.parse(JSON.parse(readFileSync(path.join(EVENTS_DIR, file), 'utf8')));
      const event = expand(raw.event);
      const eventId =
        event !== null && typeof event === 'object' && !Array.isArray(event)
          ? (event as { eventId?: unknown }).eventId
          : undefined;
      const jobId = usableJobId(eventId) && !used.has(eventId) ? eventId : `bad-input-${randomUUID()}`;
      used.add(jobId);
      return {
        name: file.replace(/\.json$/, ''),
        description: raw.description,
        event,
        expected: raw.expect,
        seeded: raw.seeded ?? false,
        jobId,
      };
    });
}

interface TranscriptCase {
  name: string;
  description: string;
  /** Path of the file to import (generated files live in a temporary directory). */
  file: () => string;
  expected: string;
}

const expectations = z
  .record(z.string(), z.string().min(1))
  .parse(JSON.parse(readFileSync(path.join(TRANSCRIPTS_DIR, 'expectations.json'), 'utf8')));
const transcriptFiles = readdirSync(TRANSCRIPTS_DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();

const line = (m: Record<string, unknown>) => Buffer.from(`${JSON.stringify(m)}\n`);
const SYSTEM = { seq: 0, role: 'system', kind: 'message', content: 'You are a helpful agent.' };
const contentOf = (bytes: number[]) =>
  Buffer.concat([
    Buffer.from('{"seq": 1, "role": "user", "kind": "message", "content": "'),
    Buffer.from(bytes),
    Buffer.from('"}\n'),
  ]);

let generatedDir = '';

/** Transcripts whose bytes cannot live in a text file, or would be megabytes on disk. */
const GENERATED_TRANSCRIPTS: Array<{
  name: string;
  description: string;
  bytes: () => Buffer;
  expected: string;
}> = [
  {
    name: 'latin1.jsonl',
    description: 'a Latin-1 "é" (0xE9) on line 2',
    bytes: () => Buffer.concat([line(SYSTEM), contentOf([0x63, 0x61, 0x66, 0xe9])]),
    expected: 'latin1.jsonl:2: not valid UTF-8',
  },
  {
    name: 'overlong-slash.jsonl',
    description: 'an overlong UTF-8 encoding of "/" (0xC0 0xAF)',
    bytes: () => Buffer.concat([line(SYSTEM), contentOf([0x2e, 0x2e, 0xc0, 0xaf])]),
    expected: 'overlong-slash.jsonl:2: not valid UTF-8',
  },
  {
    name: 'encoded-surrogate.jsonl',
    description: 'a UTF-16 surrogate encoded as UTF-8 bytes (0xED 0xA0 0x80, CESU-8)',
    bytes: () => Buffer.concat([line(SYSTEM), contentOf([0xed, 0xa0, 0x80])]),
    expected: 'encoded-surrogate.jsonl:2: not valid UTF-8',
  },
  {
    name: 'utf16le.jsonl',
    description: 'the whole file in UTF-16LE with a byte order mark',
    bytes: () => Buffer.from(`\ufeff${JSON.stringify(SYSTEM)}\n`, 'utf16le'),
    expected: 'utf16le.jsonl:1: not valid UTF-8',
  },
  {
    name: 'raw-nul-in-string.jsonl',
    description: 'a raw NUL byte inside the content string',
    bytes: () => Buffer.concat([line(SYSTEM), contentOf([0x61, 0x00, 0x62])]),
    expected: 'raw-nul-in-string.jsonl:2: not JSON (',
  },
  {
    name: 'raw-nul-line.jsonl',
    description: 'a line holding a single NUL byte',
    bytes: () => Buffer.concat([line(SYSTEM), Buffer.from([0x00, 0x0a])]),
    expected: "raw-nul-line.jsonl:2: not JSON (Unexpected token '\\u0000'",
  },
  {
    name: 'raw-escape-not-json.jsonl',
    description: 'a line of terminal escapes that is not JSON: quoted escaped in the error',
    bytes: () => Buffer.from('\x1b[2J\x1b[31mYOU HAVE BEEN PWNED\n'),
    expected: "raw-escape-not-json.jsonl:1: not JSON (Unexpected token '\\u001b'",
  },
  {
    name: 'content-over-limit.jsonl',
    description: 'a content of 1,000,001 characters, one over the limit',
    bytes: () => line({ seq: 0, role: 'user', kind: 'message', content: 'x'.repeat(1_000_001) }),
    expected: 'content-over-limit.jsonl:1: content: Too big: expected string to have <=1000000 characters',
  },
];

const eventCases = loadEventCases();
const transcriptCases: TranscriptCase[] = [
  ...transcriptFiles.map((name) => ({
    name,
    description: 'from the corpus',
    file: () => path.join(TRANSCRIPTS_DIR, name),
    expected: expectations[name] ?? `(no expectation for ${name} in expectations.json)`,
  })),
  ...GENERATED_TRANSCRIPTS.map(({ name, description, expected }) => ({
    name,
    description,
    file: () => path.join(generatedDir, name),
    expected,
  })),
];

// ---------------------------------------------------------------------------------------------------
// Fixtures

const ctx = useIntegration();
let running: CompactionWorker;
let validTranscript: string;

interface TableState {
  table: string;
  rows: number;
  digest: string;
}

/** Row count and a digest of every row of the four tables: equal snapshots mean nothing changed. */
async function snapshot(): Promise<TableState[]> {
  const digest = (table: string) =>
    `select '${table}' as table, count(*)::int as rows,
            md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) as digest from ${table} t`;
  return ctx.tdb.database.sql.unsafe<TableState[]>(
    ['sessions', 'messages', 'archived_messages', 'compactions'].map(digest).join(' union all '),
  );
}

/** Waits until the job is done, or scheduled for a retry (`delayed`, which a test then rejects). */
async function settled(jobId: string): Promise<string> {
  return waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(jobId);
    return state === 'completed' || state === 'failed' || state === 'delayed' ? state : undefined;
  });
}

/** A clear error: it names the problem, is short, and prints on one line with no hidden characters. */
function expectClearMessage(message: string, expected: string) {
  expect(message).toContain(expected);
  expect(message.length).toBeLessThanOrEqual(1_000);
  expect(message).not.toMatch(/[\p{Cc}\p{Cf}\p{Cs}]/u);
}

async function expectFailedOnce(jobId: string, expected: string) {
  expect(await settled(jobId)).toBe('failed');
  const job = await ctx.producer.queue.getJob(jobId);
  expect(job?.attemptsMade).toBe(1);
  expectClearMessage(job?.failedReason ?? '', expected);
}

beforeAll(async () => {
  running = ctx.startWorker({ concurrency: 4 });
  generatedDir = mkdtempSync(path.join(tmpdir(), 'compactor-bad-input-'));
  for (const g of GENERATED_TRANSCRIPTS) await writeFile(path.join(generatedDir, g.name), g.bytes());
  validTranscript = path.join(tmpdir(), `compactor-bad-input-good-${randomUUID()}.jsonl`);
  await writeFile(validTranscript, line(SYSTEM));

  // The owner's session, compacted once, so it has live, archived and ledger rows to protect.
  await createSession(ctx.tdb.database.db, {
    ...OWNER,
    messages: await loadCorpusSession('sweagent__ctf-rev-rock'),
  });
  const eventId = randomUUID();
  await ctx.producer.runCompleted({
    eventId,
    ...OWNER,
    strategy: { type: 'slidingWindow', maxMessages: 10 },
  });
  expect(await settled(jobIdOf(OWNER.tenantId, eventId))).toBe('completed');
});

ctx.onTeardown(async () => {
  if (generatedDir) await rm(generatedDir, { recursive: true, force: true });
  if (validTranscript) await rm(validTranscript, { force: true });
});

// ---------------------------------------------------------------------------------------------------
// Events

describe('bad events', () => {
  it('the corpus holds at least 30 events and 30 transcripts, each transcript with an expectation', () => {
    expect(eventCases.length).toBeGreaterThanOrEqual(30);
    expect(transcriptCases.length).toBeGreaterThanOrEqual(30);
    expect(Object.keys(expectations).sort()).toEqual(transcriptFiles);
  });

  it.each(eventCases)('the producer refuses $name ($description)', async (c) => {
    const before = await snapshot();
    const counts = await ctx.producer.queue.getJobCounts();
    if (c.seeded) {
      // Only the database can tell: the producer enqueues it, and the worker fails it once.
      const input = c.event as RunCompletedInput;
      const jobId = jobIdOf(input.tenantId, input.eventId);
      await expect(ctx.producer.runCompleted(input)).resolves.toEqual({ jobId, coalesced: false });
      await expectFailedOnce(jobId, c.expected);
    } else {
      const error = await ctx.producer.runCompleted(c.event as RunCompletedInput).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidInputError);
      expectClearMessage((error as Error).message, c.expected);
      expect(await ctx.producer.queue.getJobCounts()).toEqual(counts);
    }
    expect(await snapshot()).toEqual(before);
  });

  it.each(eventCases)(
    'the worker fails $name once when it is put on the queue directly, and writes nothing',
    async (c) => {
      const before = await snapshot();
      // As a buggy producer in another language would: no validation, five attempts.
      await ctx.producer.queue.add(RUN_COMPLETED, c.event, { jobId: c.jobId, attempts: 5 });
      await expectFailedOnce(c.jobId, c.expected);
      expect(await snapshot()).toEqual(before);
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// Transcripts

describe('bad transcripts', () => {
  it.each(transcriptCases)('import refuses $name ($description), naming the line and field', async (c) => {
    const before = await snapshot();
    const error = await importTranscript(ctx.tdb.database.db, c.file(), { tenantId: 'importer' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TranscriptError);
    expectClearMessage((error as Error).message, c.expected);
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    [
      'a session id with a space',
      { sessionId: 'my session' },
      'session id "my session": must not contain spaces',
    ],
    [
      'a session id with "../"',
      { sessionId: '../escape' },
      'session id "../escape": must not contain "." or ".." path segments',
    ],
    [
      'a session id with a bidi override',
      { sessionId: 'report\u202Efdp.exe' },
      'session id "report\\u202efdp.exe": must not contain invisible formatting characters',
    ],
    [
      'a session id of 201 characters',
      { sessionId: 's'.repeat(201) },
      ': Too big: expected string to have <=200 characters',
    ],
    [
      'a tenant id with a newline',
      { tenantId: 'acme\nevil' },
      'tenant id "acme\\u000aevil": must not contain spaces, newlines',
    ],
    ['an empty tenant id', { tenantId: '' }, 'tenant id "": Too small'],
    [
      'a session the tenant has already',
      { ...OWNER },
      'session "owned" already exists for tenant "acme"; not imported again',
    ],
  ])('import refuses %s and writes nothing', async (_, ids, expected) => {
    const before = await snapshot();
    const error = await importTranscript(ctx.tdb.database.db, validTranscript, {
      tenantId: 'importer',
      ...ids,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    if ('tenantId' in ids && ids.tenantId === OWNER.tenantId)
      expect(error).toBeInstanceOf(SessionExistsError);
    expectClearMessage((error as Error).message, expected);
    expect(await snapshot()).toEqual(before);
  });

  it('`compactor import` refuses every bad transcript with its error on stderr and exit code 1', async () => {
    const before = await snapshot();
    const run = await runCli(['import', TRANSCRIPTS_DIR, generatedDir, '--tenant', 'cli'], ctx.cliEnv);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(transcriptCases.length);
    for (const l of lines) expect(l).toMatch(/^not imported: /);
    for (const c of transcriptCases) expect(run.stderr).toContain(c.expected);
    expect(await snapshot()).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------------------
// Tenants

describe('tenant isolation', () => {
  it("the CLI shows another tenant nothing of the owner's session and changes nothing", async () => {
    expect((await ctx.reads.history(OWNER.tenantId, OWNER.sessionId)).length).toBeGreaterThan(0);
    const before = await snapshot();
    const intruder = ['--tenant', 'intruder', '--session', OWNER.sessionId];
    // Writing through the pipeline as another tenant is covered by the `seeded` event cases.
    const [history, preview] = await Promise.all([
      runCli(['history', ...intruder], ctx.cliEnv),
      runCli(['compact', ...intruder, '--strategy', 'slidingWindow:1', '--dry-run'], ctx.cliEnv),
    ]);
    const notFound = `session "${OWNER.sessionId}" not found for tenant "intruder"`;
    expect(history).toMatchObject({ code: 1, stdout: '' });
    expect(history.stderr).toBe(`compactor history: ${notFound}\n`);
    expect(preview).toMatchObject({ code: 1, stdout: '' });
    expect(preview.stderr).toBe(`compactor compact: ${notFound}\n`);
    expect(await snapshot()).toEqual(before);
  });

  it('keeps apart tenant "t:x" session "s" and tenant "t" session "x:s" (one "t:x:s" if joined naively)', async () => {
    const messages = await loadCorpusSession('sweagent__ctf-rev-rock');
    const a = { tenantId: 'twin:x', sessionId: 's' };
    const b = { tenantId: 'twin', sessionId: 'x:s' };
    for (const s of [a, b]) await createSession(ctx.tdb.database.db, { ...s, messages });
    // Paused, both jobs wait side by side: had they one deduplication id, the second would coalesce.
    await running.worker.pause();
    const events = [a, b].map((s) => ({
      eventId: randomUUID(),
      ...s,
      strategy: { type: 'slidingWindow', maxMessages: 10 } as const,
    }));
    try {
      for (const e of events) {
        await expect(ctx.producer.runCompleted(e)).resolves.toEqual({
          jobId: jobIdOf(e.tenantId, e.eventId),
          coalesced: false,
        });
      }
    } finally {
      running.worker.resume();
    }
    for (const e of events) {
      expect(await settled(jobIdOf(e.tenantId, e.eventId))).toBe('completed');
      const rows = await ctx.reads.history(e.tenantId, e.sessionId);
      expect(rows.map((r) => [r.status, r.eventId])).toEqual([['applied', e.eventId]]);
    }
  });
});
