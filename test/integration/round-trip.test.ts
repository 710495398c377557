import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { loadContext } from '../../producer/index.ts';
import { LEAD_IN, NO_RESULT, SUMMARY_INTRO } from '../../shared/context/render.ts';
import { parseClaudeCode } from '../../shared/contract/native-transcripts.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { useIntegration } from '../support/integration.ts';

const CLAUDE_CODE_DIR = fileURLToPath(new URL('../../corpus/claude-code/', import.meta.url));
const FILES = readdirSync(CLAUDE_CODE_DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();

const ctx = useIntegration({ anthropic: true });
const model = 'claude-haiku-4-5';
const manual = { type: 'enabled', budget_tokens: 1024 } as const;
const disabled = { type: 'disabled' } as const;
let client: Anthropic;

beforeAll(() => {
  ctx.fake.strict = true;
  client = new Anthropic({ apiKey: 'test', baseURL: ctx.llm.url, maxRetries: 0 });
});

const db = () => ctx.tdb.database.db;

type Block = { type: string; [field: string]: unknown };
type Message = { role: string; content: string | Block[] };

const THINKING = new Set(['thinking', 'redacted_thinking']);
const blocksOf = (content: string | Block[]): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;
const arrayBlocks = (messages: readonly Message[]): Block[] =>
  messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
const thinkingOf = (messages: readonly Message[]) =>
  arrayBlocks(messages).filter((b) => THINKING.has(b.type));

/** A file's messages as the parser gives them (one per streamed reply: its lines merged by message.id). */
function parsed(name: string): Message[] {
  const file = path.join(CLAUDE_CODE_DIR, name);
  return parseClaudeCode(readFileSync(file, 'utf8'), file).map((m) => m.message as unknown as Message);
}

/** Adjacent messages of one role as one: their blocks in order, a string becoming one text block. */
function mergeAdjacent(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    const previous = out[out.length - 1];
    if (previous?.role === m.role) {
      out[out.length - 1] = {
        role: m.role,
        content: [...blocksOf(previous.content), ...blocksOf(m.content)],
      };
    } else {
      out.push(m);
    }
  }
  return out;
}

/**
 * Each call of an assistant turn that the user turn right after it does not answer, answered
 * there with an error result, first in that turn. Returns the calls so answered too.
 */
function answerUnanswered(turns: readonly Message[]): { messages: Message[]; unanswered: string[] } {
  const unanswered: string[] = [];
  const messages = turns.map((turn, i) => {
    const previous = turns[i - 1];
    if (turn.role !== 'user' || previous?.role !== 'assistant') return turn;
    const answered = new Set(
      blocksOf(turn.content)
        .filter((b) => b.type === 'tool_result')
        .map((b) => b.tool_use_id),
    );
    const missing = [
      ...new Set(
        blocksOf(previous.content)
          .filter((b) => b.type === 'tool_use')
          .map((b) => String(b.id)),
      ),
    ].filter((id) => !answered.has(id));
    if (missing.length === 0) return turn;
    unanswered.push(...missing);
    const synthetic = missing.map((id) => ({
      type: 'tool_result',
      tool_use_id: id,
      is_error: true,
      content: NO_RESULT,
    }));
    return { role: 'user', content: [...synthetic, ...blocksOf(turn.content)] };
  });
  return { messages, unanswered };
}

/** A message without its thinking and redacted thinking blocks (a string has none). */
function withoutThinking(m: Message): Message {
  return typeof m.content === 'string'
    ? m
    : { ...m, content: m.content.filter((b) => !THINKING.has(b.type)) };
}

const isEmpty = (m: Message) =>
  typeof m.content === 'string' ? m.content.trim() === '' : m.content.length === 0;

/** Imports a file, format detected, as session `<file name>` of `tenantId`. */
async function importFile(tenantId: string, name: string) {
  const imported = await importTranscript(db(), path.join(CLAUDE_CODE_DIR, name), { tenantId });
  expect(imported).toMatchObject({
    format: 'claude-code',
    detected: true,
    messageCount: parsed(name).length,
  });
  return imported.sessionId;
}

const load = (tenantId: string, sessionId: string) => loadContext(db(), { tenantId, sessionId });

/**
 * Messages `summarize` keeps: the newest 4 (1 of a 4-message file: its three older messages, a
 * tool call and its result among them, make a summary smaller than what leaves), or more, back to
 * the newest message with thinking, so that the kept messages have thinking for the compaction to
 * leave out.
 */
function keepRecentOf(messages: readonly Message[]): number {
  const least = messages.length > 4 ? 4 : 1;
  const newestThinking = messages.findLastIndex((m) => thinkingOf([m]).length > 0);
  return newestThinking < 0 ? least : Math.max(least, messages.length - newestThinking);
}

/** Compacts with `summarize` and the extractive summarizer; it must apply. */
async function compact(tenantId: string, sessionId: string, messages: readonly Message[]) {
  const outcome = await ctx.compactInProcess({
    tenantId,
    sessionId,
    strategy: { type: 'summarize', keepRecent: keepRecentOf(messages), maxSummaryTokens: 2000 },
  });
  const row = outcome.row;
  expect(row?.status, `${sessionId}: ${row?.reason}`).toBe('applied');
  if (!row) throw new Error('no ledger row');
  return row;
}

/** Seqs of the rows a compaction archived, ascending. */
async function archivedSeqs(compactionId: string): Promise<number[]> {
  const rows = await ctx.tdb.database.sql<{ seq: number }[]>`
    select seq::int as seq from archived_messages where compaction_id = ${compactionId} order by seq`;
  return rows.map((r) => r.seq);
}

/** Every live row of a session: its native content as stored, and the whole row, as text. */
async function storedRows(tenantId: string, sessionId: string) {
  return ctx.tdb.database.sql<{ seq: number; blocks: string; row: string }[]>`
    select seq::int as seq, content_blocks::text as blocks, m::text as row
    from messages m where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

/**
 * The request an agent sends next with a context: it answers the calls the context leaves open,
 * or adds its next user message when the context ends with the assistant's turn.
 */
function finish(messages: readonly MessageParam[]): MessageParam[] {
  const last = messages[messages.length - 1];
  if (last?.role !== 'assistant') return [...messages];
  const calls = typeof last.content === 'string' ? [] : last.content.filter((b) => b.type === 'tool_use');
  const next: MessageParam =
    calls.length > 0
      ? {
          role: 'user',
          content: calls.map((c) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: 'ok' })),
        }
      : { role: 'user', content: 'Please continue.' };
  return [...messages, next];
}

/** Sends `messages` with the tools their calls name declared. */
function send(messages: MessageParam[], thinking: Anthropic.ThinkingConfigParam) {
  const names = new Set(
    arrayBlocks(messages as unknown as Message[])
      .filter((b) => b.type === 'tool_use')
      .map((b) => String(b.name)),
  );
  const tools = [...names].map((name) => ({
    name,
    description: 'a tool the session used',
    input_schema: { type: 'object' as const },
  }));
  return client.messages.create({
    model,
    max_tokens: 2048,
    thinking,
    ...(tools.length > 0 ? { tools } : {}),
    messages,
  });
}

describe.each(FILES)('%s', (name) => {
  it('imported, loadContext gives back the parsed messages, thinking and signatures included', async () => {
    const original = parsed(name);
    const sessionId = await importFile('loaded', name);
    const context = await load('loaded', sessionId);

    const merged = mergeAdjacent(original);
    const { messages, unanswered } = answerUnanswered(merged);
    const expected =
      original[0]?.role === 'user' ? messages : [{ role: 'user', content: LEAD_IN }, ...messages];
    expect(context.messages).toStrictEqual(expected);
    expect(context.system).toBeUndefined();
    expect(context.notices).toEqual([]);
    expect(context.sessionId).toBe(sessionId);
    // A call the parsed history leaves unanswered gets the renderer's error result, and only such a
    // call: the live branch can pass by the results of parallel calls (their lines are siblings).
    expect(
      arrayBlocks(context.messages as unknown as Message[]).filter((b) => b.content === NO_RESULT),
    ).toEqual(
      unanswered.map((id) =>
        expect.objectContaining({ type: 'tool_result', tool_use_id: id, is_error: true }),
      ),
    );
    // Every thinking block comes back as the file has it, signature and all.
    const thinking = thinkingOf(context.messages as unknown as Message[]);
    expect(thinking).toStrictEqual(thinkingOf(original));
    for (const b of thinking) expect(b.signature ?? b.data).toEqual(expect.stringMatching(/^.{40,}$/s));
  });

  it('compacted, the context is the summary then the kept messages without their thinking, and the strict API accepts it', async () => {
    const original = parsed(name);
    const sessionId = await importFile('compacted', name);
    const row = await compact('compacted', sessionId, original);
    const archived = await archivedSeqs(row.id);
    // The oldest messages leave, none of them pinned: seqs 0..n-1 of the import, in order.
    expect(archived).toEqual(archived.map((_, i) => i));
    expect(row.messagesArchived).toBe(archived.length);
    const kept = original.slice(archived.length);
    expect(kept.length).toBeGreaterThanOrEqual(keepRecentOf(original));
    // A file with thinking has some in its kept messages: signed before the compaction, it must go.
    expect(thinkingOf(kept).length > 0).toBe(thinkingOf(original).length > 0);

    const context = await load('compacted', sessionId);
    expect(context.notices).toEqual([]);
    expect(context.system).toBeUndefined();
    const first = context.messages[0];
    expect(first?.role).toBe('user');
    const summary = (Array.isArray(first?.content) ? first.content[0] : undefined) as Block | undefined;
    expect(summary).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } });
    expect(String(summary?.text).startsWith(`${SUMMARY_INTRO} Its originals up to seq `)).toBe(true);

    const stripped = kept.map(withoutThinking).filter((m) => !isEmpty(m));
    const summaryTurn: Message = { role: 'user', content: [summary as Block] };
    const { messages } = answerUnanswered(mergeAdjacent([summaryTurn, ...stripped]));
    expect(context.messages).toStrictEqual(messages);
    expect(thinkingOf(context.messages as unknown as Message[])).toEqual([]);

    // Thinking on when the file has thinking, as an agent resuming it would send.
    const request = finish(context.messages);
    if (thinkingOf(original).length === 0) {
      await expect(send(request, disabled)).resolves.toMatchObject({ type: 'message' });
      return;
    }
    const answeredTurn = request[request.length - 2] as unknown as Message;
    const answersCalls = blocksOf((request[request.length - 1] as unknown as Message).content).some(
      (b) => b.type === 'tool_result',
    );
    if (!answersCalls || THINKING.has(blocksOf(answeredTurn.content)[0]?.type ?? '')) {
      await expect(send(request, manual)).resolves.toMatchObject({ type: 'message' });
      return;
    }
    // The file ends with a call its model made without thinking: with thinking on, the API refuses
    // to answer it (the last assistant turn of a tool loop must begin with thinking), compacted or
    // not — the parsed turn has none either. Sent as it was made, without thinking.
    expect(answeredTurn).toStrictEqual(original[original.length - 1]);
    expect(thinkingOf([answeredTurn])).toEqual([]);
    await expect(send(request, manual)).rejects.toThrow(/must start with a thinking block/);
    await expect(send(request, disabled)).resolves.toMatchObject({ type: 'message' });
  });

  it('restored, every stored block comes back byte for byte and the context is as before', async () => {
    const original = parsed(name);
    const tenantId = 'restored';
    const sessionId = await importFile(tenantId, name);
    const before = await storedRows(tenantId, sessionId);
    expect(before.map((r) => r.seq)).toEqual(original.map((_, i) => i));
    const contextBefore = await load(tenantId, sessionId);

    const row = await compact(tenantId, sessionId, original);
    const archived = await archivedSeqs(row.id);
    expect(archived.length).toBeGreaterThan(0);
    expect(await storedRows(tenantId, sessionId)).not.toEqual(before);

    const restored = await restoreCompaction(db(), { tenantId, sessionId, compactionId: row.id });
    expect(restored).toMatchObject({
      status: 'restored',
      restoredSeqs: archived,
      removedSummarySeq: row.summarySeq,
    });
    const after = await storedRows(tenantId, sessionId);
    expect(after.map((r) => r.blocks)).toEqual(before.map((r) => r.blocks));
    expect(after.map((r) => r.row)).toEqual(before.map((r) => r.row));
    expect(await archivedSeqs(row.id)).toEqual([]);

    const contextAfter = await load(tenantId, sessionId);
    // The compaction and the restore each bump the session's version; nothing else differs.
    expect(contextAfter.version).toBe(contextBefore.version + 2);
    expect({ ...contextAfter, version: contextBefore.version }).toStrictEqual(contextBefore);
  });
});
