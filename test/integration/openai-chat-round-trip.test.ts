/**
 * Real Chat Completions sessions (corpus/openai-chat: SWE-agent runs on gpt-4o and GPT-4, crewAI
 * runs on gpt-4.1-mini and gpt-5-nano, see its README) through compactor and back: each file is
 * imported as `compactor import` reads it (its leading system prompt pinned), its context is the
 * imported messages byte for byte; compacted by every strategy that applies to it (slidingWindow,
 * clearToolResults on the files with tool calls, summarize with the extractive summarizer), its
 * context keeps the Chat Completions rules and is sent through the real `openai` SDK to the strict
 * fake API
 * (test/support/fake-openai-chat.ts), which accepts it; restored, every stored message comes back
 * byte for byte and the context is as before. A strategy that cannot help a file (tool answers
 * shorter than the placeholder, a session smaller than its summary as the context sends it) is
 * skipped, saying why, and changes nothing; one that applies makes the context smaller.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { loadContext } from '../../producer/index.ts';
import { SUMMARY_INTRO } from '../../shared/context/render.ts';
import type { ChatMessage } from '../../shared/formats/openai-chat/message.ts';
import { parseChatRequestsJsonl } from '../../shared/formats/openai-chat/transcript.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { chatRequestError, FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { useIntegration } from '../support/integration.ts';

const CHAT_DIR = fileURLToPath(new URL('../../corpus/openai-chat/', import.meta.url));
const FILES = readdirSync(CHAT_DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();

const ctx = useIntegration();
const fake = new FakeOpenAIChatServer();
let client: OpenAI;

beforeAll(async () => {
  client = new OpenAI({ apiKey: 'test', baseURL: await fake.start(), maxRetries: 0 });
});
afterAll(() => fake.close());

const db = () => ctx.tdb.database.db;

type Call = { id: string; function: { name: string; arguments: string } };
const callsOf = (m: ChatMessage): Call[] => ((m as { tool_calls?: Call[] }).tool_calls ?? []) as Call[];

/** A file's messages as `compactor import` reads them: the last request's `messages`. */
function parsed(name: string): ChatMessage[] {
  const file = path.join(CHAT_DIR, name);
  return parseChatRequestsJsonl(readFileSync(file, 'utf8'), file);
}

/** Imports a file, format detected, as session `<file name>` of `tenantId`. */
async function importFile(tenantId: string, name: string): Promise<string> {
  const imported = await importTranscript(db(), path.join(CHAT_DIR, name), { tenantId });
  expect(imported).toMatchObject({
    format: 'openai-chat',
    detected: true,
    messageCount: parsed(name).length,
  });
  return imported.sessionId;
}

const load = (tenantId: string, sessionId: string) =>
  loadContext(db(), { tenantId, sessionId, format: 'openai-chat' });

/** Every live row: its stored message as text, and the whole row as text. */
async function storedRows(tenantId: string, sessionId: string) {
  return ctx.tdb.database.sql<{ seq: number; blocks: string; row: string }[]>`
    select seq::int as seq, content_blocks::text as blocks, m::text as row
    from messages m where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

/** Seqs of the pinned live rows, ascending. */
async function pinnedSeqs(tenantId: string, sessionId: string): Promise<number[]> {
  const rows = await ctx.tdb.database.sql<{ seq: number }[]>`
    select seq::int as seq from messages
    where tenant_id = ${tenantId} and session_id = ${sessionId} and pinned order by seq`;
  return rows.map((r) => r.seq);
}

/** Seqs of the rows a compaction archived, ascending. */
async function archivedSeqs(compactionId: string): Promise<number[]> {
  const rows = await ctx.tdb.database.sql<{ seq: number }[]>`
    select seq::int as seq from archived_messages where compaction_id = ${compactionId} order by seq`;
  return rows.map((r) => r.seq);
}

async function compact(tenantId: string, sessionId: string, strategy: Strategy) {
  const { row } = await ctx.compactInProcess({ tenantId, sessionId, strategy });
  expect(row?.status, `${sessionId}: ${row?.reason}`).toBe('applied');
  if (!row) throw new Error('no ledger row');
  return row;
}

/**
 * The request an agent sends next with a context: it answers the calls the context leaves open
 * (a session can end on a call), or adds its next user message after the assistant's reply.
 */
function finish(messages: readonly ChatMessage[]): ChatMessage[] {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return [...messages];
  const open = last ? callsOf(last) : [];
  if (open.length > 0)
    return [
      ...messages,
      ...open.map((c): ChatMessage => ({ role: 'tool', tool_call_id: c.id, content: 'ok' })),
    ];
  return [...messages, { role: 'user', content: 'Please continue.' }];
}

/** The context as the API takes it: the strict rules pass, and the real SDK's request is answered. */
async function expectAccepted(messages: readonly ChatMessage[]) {
  const request = finish(messages);
  expect(chatRequestError(request)).toBeNull();
  const completion = await client.chat.completions.create({
    model: 'gpt-4o',
    messages: request as OpenAI.Chat.ChatCompletionMessageParam[],
  });
  expect(completion.choices[0]?.message.content).toBe('ok');
}

/** The ids of the newest `keep` tool calls of a history (the ones clearToolResults leaves alone). */
function newestCalls(messages: readonly ChatMessage[], keep: number): Set<string> {
  const ids = messages.flatMap((m) => callsOf(m).map((c) => c.id));
  return new Set(ids.slice(Math.max(0, ids.length - keep)));
}

/** The tool name of each call id in a history. */
function toolNames(messages: readonly ChatMessage[]): Map<string, string> {
  return new Map(messages.flatMap((m) => callsOf(m).map((c) => [c.id, c.function.name] as const)));
}

const hasToolCalls = (name: string) => parsed(name).some((m) => callsOf(m).length > 0);

/**
 * The oldest messages left, in one run: seqs first..cut-1, where first is 0 or, when the system
 * prompt stayed, 1. Returns the cut (the first kept seq).
 */
function oldestArchived(archived: readonly number[]): number {
  const first = archived[0] ?? -1;
  expect(first === 0 || first === 1, `archived from seq ${first}`).toBe(true);
  expect(archived).toEqual(archived.map((_, i) => first + i));
  return first + archived.length;
}

/**
 * What leads the context after a compaction that archived `archived`: the system prompt if it
 * stayed, then the text of the system messages that left restated as system messages, in order,
 * each distinct text once and none the kept prompt holds ("The context's rules" in the OpenAI Chat
 * Completions guide). crewAI starts each task with its system prompt again, so one session
 * archives several copies of it.
 */
function leadingSystem(original: readonly ChatMessage[], archived: readonly number[]): ChatMessage[] {
  const kept = archived[0] === 1 ? [original[0] as ChatMessage] : [];
  const texts = archived
    .map((seq) => original[seq] as ChatMessage)
    .filter((m) => m.role === 'system')
    .map((m) => m.content as string)
    .filter((t) => !kept.some((k) => k.content === t));
  const restated = [...new Set(texts)].map((content): ChatMessage => ({ role: 'system', content }));
  return [...kept, ...restated];
}

/** Checks the context a compaction left, from the original history and the seqs it archived. */
type Expect = (original: ChatMessage[], archived: number[], context: ChatMessage[]) => void;

/**
 * A strategy run on every file; the expected context when it applies, and the files it skips, with
 * the reason compactor gives (a skip changes nothing).
 */
const STRATEGIES: Array<{
  label: string;
  strategy: Strategy;
  applies: (name: string) => boolean;
  skips: Record<string, RegExp>;
  expect: Expect;
}> = [
  {
    label: 'slidingWindow:4',
    strategy: { type: 'slidingWindow', maxMessages: 4 },
    applies: () => true,
    skips: {},
    // The system prompt (restated if it left), then the newest messages from the cut on, untouched;
    // the cut never separates a call from its answers.
    expect: (original, archived, context) => {
      const cut = oldestArchived(archived);
      expect(original.length - cut).toBeGreaterThanOrEqual(4);
      const lead = leadingSystem(original, archived);
      expect(context).toStrictEqual([...lead, ...original.slice(cut)]);
      expect(context[lead.length]?.role).not.toBe('tool');
    },
  },
  {
    label: 'clearToolResults keep 1',
    strategy: {
      type: 'clearToolResults',
      keep: 1,
      clearAtLeast: 0,
      clearToolInputs: false,
      excludeTools: [],
    },
    applies: hasToolCalls,
    // crewAI's test tools answer in a few characters ("12"): the placeholder is longer than what it
    // would replace, so clearing would free nothing.
    skips: {
      'crewai__disabling-cache-for-agent.jsonl':
        /would grow the context by \d+ tokens: the placeholders are longer/,
      'crewai__max-usage-count-is-respected.jsonl':
        /would grow the context by \d+ tokens: the placeholders are longer/,
      'crewai__parallel-native-tool-calling.jsonl':
        /would grow the context by \d+ tokens: the placeholders are longer/,
    },
    // Every message stays where it was; each tool message but the newest call's has its content
    // replaced by the placeholder naming its tool, its tool_call_id kept.
    expect: (original, archived, context) => {
      const kept = newestCalls(original, 1);
      const names = toolNames(original);
      const cleared = original.flatMap((m, seq) =>
        m.role === 'tool' && !kept.has(m.tool_call_id) ? [seq] : [],
      );
      expect(cleared.length).toBeGreaterThan(0);
      expect(archived).toEqual(cleared);
      expect(context).toStrictEqual(
        original.map((m, seq) =>
          cleared.includes(seq) && m.role === 'tool'
            ? {
                role: 'tool',
                content: expect.stringMatching(
                  new RegExp(
                    `^\\[tool result cleared: ${names.get(m.tool_call_id)}, [\\d,]+ tokens, archived by compactor \\(compaction `,
                  ),
                ),
                tool_call_id: m.tool_call_id,
              }
            : m,
        ),
      );
    },
  },
  {
    label: 'summarize:4 (extractive)',
    strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 2000 },
    applies: () => true,
    // Short sessions: the summary, with its introduction and frame as the context sends it, is
    // larger than the messages that would leave.
    skips: {
      'crewai__max-usage-count-is-respected.jsonl': /would grow the context by \d+ tokens/,
      'crewai__parallel-native-tool-calling.jsonl': /would grow the context by \d+ tokens/,
      'sweagent__test-repo-6e44b9-fc.jsonl': /would grow the context by \d+ tokens/,
    },
    // The system prompt (restated if it left), the summary as a user message framed as a record,
    // then the newest messages from the cut on, untouched.
    expect: (original, archived, context) => {
      const cut = oldestArchived(archived);
      expect(original.length - cut).toBeGreaterThanOrEqual(4);
      const lead = leadingSystem(original, archived);
      expect(context.slice(0, lead.length)).toStrictEqual(lead);
      const [record, ...kept] = context.slice(lead.length);
      expect(record).toStrictEqual({
        role: 'user',
        content: expect.stringMatching(/<session-record>\n.+\n<\/session-record>$/s),
      });
      expect(String(record?.content).startsWith(`${SUMMARY_INTRO} Its originals up to seq `)).toBe(true);
      // The task the agent was set is the summary's goal: the first user message, past the
      // in-context demonstration (a user message too) that SWE-agent's older runs begin with.
      const task = String(
        original.find((m) => m.role === 'user' && !String(m.content).startsWith('Here is a demonstration'))
          ?.content,
      )
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 60);
      expect(String(record?.content)).toContain(`Goal: ${task}`);
      expect(kept).toStrictEqual(original.slice(cut));
      expect(kept[0]?.role).not.toBe('tool');
    },
  },
];

describe.each(FILES)('%s', (name) => {
  it("imported, the context is the last request's messages byte for byte, and the API accepts it", async () => {
    const original = parsed(name);
    const sessionId = await importFile('loaded', name);
    const rows = await storedRows('loaded', sessionId);
    expect(rows.map((r) => r.blocks)).toEqual(original.map((m) => JSON.stringify(m)));
    // The system prompt the session begins with is pinned: compactions keep it in place.
    const leading = original.findIndex((m) => m.role !== 'system' && m.role !== 'developer');
    expect(await pinnedSeqs('loaded', sessionId)).toEqual(original.slice(0, leading).map((_, seq) => seq));
    const context = await load('loaded', sessionId);
    expect(JSON.stringify(context.messages)).toBe(JSON.stringify(original));
    expect(context).toMatchObject({ format: 'openai-chat', sessionId, notices: [] });
    await expectAccepted(context.messages);
  });

  // clearToolResults has nothing to clear in a file without tool calls: it is not run there.
  for (const { label, strategy, skips, expect: expectContext } of STRATEGIES.filter((s) => s.applies(name))) {
    const skip = skips[name];
    if (skip) {
      it(`${label} skips it, saying why, and changes nothing`, async () => {
        const tenantId = `${label.replace(/[^a-z]+/gi, '-').replace(/-$/, '')}-skipped`;
        const sessionId = await importFile(tenantId, name);
        const before = await storedRows(tenantId, sessionId);
        const contextBefore = await load(tenantId, sessionId);
        const { row } = await ctx.compactInProcess({ tenantId, sessionId, strategy });
        expect(row).toMatchObject({ status: 'skipped', reason: expect.stringMatching(skip) });
        expect(await storedRows(tenantId, sessionId)).toEqual(before);
        expect(await load(tenantId, sessionId)).toStrictEqual(contextBefore);
      });
      continue;
    }
    it(`compacted by ${label}: the context keeps the rules and is accepted; restored, byte-exact`, async () => {
      const original = parsed(name);
      const tenantId = label.replace(/[^a-z]+/gi, '-').replace(/-$/, '');
      const sessionId = await importFile(tenantId, name);
      const before = await storedRows(tenantId, sessionId);
      const contextBefore = await load(tenantId, sessionId);

      const row = await compact(tenantId, sessionId, strategy);
      const archived = await archivedSeqs(row.id);
      expect(archived.length).toBeGreaterThan(0);
      expect(row.messagesArchived).toBe(archived.length);
      const context = await load(tenantId, sessionId);
      expect(context.notices).toEqual([]);
      expectContext(original, archived, context.messages);
      // A compaction that applies never makes the context the agent sends larger.
      expect(context.tokens).toBeLessThan(contextBefore.tokens);
      await expectAccepted(context.messages);

      const restored = await restoreCompaction(db(), { tenantId, sessionId, compactionId: row.id });
      expect(restored).toMatchObject({ status: 'restored', restoredSeqs: archived });
      const after = await storedRows(tenantId, sessionId);
      expect(after.map((r) => r.blocks)).toEqual(before.map((r) => r.blocks));
      expect(after.map((r) => r.row)).toEqual(before.map((r) => r.row));
      expect(await archivedSeqs(row.id)).toEqual([]);
      const contextAfter = await load(tenantId, sessionId);
      // The compaction and the restore each bump the session's version; nothing else differs.
      expect(contextAfter.version).toBe(contextBefore.version + 2);
      expect({ ...contextAfter, version: contextBefore.version }).toStrictEqual(contextBefore);
    });
  }
});
