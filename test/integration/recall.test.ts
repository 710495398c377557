/**
 * Recall through the client library: what a compaction archived is found by its words (a path by
 * its parts too, a command with its flags), read back exactly as written (an image too), within
 * the tenant, and no longer found once a restore put it back in the live history.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { createSession, loadContext, readRecall, searchRecall } from '../../producer/index.ts';
import { InvalidInputError, SessionNotFoundError } from '../../shared/contract/errors.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'acme';
const STACK = Array.from(
  { length: 40 },
  (_, i) => `    at step${i} (node_modules/runner/lib/run.js:${i}:7)`,
).join('\n');
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A coding session: a file edited, a command run with flags, a screenshot, then 30 turns of chatter. */
function codingSession() {
  const early = [
    { role: 'user' as const, content: 'The login fails with a 401 after the token refresh. Please fix it.' },
    {
      role: 'assistant' as const,
      content: [
        { type: 'text' as const, text: 'Let me look at the refresh code.' },
        {
          type: 'tool_use' as const,
          id: 'toolu_read',
          name: 'read_file',
          input: { path: 'src/auth/refresh_token.ts' },
        },
      ],
    },
    {
      role: 'user' as const,
      content: [
        {
          type: 'tool_result' as const,
          tool_use_id: 'toolu_read',
          content:
            'export async function refresh(expiresAt: number) { if (expiresAt < Date.now()) return null; }',
        },
      ],
    },
    {
      role: 'assistant' as const,
      content: [
        {
          type: 'tool_use' as const,
          id: 'toolu_run',
          name: 'bash',
          input: { command: 'npm run test -- --grep refresh' },
        },
      ],
    },
    {
      role: 'user' as const,
      content: [
        {
          type: 'tool_result' as const,
          tool_use_id: 'toolu_run',
          content: `> npm run test -- --grep refresh\n1 failing: refresh returns null for a token expiring in 30 s\n${STACK}`,
        },
      ],
    },
    {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'Here is the screenshot of the error dialog.' },
        {
          type: 'image' as const,
          source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG },
        },
      ],
    },
  ];
  const chatter = Array.from({ length: 30 }, (_, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `turn ${i}: still discussing the retry budget of the worker pool`,
  }));
  return [...early, ...chatter];
}

/** The messages as a new session's, numbered from seq 0. */
function numbered(messages: MessageParam[]) {
  return messages.map((message, seq) => ({ message, seq }));
}

async function compact(sessionId: string, strategy: Strategy, tenant = tenantId) {
  const outcome = await ctx.compactInProcess({ tenantId: tenant, sessionId, strategy });
  expect(outcome.row?.status).toBe('applied');
  return outcome.row as NonNullable<typeof outcome.row>;
}

const summarize: Strategy = { type: 'summarize', keepRecent: 8, maxSummaryTokens: 2000 };

describe('recall', () => {
  it('finds a path, a part of it and a command that left with a summary, and reads them back exactly', async () => {
    const messages = codingSession();
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'code', messages: numbered(messages) });
    const row = await compact('code', summarize);
    const db = ctx.tdb.database.db;
    const context = await loadContext(db, { tenantId, sessionId: 'code' });
    const summary = JSON.stringify(context.messages[0]?.content);
    expect(summary).toContain(`Its originals up to seq ${row.summarySeq} are archived`);
    expect(summary).toContain('recall_search and recall_read find and read them');

    const byPath = await searchRecall(db, {
      tenantId,
      sessionId: 'code',
      query: 'src/auth/refresh_token.ts',
    });
    expect(byPath.hits[0]).toMatchObject({ sessionId: 'code', seq: 1, kind: 'tool_call' });
    expect(byPath.hits[0]?.snippet).toContain('«src/auth/refresh_token.ts»');
    const byPart = await searchRecall(db, { tenantId, sessionId: 'code', query: 'refresh_token' });
    expect(byPart.hits.map((h) => h.seq)).toContain(1);
    // The snippet shows where a part of a path matched, not the message's first words.
    expect(byPart.hits.find((h) => h.seq === 1)?.snippet).toContain('src/auth/«refresh_token».ts');
    const byCommand = await searchRecall(db, {
      tenantId,
      sessionId: 'code',
      query: 'npm run test -- --grep refresh',
    });
    expect(
      byCommand.hits
        .slice(0, 2)
        .map((h) => h.seq)
        .sort(),
    ).toEqual([3, 4]);

    const read = await readRecall(db, { tenantId, sessionId: 'code', fromSeq: 1, toSeq: 5 });
    expect(read.format).toBe('anthropic');
    expect(read.nextSeq).toBeNull();
    expect(read.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    for (const m of read.messages)
      expect(JSON.stringify(m.content)).toBe(JSON.stringify(messages[m.seq]?.content));
    const image = read.messages.find((m) => m.seq === 5)?.content as Array<{
      type: string;
      source?: { data: string };
    }>;
    expect(image[1]?.source?.data).toBe(PNG);
  });

  it('finds what clearToolResults cleared in its original, and not once a restore put it back', async () => {
    await createSession(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'clear',
      messages: numbered(codingSession()),
    });
    const row = await compact('clear', {
      type: 'clearToolResults',
      keep: 0,
      clearAtLeast: 0,
      clearToolInputs: false,
      excludeTools: [],
    });
    const db = ctx.tdb.database.db;
    const found = await searchRecall(db, { tenantId, sessionId: 'clear', query: 'expiring in 30 s' });
    expect(found.hits.map((h) => h.seq)).toEqual([4]);
    const [original] = (await readRecall(db, { tenantId, sessionId: 'clear', fromSeq: 4, toSeq: 4 }))
      .messages;
    expect(JSON.stringify(original?.content)).toContain('1 failing: refresh returns null');

    await restoreCompaction(db, { tenantId, sessionId: 'clear', compactionId: row.id });
    expect(
      (await searchRecall(db, { tenantId, sessionId: 'clear', query: 'expiring in 30 s' })).hits,
    ).toEqual([]);
    expect((await readRecall(db, { tenantId, sessionId: 'clear', fromSeq: 0, toSeq: 40 })).messages).toEqual(
      [],
    );
  });

  it("never finds another tenant's archive", async () => {
    await createSession(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'shared-id',
      messages: numbered(codingSession()),
    });
    await compact('shared-id', summarize);
    await createSession(ctx.tdb.database.db, {
      tenantId: 'other',
      sessionId: 'shared-id',
      messages: numbered([{ role: 'user' as const, content: 'hello' }]),
    });
    const db = ctx.tdb.database.db;
    const theirs = await searchRecall(db, {
      tenantId: 'other',
      sessionId: 'shared-id',
      query: 'refresh_token',
    });
    expect(theirs.hits).toEqual([]);
    expect(
      (await readRecall(db, { tenantId: 'other', sessionId: 'shared-id', fromSeq: 0, toSeq: 10 })).messages,
    ).toEqual([]);
    await expect(
      searchRecall(db, { tenantId: 'nobody', sessionId: 'shared-id', query: 'refresh' }),
    ).rejects.toThrow(SessionNotFoundError);
    await expect(
      readRecall(db, { tenantId: 'nobody', sessionId: 'shared-id', fromSeq: 0, toSeq: 1 }),
    ).rejects.toThrow(SessionNotFoundError);
  });

  it('cuts a read at maxBytes, always giving the first message, and says where to go on', async () => {
    await createSession(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'cut',
      messages: numbered(codingSession()),
    });
    await compact('cut', summarize);
    const db = ctx.tdb.database.db;
    const first = await readRecall(db, { tenantId, sessionId: 'cut', fromSeq: 0, toSeq: 20, maxBytes: 1 });
    expect(first.messages.map((m) => m.seq)).toEqual([0]);
    expect(first.nextSeq).toBe(1);
    const whole = await readRecall(db, { tenantId, sessionId: 'cut', fromSeq: 0, toSeq: 20 });
    const budget = (whole.messages[0]?.bytes ?? 0) + (whole.messages[1]?.bytes ?? 0);
    const two = await readRecall(db, { tenantId, sessionId: 'cut', fromSeq: 0, toSeq: 20, maxBytes: budget });
    expect(two.messages.map((m) => m.seq)).toEqual([0, 1]);
    expect(two.nextSeq).toBe(2);
  });

  it('archives and finds a tool result larger than a tsvector holds', async () => {
    const huge = `${'x'.repeat(10)} `.repeat(200_000);
    await createSession(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'huge',
      messages: numbered([
        { role: 'user' as const, content: 'dump the log of build 8812' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_log', name: 'bash', input: { command: 'cat build.log' } }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_log', content: `build 8812 failed ${huge}` }],
        },
        ...codingSession().slice(6),
      ]),
    });
    await compact('huge', summarize);
    const found = await searchRecall(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'huge',
      query: 'build 8812 failed',
    });
    expect(found.hits[0]?.seq).toBe(2);
  });

  it('finds what a newSession compaction left in the parent, from the child, and reads it back', async () => {
    const db = ctx.tdb.database.db;
    const tenant = 'lineage';
    await setPolicy(db, tenant, null, { strategy: summarize, mode: 'newSession' });
    const messages = codingSession();
    await createSession(db, { tenantId: tenant, sessionId: 'root', messages: numbered(messages) });
    const row = await compact('root', summarize, tenant);
    expect(row.childSessionId).toBe('root.v1');

    const found = await searchRecall(db, {
      tenantId: tenant,
      sessionId: 'root.v1',
      query: 'src/auth/refresh_token.ts',
    });
    expect(found.hits[0]).toMatchObject({ sessionId: 'root', seq: 1, compactionId: row.id });
    // The child's own archive is empty: only the lineage holds what left.
    const own = await searchRecall(db, {
      tenantId: tenant,
      sessionId: 'root.v1',
      query: 'refresh_token',
      scope: 'session',
    });
    expect(own.hits).toEqual([]);
    // What the child still holds did not leave: not found in the parent.
    const kept = await searchRecall(db, { tenantId: tenant, sessionId: 'root.v1', query: 'turn 29' });
    expect(kept.hits).toEqual([]);

    const read = await readRecall(db, { tenantId: tenant, sessionId: 'root', fromSeq: 1, toSeq: 5 });
    expect(read.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    for (const m of read.messages)
      expect(JSON.stringify(m.content)).toBe(JSON.stringify(messages[m.seq]?.content));
    const none = await searchRecall(db, {
      tenantId: 'other',
      sessionId: 'root.v1',
      query: 'refresh_token',
    }).catch((error: unknown) => error);
    expect(none).toBeInstanceOf(SessionNotFoundError);
  });

  it('refuses a bad query or range, naming the field', async () => {
    const db = ctx.tdb.database.db;
    await createSession(db, {
      tenantId,
      sessionId: 'bad',
      messages: numbered([{ role: 'user' as const, content: 'hi' }]),
    });
    await expect(searchRecall(db, { tenantId, sessionId: 'bad', query: '   ' })).rejects.toThrow(
      /search\.query: must not be empty/,
    );
    await expect(searchRecall(db, { tenantId, sessionId: 'bad', query: 'x', limit: 500 })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(readRecall(db, { tenantId, sessionId: 'bad', fromSeq: 5, toSeq: 2 })).rejects.toThrow(
      /read\.toSeq: must not be below fromSeq/,
    );
    await expect(readRecall(db, { tenantId, sessionId: 'bad', fromSeq: 0, toSeq: 5000 })).rejects.toThrow(
      /at most 1000 seqs/,
    );
  });
});
