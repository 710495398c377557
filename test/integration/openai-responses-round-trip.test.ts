/**
 * Real Responses API sessions (corpus/openai-responses: a Codex CLI session on gpt-5.5 and a
 * pydantic-ai run with server-side tool search, see its README) through compactor and back: each
 * file is imported as `compactor import` reads it, and its stored items and its context are the
 * last request's `input` byte for byte; compacted by every strategy that applies to it
 * (slidingWindow, clearToolResults, clearThinking, summarize with the extractive summarizer), its
 * context keeps the Responses API's rules (every client tool call answered by its output, no output
 * without its call, each reasoning item directly before the item it produced with its
 * `encrypted_content` intact) and is sent with `store: false` through the real `openai` SDK to the
 * strict fake API (test/support/fake-openai-responses.ts, which takes the recorded blobs as its
 * own and refuses one altered); restored, every stored item comes back byte for byte and the
 * context is as before. A strategy that cannot help a file is skipped, saying why, and changes
 * nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { loadContext } from '../../producer/index.ts';
import { SUMMARY_INTRO } from '../../shared/context/render.ts';
import {
  isCallItem,
  isOutputItem,
  itemType,
  outputTypeOf,
  pairId,
  type ResponsesItem,
  responsesText,
} from '../../shared/formats/openai-responses/item.ts';
import { parseResponsesLog } from '../../shared/formats/openai-responses/transcript.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { FakeOpenAIResponsesServer, responsesInputError } from '../support/fake-openai-responses.ts';
import { useIntegration } from '../support/integration.ts';

const DIR = fileURLToPath(new URL('../../corpus/openai-responses/', import.meta.url));
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();

const ctx = useIntegration();
const fake = new FakeOpenAIResponsesServer();
let client: OpenAI;

beforeAll(async () => {
  client = new OpenAI({ apiKey: 'test', baseURL: await fake.start(), maxRetries: 0 });
  // The recorded reasoning blobs are OpenAI's: the fake takes them (and nothing altered) as its own.
  for (const name of FILES) fake.state.admit(parsed(name));
});
afterAll(() => fake.close());

const db = () => ctx.tdb.database.db;

/** A file's items as `compactor import` reads them: the last request's `input`. */
function parsed(name: string): ResponsesItem[] {
  const file = path.join(DIR, name);
  return parseResponsesLog(readFileSync(file, 'utf8'), file);
}

/** Imports a file, format detected, as session `<file name>` of `tenantId`. */
async function importFile(tenantId: string, name: string): Promise<string> {
  const imported = await importTranscript(db(), path.join(DIR, name), { tenantId });
  expect(imported).toMatchObject({
    format: 'openai-responses',
    detected: true,
    messageCount: parsed(name).length,
  });
  return imported.sessionId;
}

const load = (tenantId: string, sessionId: string) =>
  loadContext(db(), { tenantId, sessionId, format: 'openai-responses' });

/** Every live row: its stored item as text, and the whole row as text. */
async function storedRows(tenantId: string, sessionId: string) {
  return ctx.tdb.database.sql<{ seq: number; blocks: string; row: string }[]>`
    select seq::int as seq, content_blocks::text as blocks, m::text as row
    from messages m where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
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
 * The request an agent sends next with a context: as it is when it ends on a tool's output (the
 * model answers it), with outputs for the calls it leaves open, or with the next user message.
 */
function finish(input: readonly ResponsesItem[]): ResponsesItem[] {
  const last = input[input.length - 1];
  if (last !== undefined && isOutputItem(last)) return [...input];
  const answered = new Set(input.filter(isOutputItem).map(pairId));
  const open = input.filter((i) => isCallItem(i) && !answered.has(pairId(i)));
  if (open.length > 0) {
    return [
      ...input,
      ...open.map((c) => ({ type: String(outputTypeOf(c)), call_id: c.call_id, output: 'ok' })),
    ];
  }
  return [...input, { role: 'user', content: 'Please continue.' }];
}

/**
 * The rules a context keeps: every client tool call is answered by an output with its `call_id`
 * after it, every output answers a call before it, and each reasoning item stands directly before
 * an item the model produced, carrying a recorded `encrypted_content` unchanged.
 */
function expectRules(original: readonly ResponsesItem[], input: readonly ResponsesItem[]) {
  input.forEach((item, n) => {
    const type = itemType(item);
    if (isCallItem(item)) {
      const answer = input.findIndex(
        (o) => itemType(o) === outputTypeOf(item) && isOutputItem(o) && pairId(o) === pairId(item),
      );
      expect(answer, `${type} ${String(item.call_id)} answered`).toBeGreaterThan(n);
    }
    if (isOutputItem(item)) {
      const call = input.findIndex((c) => isCallItem(c) && pairId(c) === pairId(item));
      expect(call, `${type} ${String(item.call_id)} has its call before it`).toBeGreaterThanOrEqual(0);
      expect(call).toBeLessThan(n);
    }
    if (type === 'reasoning') {
      // The recorded item, byte for byte, and the item it stood before in the session after it.
      const at = original.findIndex((o) => o.encrypted_content === item.encrypted_content);
      expect(at, `reasoning at ${n} carries a recorded blob`).toBeGreaterThanOrEqual(0);
      expect(JSON.stringify(item)).toBe(JSON.stringify(original[at]));
      const next = input[n + 1];
      expect(next, `reasoning at ${n} is followed by what it produced`).toStrictEqual(original[at + 1]);
      const produced = next === undefined ? '' : itemType(next);
      expect(
        produced === 'message'
          ? next?.role === 'assistant'
          : !['reasoning', 'compaction'].includes(produced) && !isOutputItem(next as ResponsesItem),
        `reasoning at ${n} is followed by ${produced}`,
      ).toBe(true);
    }
  });
}

/** The context as the API takes it: the strict rules pass, and the real SDK's request is answered. */
async function expectAccepted(input: readonly ResponsesItem[]) {
  const request = finish(input);
  expect(responsesInputError(request, fake.state, false)).toBeNull();
  const response = await client.responses.create({
    model: 'gpt-5.5',
    input: request as OpenAI.Responses.ResponseInput,
    store: false,
  });
  expect(response.output_text).toBe('ok');
}

/** The seqs of a kind of item in a history. */
const seqsOf = (items: readonly ResponsesItem[], is: (item: ResponsesItem) => boolean) =>
  items.flatMap((item, seq) => (is(item) ? [seq] : []));

const isInstruction = (item: ResponsesItem) =>
  itemType(item) === 'message' && (item.role === 'system' || item.role === 'developer');

/**
 * The oldest items left, in one run: seqs first..cut-1, where first is 0 or, when the leading
 * instructions stayed, 1. Returns the cut (the first kept seq).
 */
function oldestArchived(archived: readonly number[]): number {
  const first = archived[0] ?? -1;
  expect(first === 0 || first === 1, `archived from seq ${first}`).toBe(true);
  expect(archived).toEqual(archived.map((_, i) => first + i));
  return first + archived.length;
}

/**
 * What leads the context after a compaction that archived `archived`: the leading instructions if
 * they stayed, then the text of every system or developer message that left, restated as a
 * `developer` message, in order (shared/formats/openai-responses/context.ts).
 */
function leadingInstructions(
  original: readonly ResponsesItem[],
  archived: readonly number[],
): ResponsesItem[] {
  const kept = archived[0] === 1 ? [original[0] as ResponsesItem] : [];
  const restated = archived
    .map((seq) => original[seq] as ResponsesItem)
    .filter(isInstruction)
    .map((m): ResponsesItem => ({ role: 'developer', content: responsesText(m) }));
  return [...kept, ...restated];
}

/** The ids of the newest `keep` client tool calls of a history (the ones clearToolResults leaves alone). */
function newestCalls(items: readonly ResponsesItem[], keep: number): Set<string | null> {
  const ids = items.filter(isCallItem).map(pairId);
  return new Set(ids.slice(Math.max(0, ids.length - keep)));
}

/** Checks the context a compaction left, from the original items and the seqs it archived. */
type Expect = (original: ResponsesItem[], archived: number[], context: ResponsesItem[]) => void;

/**
 * A strategy run on every file; the expected context when it applies, and the files it skips, with
 * the reason compactor gives (a skip changes nothing).
 */
const STRATEGIES: Array<{
  label: string;
  strategy: Strategy;
  skips: Record<string, RegExp>;
  expect: Expect;
}> = [
  {
    label: 'slidingWindow:4',
    strategy: { type: 'slidingWindow', maxMessages: 4 },
    skips: {},
    // The instructions (restated if they left), then the newest items from the cut on, untouched:
    // the cut never separates a call from its output, nor a reasoning item from what it produced.
    expect: (original, archived, context) => {
      const cut = oldestArchived(archived);
      expect(original.length - cut).toBeGreaterThanOrEqual(4);
      const lead = leadingInstructions(original, archived);
      expect(context).toStrictEqual([...lead, ...original.slice(cut)]);
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
    // pydantic-ai's tools answer in a sentence ("Weather in Paris: sunny"): the placeholder is
    // longer than what it would replace.
    skips: { 'pydantic-ai__native-tool-search.jsonl': /would grow the context by \d+ tokens/ },
    // Every item stays where it was; each client tool's output but the newest call's has its
    // `output` replaced by the placeholder naming its tool, its call_id and other fields kept.
    // Server-side tools' items (web_search_call) are not outputs: untouched.
    expect: (original, archived, context) => {
      const kept = newestCalls(original, 1);
      const names = new Map(original.filter(isCallItem).map((c) => [c.call_id, String(c.name)]));
      const cleared = seqsOf(original, (m) => isOutputItem(m) && !kept.has(pairId(m)));
      expect(cleared.length).toBeGreaterThan(0);
      expect(archived).toEqual(cleared);
      expect(context).toStrictEqual(
        original.map((m, seq) =>
          cleared.includes(seq)
            ? {
                ...m,
                output: expect.stringMatching(
                  new RegExp(
                    `^\\[tool result cleared: ${names.get(m.call_id)}, [\\d,]+ tokens, archived by compactor \\(compaction `,
                  ),
                ),
              }
            : m,
        ),
      );
    },
  },
  {
    label: 'clearThinking:1',
    strategy: { type: 'clearThinking', keep: 1 },
    // One reasoning item, in the newest turn that reasoned: nothing older to clear.
    skips: {
      'pydantic-ai__native-tool-search.jsonl': /nothing to clear: 1 assistant turn\(s\) hold thinking/,
    },
    // Every reasoning item but the newest turn's is archived, and the context leaves them out; every
    // other item is sent as stored (these carry no ids a dropped reasoning item would orphan).
    expect: (original, archived, context) => {
      const reasoning = seqsOf(original, (m) => itemType(m) === 'reasoning');
      expect(archived).toEqual(reasoning.slice(0, -1));
      expect(context).toStrictEqual(original.filter((_, seq) => !archived.includes(seq)));
    },
  },
  {
    label: 'summarize:4 (extractive)',
    strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 2000 },
    // pydantic-ai's run is too short: the summary, framed as the context sends it, is larger than
    // the few short items it would replace, and no compaction may make the context larger.
    skips: { 'pydantic-ai__native-tool-search.jsonl': /would grow the context by \d+ tokens/ },
    // The instructions (restated if they left), the summary as a user message framed as a record
    // quoting the last user request, then the newest items from the cut on, untouched.
    expect: (original, archived, context) => {
      const cut = oldestArchived(archived);
      expect(original.length - cut).toBeGreaterThanOrEqual(4);
      const lead = leadingInstructions(original, archived);
      expect(context.slice(0, lead.length)).toStrictEqual(lead);
      const [record, ...kept] = context.slice(lead.length);
      expect(record).toStrictEqual({
        type: 'message',
        role: 'user',
        content: expect.stringMatching(/<session-record>\n.+\n<\/session-record>$/s),
      });
      expect(String(record?.content).startsWith(`${SUMMARY_INTRO} Its originals up to seq `)).toBe(true);
      const asked = original.slice(0, cut).findLast((m) => itemType(m) === 'message' && m.role === 'user');
      expect(String(record?.content)).toContain(
        `Last user request (verbatim):\n${responsesText(asked as ResponsesItem)}`,
      );
      expect(kept).toStrictEqual(original.slice(cut));
    },
  },
];

describe.each(FILES)('%s', (name) => {
  it("imported, the stored items and the context are the last request's input byte for byte, and the API accepts it", async () => {
    const original = parsed(name);
    const sessionId = await importFile('loaded', name);
    const rows = await storedRows('loaded', sessionId);
    expect(rows.map((r) => r.blocks)).toEqual(original.map((m) => JSON.stringify(m)));
    const context = await load('loaded', sessionId);
    expect(JSON.stringify(context.input)).toBe(JSON.stringify(original));
    // The bytes of the last line's `input` as the file holds them (written as compact JSON).
    const lastLine = readFileSync(path.join(DIR, name), 'utf8').trimEnd().split('\n').at(-1);
    expect(lastLine).toContain(`"input":${JSON.stringify(context.input)}`);
    expect(context).toMatchObject({ format: 'openai-responses', sessionId, notices: [] });
    expectRules(original, context.input);
    await expectAccepted(context.input);
    // The fake checks the recorded blobs: one altered by a byte is refused, as the API refuses it.
    const altered = finish(context.input).map((i) =>
      itemType(i) === 'reasoning' ? { ...i, encrypted_content: `${String(i.encrypted_content)}x` } : i,
    );
    await expect(
      client.responses.create({
        model: 'gpt-5.5',
        input: altered as OpenAI.Responses.ResponseInput,
        store: false,
      }),
    ).rejects.toThrow(/could not be verified/);
  });

  for (const { label, strategy, skips, expect: expectContext } of STRATEGIES) {
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
      expectContext(original, archived, context.input);
      expectRules(original, context.input);
      await expectAccepted(context.input);

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
