/**
 * An AI SDK agent's session (`ai-sdk` format) through compactor and back: the provider-level
 * prompt of a coding agent (`LanguageModelV2/V3/V4Message`s of `@ai-sdk/provider`, mixed), with
 * client tool calls (one run in parallel), a provider-executed web search, reasoning carrying
 * Anthropic signatures and OpenAI encrypted reasoning in `providerOptions`, and files as a
 * `Uint8Array` and as a `URL`, encoded by `encodeAiSdkMessage`, created, its context loaded and
 * decoded to the very prompt; compacted by every strategy (slidingWindow, clearToolResults with
 * its inputs, clearThinking, summarize with the extractive summarizer), its context keeps the rules
 * every provider behind the SDK needs (the system messages first, each client call answered by a
 * tool-result in the tool messages directly after it, none orphaned, reasoning in its assistant
 * message with its providerOptions unchanged, a user message first); restored, every stored row
 * comes back byte for byte and the context is as before. The same session over the HTTP API:
 * created, appended to, its context read, a bad message refused naming the field, an AI SDK
 * message refused by an Anthropic session naming the word.
 */
import type {
  LanguageModelV2Message,
  LanguageModelV3Message,
  LanguageModelV4Message,
} from '@ai-sdk/provider';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendMessages, createSession, loadContext } from '../../producer/index.ts';
import { LEAD_IN, SUMMARY_INTRO } from '../../shared/context/render.ts';
import {
  type AiSdkStoredMessage,
  decodeAiSdkPrompt,
  encodeAiSdkMessage,
} from '../../shared/formats/ai-sdk/encoding.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { serveApi } from '../support/api-server.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const db = () => ctx.tdb.database.db;

type Message = LanguageModelV2Message | LanguageModelV3Message | LanguageModelV4Message;
type Part = { type: string } & Record<string, unknown>;
type Stored = AiSdkStoredMessage & { content: string | Part[] };

/** A PNG's first bytes (signature and IHDR, 640 × 480), then noise: a screenshot as the SDK holds it. */
function screenshot(): Uint8Array {
  const bytes = new Uint8Array(4096);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(bytes.buffer).setUint32(16, 640);
  new DataView(bytes.buffer).setUint32(20, 480);
  for (let i = 33; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
  return bytes;
}

/** A tool's long output: what clearToolResults replaces. */
const listing = (name: string) =>
  Array.from(
    { length: 120 },
    (_, i) => `${name}/file-${i}.ts: export function f${i}() { return ${i}; }`,
  ).join('\n');

const signed = (text: string) => ({
  type: 'reasoning' as const,
  text,
  providerOptions: { anthropic: { signature: `EqQBCkgIARABGAIiQ${Buffer.from(text).toString('base64')}` } },
});

/** The agent's prompt: every message as the AI SDK hands it to the model. */
function prompt(): Message[] {
  const turn = (n: number): Message[] => [
    { role: 'user', content: [{ type: 'text', text: `Step ${n}: run the checks on module ${n}.` }] },
    {
      role: 'assistant',
      content: [
        signed(`Module ${n} needs its checks run.`),
        {
          type: 'tool-call',
          toolCallId: `call_check_${n}`,
          toolName: 'bash',
          input: { cmd: `npm test -- m${n}` },
        },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: `call_check_${n}`,
          toolName: 'bash',
          output: { type: 'text', value: listing(`m${n}`) },
        },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: `Module ${n} passes.` }] },
  ];
  return [
    { role: 'system', content: 'You are a careful coding assistant.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Fix the parser. Here is the failing screen and the spec.' },
        { type: 'file', data: screenshot(), mediaType: 'image/png', filename: 'screen.png' },
        {
          type: 'file',
          data: new URL('https://example.com/specs/parser spec.pdf'),
          mediaType: 'application/pdf',
        },
      ],
      providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
    },
    {
      role: 'assistant',
      content: [
        signed('I should read the parser first.'),
        { type: 'text', text: 'Reading the parser.' },
        {
          type: 'tool-call',
          toolCallId: 'call_read',
          toolName: 'read_file',
          input: { path: 'src/parser.ts' },
        },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_read',
          toolName: 'read_file',
          output: { type: 'text', value: listing('src') },
        },
      ],
    },
    {
      role: 'assistant',
      content: [
        {
          type: 'reasoning',
          text: '',
          providerOptions: {
            openai: { itemId: 'rs_01', reasoningEncryptedContent: 'gAAAAB-encrypted-blob==' },
          },
        },
        {
          type: 'tool-call',
          toolCallId: 'call_grep',
          toolName: 'grep',
          input: { pattern: 'parseLine' },
          providerOptions: { openai: { itemId: 'fc_01' } },
        },
        { type: 'tool-call', toolCallId: 'call_ls', toolName: 'bash', input: { cmd: 'ls src' } },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_grep',
          toolName: 'grep',
          output: { type: 'json', value: { hits: listing('grep').split('\n') } },
        },
        {
          type: 'tool-result',
          toolCallId: 'call_ls',
          toolName: 'bash',
          output: {
            type: 'content',
            value: [
              { type: 'text', text: listing('ls') },
              { type: 'file', data: { type: 'data', data: screenshot() }, mediaType: 'image/png' },
            ],
          },
        },
      ],
    },
    {
      role: 'assistant',
      content: [
        signed('The spec says empty lines are skipped.'),
        {
          type: 'tool-call',
          toolCallId: 'ws_1',
          toolName: 'web_search',
          input: { query: 'parser spec' },
          providerExecuted: true,
        },
        {
          type: 'tool-result',
          toolCallId: 'ws_1',
          toolName: 'web_search',
          output: { type: 'json', value: [{ url: 'https://example.com' }] },
        },
        { type: 'text', text: 'The parser must skip empty lines; fixing it.' },
        {
          type: 'tool-call',
          toolCallId: 'call_edit',
          toolName: 'edit',
          input: { path: 'src/parser.ts', patch: '+ if (line === "") continue;' },
        },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_edit',
          toolName: 'edit',
          output: { type: 'error-text', value: 'patch did not apply' },
        },
      ],
    },
    ...turn(1),
    ...turn(2),
    ...turn(3),
    {
      role: 'assistant',
      content: [signed('All green.'), { type: 'text', text: 'Everything passes now.' }],
    },
  ];
}

const ORIGINAL = prompt();
const STORED = ORIGINAL.map((m) => encodeAiSdkMessage(m)) as Stored[];

async function create(tenantId: string, sessionId: string): Promise<void> {
  await createSession(db(), {
    tenantId,
    sessionId,
    format: 'ai-sdk',
    messages: STORED.map((message, seq) => ({ seq, message, pinned: seq === 0 })) as never,
  });
}

const load = async (tenantId: string, sessionId: string) => {
  const context = await loadContext(db(), { tenantId, sessionId, format: 'ai-sdk' });
  return { ...context, prompt: context.prompt as Stored[] };
};

/** Every live row: its stored message as text, and the whole row as text. */
async function storedRows(tenantId: string, sessionId: string) {
  return ctx.tdb.database.sql<{ seq: number; blocks: string; row: string }[]>`
    select seq::int as seq, content_blocks::text as blocks, m::text as row
    from messages m where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

async function archivedSeqs(compactionId: string): Promise<number[]> {
  const rows = await ctx.tdb.database.sql<{ seq: number }[]>`
    select seq::int as seq from archived_messages where compaction_id = ${compactionId} order by seq`;
  return rows.map((r) => r.seq);
}

const partsOf = (m: Stored): Part[] => (typeof m.content === 'string' ? [] : m.content);
const isClientCall = (p: Part) => p.type === 'tool-call' && p.providerExecuted !== true;

/** What the agent appends after the session above: the start of one more run. */
const NEXT: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'One more: lint it.' }] },
  {
    role: 'assistant',
    content: [
      signed('Lint.'),
      { type: 'tool-call', toolCallId: 'call_lint', toolName: 'bash', input: { cmd: 'lint' } },
    ],
  },
];

/** Every reasoning part the agent wrote, as stored, by its JSON. */
const REASONING = new Set(
  [...STORED, ...NEXT.map((m) => encodeAiSdkMessage(m) as Stored)].flatMap((m) =>
    partsOf(m)
      .filter((p) => p.type === 'reasoning')
      .map((p) => JSON.stringify(p)),
  ),
);

/**
 * A message as a context sends it after a compaction that changed what came before it: without the
 * reasoning signed over the old history (shared/formats/ai-sdk/context.ts), the rest as stored.
 */
const unsigned = (m: Stored): Stored =>
  m.role === 'assistant' && partsOf(m).some((p) => p.type === 'reasoning')
    ? { ...m, content: partsOf(m).filter((p) => p.type !== 'reasoning') }
    : m;

/**
 * The rules every provider behind the SDK needs, read off the prompt alone: system messages only
 * first; a user message first after them; each assistant message's client calls answered, each
 * once, by tool-results in the tool messages directly after it (or still open at the very end);
 * every tool-result of a tool message answers a call of the assistant message before its run;
 * reasoning only in assistant messages, each part one the session stored, providerOptions and all.
 */
function expectRules(prompt: readonly Stored[]): void {
  const firstOther = prompt.findIndex((m) => m.role !== 'system');
  expect(
    prompt.slice(firstOther).some((m) => m.role === 'system'),
    'system messages first',
  ).toBe(false);
  expect(prompt[firstOther]?.role, 'a user message first').toBe('user');
  prompt.forEach((m, i) => {
    for (const part of partsOf(m)) {
      if (part.type === 'reasoning') {
        expect(m.role).toBe('assistant');
        expect(REASONING.has(JSON.stringify(part)), `reasoning at ${i} as stored`).toBe(true);
      }
    }
    if (m.role === 'tool') {
      let j = i;
      while (prompt[j]?.role === 'tool') j--;
      const asked = new Set(
        partsOf(prompt[j] as Stored)
          .filter((p) => p.type === 'tool-call')
          .map((p) => p.toolCallId),
      );
      for (const part of partsOf(m).filter((p) => p.type === 'tool-result')) {
        expect(
          asked.has(part.toolCallId),
          `result ${String(part.toolCallId)} at ${i} answers the call before it`,
        ).toBe(true);
      }
    }
    if (m.role !== 'assistant') return;
    const calls = partsOf(m)
      .filter(isClientCall)
      .map((p) => p.toolCallId);
    const answers: unknown[] = [];
    let j = i + 1;
    for (; prompt[j]?.role === 'tool'; j++) {
      answers.push(
        ...partsOf(prompt[j] as Stored)
          .filter((p) => p.type === 'tool-result')
          .map((p) => p.toolCallId),
      );
    }
    const open = j >= prompt.length;
    if (!open)
      expect([...answers].sort(), `calls of the assistant message at ${i} answered`).toEqual(
        [...calls].sort(),
      );
    else expect(answers.every((id) => calls.includes(id))).toBe(true);
  });
}

async function compact(tenantId: string, sessionId: string, strategy: Strategy) {
  const { row } = await ctx.compactInProcess({ tenantId, sessionId, strategy });
  expect(row?.status, `${sessionId}: ${row?.reason}`).toBe('applied');
  if (!row) throw new Error('no ledger row');
  return row;
}

/** The context a compaction left, checked from the seqs it archived. */
type Expect = (archived: number[], prompt: Stored[]) => void;

/** The prompt's messages after the leading system ones (and the lead-in a cut may need). */
const body = (prompt: Stored[]) => prompt.slice(prompt.findIndex((m) => m.role !== 'system'));

const STRATEGIES: Array<{ label: string; strategy: Strategy; expect: Expect }> = [
  {
    label: 'slidingWindow:6',
    strategy: { type: 'slidingWindow', maxMessages: 6 },
    // The pinned system prompt, then the newest messages from the cut on (the lead-in before them
    // if they begin with an assistant message), as stored but for their reasoning, signed over
    // the history that left.
    expect: (archived, prompt) => {
      expect(archived[0]).toBe(1);
      const cut = (archived.at(-1) as number) + 1;
      expect(archived).toEqual(Array.from({ length: cut - 1 }, (_, i) => i + 1));
      expect(prompt[0]).toStrictEqual(STORED[0]);
      const kept = STORED.slice(cut).map(unsigned);
      const lead =
        kept[0]?.role === 'user' ? [] : [{ role: 'user', content: [{ type: 'text', text: LEAD_IN }] }];
      expect(body(prompt)).toStrictEqual([...lead, ...kept]);
    },
  },
  {
    label: 'clearToolResults keep 1 with inputs',
    strategy: { type: 'clearToolResults', keep: 1, clearAtLeast: 0, clearToolInputs: true, excludeTools: [] },
    // Every message stays; each client result but the newest call's reads the placeholder naming its
    // tool, and its call's input is {}; the provider's web search is untouched. The reasoning was
    // signed over the results as they were: the context leaves it out (storage keeps it).
    expect: (archived, prompt) => {
      const calls = STORED.flatMap((m) =>
        partsOf(m)
          .filter(isClientCall)
          .map((p) => String(p.toolCallId)),
      );
      const cleared = new Set(calls.slice(0, -1));
      const touched = STORED.flatMap((m, seq) =>
        partsOf(m).some(
          (p) => cleared.has(String(p.toolCallId)) && (p.type === 'tool-result' || isClientCall(p)),
        )
          ? [seq]
          : [],
      );
      expect(archived).toEqual(touched);
      expect(prompt).toStrictEqual(
        STORED.map(unsigned).map((m) =>
          typeof m.content === 'string'
            ? m
            : {
                ...m,
                content: m.content.map((p) => {
                  if (!cleared.has(String(p.toolCallId))) return p;
                  if (p.type === 'tool-result' && m.role === 'tool') {
                    return {
                      ...p,
                      output: {
                        type: 'text',
                        value: expect.stringMatching(
                          new RegExp(
                            `^\\[tool result cleared: ${String(p.toolName)}, [\\d,]+ tokens, archived by compactor \\(compaction `,
                          ),
                        ),
                      },
                    };
                  }
                  return isClientCall(p) ? { ...p, input: {} } : p;
                }),
              },
        ),
      );
    },
  },
  {
    label: 'clearThinking:1',
    strategy: { type: 'clearThinking', keep: 1 },
    // Every assistant message but the newest with reasoning loses its reasoning parts, the rest of
    // it in order; a message of reasoning alone would keep it (none here).
    expect: (archived, prompt) => {
      const withReasoning = STORED.flatMap((m, seq) =>
        partsOf(m).some((p) => p.type === 'reasoning') ? [seq] : [],
      );
      expect(archived).toEqual(withReasoning.slice(0, -1));
      expect(prompt).toStrictEqual(
        STORED.map((m, seq) =>
          archived.includes(seq) ? { ...m, content: partsOf(m).filter((p) => p.type !== 'reasoning') } : m,
        ),
      );
    },
  },
  {
    label: 'summarize:4 (extractive)',
    strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 2000 },
    // The pinned system prompt, the summary as a user message framed as a record quoting the last
    // user request, then the newest messages from the cut on, without the reasoning signed over the
    // history the summary replaced.
    expect: (archived, prompt) => {
      const cut = (archived.at(-1) as number) + 1;
      expect(archived).toEqual(Array.from({ length: cut - 1 }, (_, i) => i + 1));
      expect(prompt[0]).toStrictEqual(STORED[0]);
      const [record, ...kept] = body(prompt);
      expect(record).toStrictEqual({
        role: 'user',
        content: [
          { type: 'text', text: expect.stringMatching(/<session-record>\n.+\n<\/session-record>$/s) },
        ],
      });
      const text = String((record?.content[0] as Part | undefined)?.text);
      expect(text.startsWith(`${SUMMARY_INTRO} Its originals up to seq ${cut - 1}`)).toBe(true);
      expect(text).toContain('Last user request (verbatim):\nStep ');
      expect(kept).toStrictEqual(STORED.slice(cut).map(unsigned));
    },
  },
];

describe('an AI SDK session', () => {
  it('is stored message by message as encoded, and its context decodes to the very prompt', async () => {
    await create('loaded', 's');
    const rows = await storedRows('loaded', 's');
    expect(rows.map((r) => r.blocks)).toEqual(STORED.map((m) => JSON.stringify(m)));
    const context = await load('loaded', 's');
    expect(context).toMatchObject({ format: 'ai-sdk', sessionId: 's', notices: [] });
    expect(JSON.stringify(context.prompt)).toBe(JSON.stringify(STORED));
    expectRules(context.prompt);
    const decoded = decodeAiSdkPrompt(context.prompt);
    const file = (m: unknown, j: number) => ((m as { content: Part[] }).content[j] as Part).data;
    expect(Buffer.from(file(decoded[1], 1) as Uint8Array).equals(Buffer.from(screenshot()))).toBe(true);
    expect(file(decoded[1], 2)).toBeInstanceOf(URL);
    expect((file(decoded[1], 2) as URL).href).toBe('https://example.com/specs/parser%20spec.pdf');
    const tool = decoded[5] as unknown as { content: Array<{ output: { value: Part[] } }> };
    const v4File = tool.content[1]?.output.value[1]?.data as { data: Uint8Array };
    expect(Buffer.from(v4File.data).equals(Buffer.from(screenshot()))).toBe(true);
    // Everything else of the decoded prompt is the original as written.
    expect(JSON.stringify(decoded.map((m) => encodeAiSdkMessage(m)))).toBe(JSON.stringify(STORED));
  });

  it('takes the rest of a run appended, pairs the calls it leaves open, and refuses bytes not encoded', async () => {
    await create('appended', 's');
    const next = NEXT;
    await appendMessages(db(), 'appended', 's', next.map((m) => encodeAiSdkMessage(m)) as never);
    const open = await load('appended', 's');
    expect(open.prompt.slice(-2)).toStrictEqual(next.map((m) => encodeAiSdkMessage(m)));
    expectRules(open.prompt);
    // The agent moved on without the result: the call is answered for it.
    await appendMessages(db(), 'appended', 's', [
      { role: 'user', content: [{ type: 'text', text: 'Never mind.' }] },
    ] as never);
    const moved = await load('appended', 's');
    expect(moved.prompt.at(-2)).toStrictEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_lint',
          toolName: 'bash',
          output: { type: 'error-text', value: 'no result was recorded' },
        },
      ],
    });
    expectRules(moved.prompt);
    // A client call's id is the session's once, named where it stands.
    const again = {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'call_read', toolName: 'x', input: {} }],
    };
    await expect(appendMessages(db(), 'appended', 's', [again] as never)).rejects.toThrow(
      /^messages\[0\]\.content\[0\]\.toolCallId: tool_use id "call_read" is already used in session "s"/,
    );
    const raw = { role: 'user', content: [{ type: 'file', data: screenshot(), mediaType: 'image/png' }] };
    await expect(appendMessages(db(), 'appended', 's', [raw] as never)).rejects.toThrow(
      /^messages\[0\]\.content\[0\]\.data: a Uint8Array is not JSON: encode the message with encodeAiSdkMessage/,
    );
  });

  for (const { label, strategy, expect: expectContext } of STRATEGIES) {
    it(`compacted by ${label}: the context keeps the rules; restored, byte-exact`, async () => {
      const tenantId = label.replace(/[^a-z0-9]+/gi, '-').replace(/-$/, '');
      await create(tenantId, 's');
      const before = await storedRows(tenantId, 's');
      const contextBefore = await load(tenantId, 's');

      const row = await compact(tenantId, 's', strategy);
      const archived = await archivedSeqs(row.id);
      expect(archived.length).toBeGreaterThan(0);
      expect(row.messagesArchived).toBe(archived.length);
      const context = await load(tenantId, 's');
      expect(context.notices).toEqual([]);
      expectContext(archived, context.prompt);
      expectRules(context.prompt);
      expect(context.tokens).toBeLessThan(contextBefore.tokens);
      // What stays of the files decodes to them still.
      expect(() => decodeAiSdkPrompt(context.prompt)).not.toThrow();

      const restored = await restoreCompaction(db(), { tenantId, sessionId: 's', compactionId: row.id });
      expect(restored).toMatchObject({ status: 'restored', restoredSeqs: archived });
      const after = await storedRows(tenantId, 's');
      expect(after.map((r) => r.blocks)).toEqual(before.map((r) => r.blocks));
      expect(after.map((r) => r.row)).toEqual(before.map((r) => r.row));
      const contextAfter = await load(tenantId, 's');
      expect(contextAfter.version).toBe(contextBefore.version + 2);
      expect({ ...contextAfter, version: contextBefore.version }).toStrictEqual(contextBefore);
    });
  }
});

describe('an AI SDK session over the HTTP API', () => {
  const TOKENS = { acme: 'ai-sdk-acme-token-5d1f0c9e' };
  let server: Listening;
  beforeAll(async () => {
    server = await serveApi(ctx, TOKENS, { maxBodyBytes: 4 * 2 ** 20 });
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKENS.acme}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
    return { status: response.status, body: (await response.json()) as any };
  };

  it('creates, appends and reads the context as the library does, refusing what does not fit, naming it', async () => {
    const [system, ...rest] = STORED;
    const created = await call('POST', '/v1/sessions', {
      id: 'http',
      format: 'ai-sdk',
      messages: [{ ...system, pinned: true }, ...rest.slice(0, 8)],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const appended = await call('POST', '/v1/sessions/http/messages', { messages: rest.slice(8) });
    expect(appended.status, JSON.stringify(appended.body)).toBe(200);
    const context = await call('GET', '/v1/sessions/http/context');
    expect(context.status).toBe(200);
    expect(context.body).toMatchObject({ format: 'ai-sdk', sessionId: 'http', notices: [] });
    expect(JSON.stringify(context.body.prompt)).toBe(JSON.stringify(STORED));
    expect(context.body.tokens).toBe((await load('acme', 'http')).tokens);

    const bad = await call('POST', '/v1/sessions/http/messages', {
      messages: [
        {
          role: 'user',
          content: [{ type: 'file', data: { $url: 'https://Example.com' }, mediaType: 'image/png' }],
        },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(
      /^messages\[0\]\.content\[0\]\.data\.\$url: expected the URL as URL\.href writes it/,
    );

    const anthropic = await call('POST', '/v1/sessions', { id: 'claude', messages: [] });
    expect(anthropic.status).toBe(201);
    const foreign = await call('POST', '/v1/sessions/claude/messages', { messages: [STORED[3]] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.message).toMatch(
      /^messages\[0\]\.content\[0\]\.type: "tool-result" is an AI SDK content part, but session "claude" has format "anthropic"/,
    );
  });
});
