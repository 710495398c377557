/**
 * The same input rules through the client library and `compactor import`, which do not pass the
 * API's body scan: content nested thousands deep, cycles, values JSON cannot carry, NUL, unpaired
 * surrogates, unsigned thinking and reused tool_use ids are refused with an `InvalidInputError`
 * naming the field, before anything walks the content or reaches Postgres; nothing is written.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { type AppendMessage, appendMessages, createSession, setSessionTools } from '../../producer/index.ts';
import { InvalidInputError, ToolUseIdTakenError } from '../../shared/contract/errors.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { runCli } from '../support/cli.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const db = () => ctx.tdb.database.db;

/** `{ a: { a: ... } }`, `depth` levels, built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const toolUse = (id: string, input: unknown): AppendMessage =>
  ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'read_file', input }] }) as AppendMessage;

async function rows(): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select (select count(*) from messages)::int + (select count(*) from sessions)::int as n`;
  return row?.n ?? 0;
}

beforeAll(async () => {
  await createSession(db(), { tenantId: 'acme', sessionId: 'lib', messages: [] });
  await appendMessages(db(), 'acme', 'lib', [toolUse('toolu_held', { path: 'a.ts' })]);
});

describe('appendMessages refuses what cannot be stored', () => {
  const cycle: Record<string, unknown> = { path: 'a.ts' };
  cycle.self = cycle;
  const cases: Array<[string, AppendMessage[], RegExp]> = [
    [
      'a tool input nested 5,000 deep',
      [toolUse('t1', nested(5_000))],
      /^messages\[0\]\.content\[0\]\.input: nests deeper than 128 levels/,
    ],
    ['a cycle', [toolUse('t2', cycle)], /^messages\[0\]\.content\[0\]\.input\.self: refers to itself/],
    [
      'a bigint',
      [toolUse('t3', { n: 10n })],
      /^messages\[0\]\.content\[0\]\.input\.n: a bigint is not a JSON value/,
    ],
    ['NaN', [toolUse('t4', { n: Number.NaN })], /^messages\[0\]\.content\[0\]\.input\.n: NaN/],
    [
      'a NUL',
      [{ role: 'user', content: 'a\u0000b' }],
      /^messages\[0\]\.content: contains a NUL character \(U\+0000\) at character 1/,
    ],
    [
      'an unpaired surrogate',
      [{ role: 'user', content: [{ type: 'text', text: 'x\uDBFF' }] }],
      /^messages\[0\]\.content\[0\]\.text: contains an unpaired surrogate \(U\+DBFF\)/,
    ],
    [
      'a corpus-format NUL',
      [{ role: 'user', kind: 'message', content: 'a\u0000b' }],
      /^messages\[0\]\.content: contains a NUL/,
    ],
    [
      'an unsigned thinking block',
      [
        {
          role: 'assistant',
          content: [{ type: 'thinking', thinking: 'hm', signature: '' }],
        } as AppendMessage,
      ],
      /^messages\[0\]\.content\[0\]\.signature: a thinking block needs its "signature"/,
    ],
    [
      'a reused tool_use id in the request',
      [toolUse('t5', {}), toolUse('t5', {})],
      /^messages\[1\]\.content\[0\]\.id: tool_use id "t5" is already used by messages\[0\]/,
    ],
  ];
  it.each(cases)('%s', async (_, messages, expected) => {
    const before = await rows();
    const error = await appendMessages(db(), 'acme', 'lib', messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(expected);
    expect(await rows()).toBe(before);
  });

  it('a tool_use id the session holds: ToolUseIdTakenError naming the field and the seq', async () => {
    const before = await rows();
    const error = await appendMessages(db(), 'acme', 'lib', [
      { role: 'user', content: 'next' },
      toolUse('toolu_held', {}),
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolUseIdTakenError);
    expect((error as ToolUseIdTakenError).field).toBe('messages[1].content[0].id');
    expect((error as Error).message).toMatch(/already used in session "lib" \(seq 0\)/);
    expect(await rows()).toBe(before);
  });

  it('setSessionTools refuses a tool definition nested 5,000 deep', async () => {
    await expect(
      setSessionTools(db(), 'acme', 'lib', [{ name: 'f', input_schema: nested(5_000) } as never]),
    ).rejects.toThrow(/^tools\[0\]\.input_schema: nests deeper than 128 levels/);
  });
});

describe('a restore that would repeat a tool_use id', () => {
  it('is refused, naming the id and both seqs; the append that reused the archived id went through', async () => {
    const call = (id: string) => toolUse(id, { path: 'a.ts' });
    const result = (id: string): AppendMessage => ({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: 'export {}' }],
    });
    await createSession(db(), { tenantId: 'acme', sessionId: 'restored', messages: [] });
    const turns: AppendMessage[] = [
      { role: 'user', content: 'read a.ts' },
      call('toolu_old'),
      result('toolu_old'),
    ];
    for (let i = 0; i < 6; i++)
      turns.push({ role: i % 2 ? 'user' : 'assistant', content: `turn ${i}` } as AppendMessage);
    await appendMessages(db(), 'acme', 'restored', turns);
    const outcome = await ctx.compactInProcess({
      tenantId: 'acme',
      sessionId: 'restored',
      strategy: { type: 'slidingWindow', maxMessages: 4 },
    });
    expect(outcome.row?.status).toBe('applied');
    const [seq] = await appendMessages(db(), 'acme', 'restored', [call('toolu_old'), result('toolu_old')]);
    const error = await restoreCompaction(db(), {
      tenantId: 'acme',
      sessionId: 'restored',
      compactionId: outcome.row?.id as string,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toBe(
      `compaction ${outcome.row?.id} cannot be restored: its message at seq 1 holds tool_use id "toolu_old", ` +
        `which the live message at seq ${seq} holds since; a request may hold each tool_use id once`,
    );
  });
});

describe('compactor import refuses a transcript that breaks the rules', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'compactor-security-'));
    ctx.onTeardown(() => rm(dir, { recursive: true, force: true }));
  });

  it.each([
    ['nul', '{"role":"user","content":"a\\u0000b"}', /nul\.jsonl: messages\[1\]\.content: contains a NUL/],
    [
      'unsigned',
      '{"role":"assistant","content":[{"type":"thinking","thinking":"hm"}]}',
      /unsigned\.jsonl: messages\[1\]\.content\[0\]\.signature/,
    ],
    [
      'deep',
      `{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}]}`,
      /nests deeper than 128 levels/,
    ],
  ])('%s', async (name, line, expected) => {
    const file = path.join(dir, `${name}.jsonl`);
    await writeFile(file, `{"role":"user","content":"hello"}\n${line}\n`);
    await expect(importTranscript(db(), file, { tenantId: 'acme', format: 'anthropic' })).rejects.toThrow(
      expected,
    );
    const run = await runCli(['import', file, '--tenant', 'acme', '--format', 'anthropic'], ctx.cliEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(expected);
    const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
      select count(*)::int as n from sessions where tenant_id = 'acme' and id = ${name}`;
    expect(row?.n).toBe(0);
  });
});
