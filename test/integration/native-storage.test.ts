/**
 * Native Anthropic content in storage: every block kept exactly as appended (any type, every
 * field, key order included), through compaction and restore; the plain-text rendering beside it
 * holds no base64; bad messages are refused with nothing written; and the migration that added
 * the blocks converts corpus-format rows the same way the import does.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { appendMessages, createSession } from '../../producer/index.ts';
import { connectionOptions } from '../../producer/postgres/db.ts';
import { legacyContent } from '../../shared/contract/blocks.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { pdfPageTokens } from '../../shared/contract/media-tokens.ts';
import { MESSAGE_OVERHEAD_TOKENS } from '../../shared/contract/tokens.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../../worker/postgres/migrate.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor } from '../support/env.ts';
import { CORPUS_DIR, loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { packedPdf } from '../support/pdfs.ts';

const ctx = useIntegration();
const tenantId = 'native';

/** A 1x1 PNG, base64. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** One turn of every block type compactor must keep, plus one no SDK knows yet. */
function everyBlock(n: number): MessageParam[] {
  return [
    { role: 'user', content: '123' },
    {
      role: 'user',
      content: [
        { type: 'text', text: `look at this ${n}`, cache_control: { type: 'ephemeral' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: 'plain document' },
          title: 'notes',
        },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should read it', signature: `sig-${n}` },
        { type: 'redacted_thinking', data: `redacted-${n}` },
        { type: 'text', text: 'Reading.', citations: null },
        { type: 'tool_use', id: `toolu_a${n}`, name: 'read_file', input: { path: 'src/a.ts', z: 1, a: 2 } },
        { type: 'tool_use', id: `toolu_b${n}`, name: 'bash', input: { command: 'ls' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: `toolu_a${n}`,
          content: [
            { type: 'text', text: 'export const a = 1;' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
        { type: 'tool_result', tool_use_id: `toolu_b${n}`, content: 'ls: cannot access', is_error: true },
        { type: 'text', text: 'go on' },
      ],
    },
    {
      role: 'assistant',
      content: [
        {
          type: 'server_tool_use',
          id: `srvtoolu_${n}`,
          name: 'web_search',
          input: { query: 'drizzle json' },
        },
        {
          type: 'web_search_tool_result',
          tool_use_id: `srvtoolu_${n}`,
          content: [
            {
              type: 'web_search_result',
              url: 'https://orm.drizzle.team',
              title: 'Drizzle',
              encrypted_content: 'x'.repeat(2_000),
            },
          ],
        },
        // A block type from the future: kept verbatim, never dropped.
        { type: 'hologram', frames: [{ at: 0, data: { nested: [1, 2, { deep: true }] } }] } as never,
        { type: 'text', text: 'Done.' },
      ],
    },
  ];
}

async function storedBlocks(sessionId: string, table = 'messages') {
  return ctx.tdb.database.sql.unsafe<Array<{ seq: string; blocks: string; content: string; kind: string }>>(
    `select seq, content_blocks::text as blocks, content, kind from ${table}
     where tenant_id = $1 and session_id = $2 order by seq`,
    [tenantId, sessionId],
  );
}

async function compact(sessionId: string, strategy: Strategy) {
  const outcome = await ctx.compactInProcess({
    tenantId,
    sessionId,
    strategy,
  });
  if (outcome.row?.status !== 'applied') throw new Error(`not applied: ${outcome.row?.reason}`);
  return outcome.row;
}

describe('native content blocks', () => {
  it('keeps every block exactly as appended, key order included, and renders text without base64', async () => {
    const sessionId = 'every-block';
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: [] });
    const sent = everyBlock(0);
    const seqs = await appendMessages(ctx.tdb.database.db, tenantId, sessionId, sent);
    expect(seqs).toEqual([0, 1, 2, 3, 4]);
    const rows = await storedBlocks(sessionId);
    expect(rows.map((r) => r.blocks)).toEqual(sent.map((m) => JSON.stringify(m.content)));
    expect(rows.map((r) => r.kind)).toEqual(['message', 'message', 'tool_call', 'tool_result', 'message']);
    for (const row of rows) {
      expect(row.content).not.toContain(PNG.slice(0, 40));
      expect(row.content).not.toContain('x'.repeat(600));
    }
    expect(rows[1]?.content).toMatch(/\[image: image\/png/);
    expect(rows[3]?.content).toContain('[error] ls: cannot access');
    const [meta] = await ctx.tdb.database.sql`
      select tool_use_ids, tool_result_ids, has_thinking from messages
      where tenant_id = ${tenantId} and session_id = ${sessionId} and seq = 2`;
    expect(meta).toEqual({ tool_use_ids: ['toolu_a0', 'toolu_b0'], tool_result_ids: [], has_thinking: true });
  });

  it('estimates an image by its pixels, not by its base64 length', async () => {
    const sessionId = 'image-tokens';
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: [] });
    const image = (data: string): MessageParam => ({
      role: 'user',
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }],
    });
    // The same 1x1 header, then 200 KB of trailing bytes: same pixels, same tokens.
    const padded = Buffer.concat([Buffer.from(PNG, 'base64'), randomBytes(200_000)]).toString('base64');
    await appendMessages(ctx.tdb.database.db, tenantId, sessionId, [image(PNG), image(padded)]);
    const rows = await ctx.tdb.database.sql<{ token_count: number }[]>`
      select token_count from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
    expect(rows[0]?.token_count).toBe(rows[1]?.token_count);
    expect(rows[1]?.token_count).toBeLessThan(100);
  });

  it('counts the pages of a PDF packed in a compressed object stream', async () => {
    const sessionId = 'pdf-pages';
    const data = packedPdf().toString('base64');
    const pdf: MessageParam = {
      role: 'user',
      content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } }],
    };
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: [] });
    await appendMessages(ctx.tdb.database.db, tenantId, sessionId, [pdf]);
    const [row] = await ctx.tdb.database.sql<{ token_count: number; content: string }[]>`
      select token_count, content from messages where tenant_id = ${tenantId} and session_id = ${sessionId}`;
    expect(row?.token_count).toBe(3 * pdfPageTokens() + MESSAGE_OVERHEAD_TOKENS);
    expect(row?.content).toContain('3 pages');
  });

  it('refuses a message that is not a MessageParam, naming it, and writes nothing', async () => {
    const sessionId = 'bad-append';
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: [] });
    const bad = [
      { role: 'user', content: 'fine' },
      { role: 'tool', content: 'no such role' },
    ] as MessageParam[];
    // Role `tool` is Chat Completions': the error says the session's format.
    await expect(appendMessages(ctx.tdb.database.db, tenantId, sessionId, bad)).rejects.toThrow(
      new InvalidInputError(
        `messages[1].role: "tool" is a Chat Completions role, but session "${sessionId}" has format "anthropic" (its messages are Anthropic Messages API MessageParams); one session holds one format: create another session for the other`,
      ),
    );
    const robot = [{ role: 'robot', content: 'no such role' }] as unknown as MessageParam[];
    await expect(appendMessages(ctx.tdb.database.db, tenantId, sessionId, robot)).rejects.toThrow(
      new InvalidInputError('messages[0].role: expected "user", "assistant" or "system", got "robot"'),
    );
    const blockless = [{ role: 'assistant', content: [{ text: 'no type' }] }] as unknown as MessageParam[];
    await expect(appendMessages(ctx.tdb.database.db, tenantId, sessionId, blockless)).rejects.toThrow(
      'messages[0].content[0].type: expected a block type',
    );
    expect(await storedBlocks(sessionId)).toEqual([]);
    const [row] = await ctx.tdb.database.sql`
      select last_seq::int, message_count from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
    expect(row).toEqual({ last_seq: -1, message_count: 0 });
  });

  it('archives and restores every block byte for byte', async () => {
    const sessionId = 'compact-restore';
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: [] });
    for (let n = 0; n < 6; n++) await appendMessages(ctx.tdb.database.db, tenantId, sessionId, everyBlock(n));
    const before = await storedBlocks(sessionId);
    const row = await compact(sessionId, { type: 'summarize', keepRecent: 5, maxSummaryTokens: 2_000 });
    const archived = await storedBlocks(sessionId, 'archived_messages');
    const live = await storedBlocks(sessionId);
    // What left is in the archive exactly; what stayed is untouched; nothing else exists.
    const bySeq = new Map(before.map((r) => [r.seq, r.blocks]));
    for (const r of archived) expect(r.blocks).toBe(bySeq.get(r.seq));
    for (const r of live.filter((l) => l.kind !== 'summary')) expect(r.blocks).toBe(bySeq.get(r.seq));
    expect(archived.length + live.filter((l) => l.kind !== 'summary').length).toBe(before.length);
    await restoreCompaction(ctx.tdb.database.db, { tenantId, sessionId, compactionId: row.id });
    expect(await storedBlocks(sessionId)).toEqual(before);
  });

  it('keeps each tool_use with its tool_result when several sit in one message', async () => {
    const sessionId = 'pairs';
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: [] });
    for (let n = 0; n < 4; n++) await appendMessages(ctx.tdb.database.db, tenantId, sessionId, everyBlock(n));
    // keepRecent 7 puts the window's edge between a turn's calls (seq 12) and their results (seq 13).
    await compact(sessionId, { type: 'slidingWindow', maxMessages: 7 });
    const live = await storedBlocks(sessionId);
    const ids = (blocks: string, type: string, field: string) =>
      (JSON.parse(blocks) as Array<Record<string, unknown>>)
        .filter?.((b) => b.type === type)
        .map((b) => b[field]) ?? [];
    const calls = new Set(
      live.flatMap((r) => (r.blocks.startsWith('[') ? ids(r.blocks, 'tool_use', 'id') : [])),
    );
    const answers = live.flatMap((r) =>
      r.blocks.startsWith('[') ? ids(r.blocks, 'tool_result', 'tool_use_id') : [],
    );
    for (const id of answers) expect(calls.has(id)).toBe(true);
  });
});

describe('the migration to native content', () => {
  it('converts corpus-format rows as the import does, in SQL and TypeScript alike', async () => {
    const names = (await readdir(CORPUS_DIR)).filter((n) => n.endsWith('.jsonl'));
    expect(names.length).toBeGreaterThan(20);
    for (const file of names) {
      const messages = await loadCorpusSession(file.replace(/\.jsonl$/, ''));
      const rows = await ctx.tdb.database.sql<{ blocks: unknown }[]>`
        select compactor_legacy_content(m.kind, m.content, m."toolCallId", m."toolName") as blocks
        from json_to_recordset(${JSON.stringify(messages)}::json)
          as m(seq bigint, kind text, content text, "toolCallId" text, "toolName" text)
        order by m.seq`;
      expect(
        rows.map((r) => r.blocks),
        file,
      ).toEqual(messages.map((m) => legacyContent(m)));
    }
  });

  it('fills the blocks of rows written before it', async () => {
    // The migrations before this one, applied to a fresh database; then rows as an older version
    // wrote them; then the rest.
    const folder = await mkdtemp(path.join(tmpdir(), 'compactor-migrations-'));
    const name = `compactor_test_${randomBytes(6).toString('hex')}`;
    const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    const url = databaseUrlFor(name);
    const sql = postgres(url, { max: 1, ...connectionOptions() });
    try {
      await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
      const journalPath = path.join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
      const at = journal.entries.findIndex((e) => e.tag === '0006_native_content_blocks');
      expect(at).toBeGreaterThan(0);
      await writeFile(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }));
      await migrateDatabase(url, { folder });
      const messages = await loadCorpusSession('sweagent__marshmallow-1867-fc');
      await sql`insert into sessions (tenant_id, id) values ('t', 'old')`;
      for (const m of messages) {
        await sql`insert into messages (tenant_id, session_id, seq, role, kind, content, tool_call_id, tool_name,
          token_count, pinned) values ('t', 'old', ${m.seq}, ${m.role}, ${m.kind}, ${m.content}, ${m.toolCallId},
          ${m.toolName}, ${m.tokenCount}, ${m.pinned})`;
      }
      await migrateDatabase(url);
      const rows = await sql<{ blocks: unknown; tool_use_ids: string[]; tool_result_ids: string[] }[]>`
        select content_blocks as blocks, tool_use_ids, tool_result_ids from messages order by seq`;
      expect(rows.map((r) => r.blocks)).toEqual(messages.map((m) => legacyContent(m)));
      expect(rows.map((r) => [r.tool_use_ids, r.tool_result_ids])).toEqual(
        messages.map((m) => [m.toolUseIds, m.toolResultIds]),
      );
    } finally {
      await sql.end();
      await admin.unsafe(`drop database "${name}" with (force)`);
      await admin.end();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
