/**
 * `compactor import` of native transcripts: the five real Claude Code session files of
 * corpus/claude-code, detected and stored with every content block exactly as the parser read it
 * (thinking signatures and images included); `--sidechains`; a JSONL of MessageParams that round
 * trips; the leading system messages pinned unless `--pin-system none`; and refusals that name the
 * file, line and field and write nothing.
 */
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { TranscriptError } from '../../shared/contract/errors.ts';
import { type NativeMessage, parseClaudeCode } from '../../shared/contract/native-transcripts.ts';
import { runCli } from '../support/cli.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const CLAUDE_CODE_DIR = fileURLToPath(new URL('../../corpus/claude-code/', import.meta.url));
const MAIN = '0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl';
const SUBAGENT = 'agent-a9cad17.jsonl';
const LARGEST = 'general-tool-calls.jsonl';
const FILES = [
  MAIN,
  '4b2030ed-5563-49ea-b703-6a002f2d3cc8.jsonl',
  SUBAGENT,
  LARGEST,
  'images-in-user-messages.jsonl',
];

const ctx = useIntegration();
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-import-native-'));
});

ctx.onTeardown(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const read = (file: string) => readFile(file, 'utf8');
const sessionOf = (file: string) => path.basename(file, '.jsonl');
const cli = (args: string[]) => runCli(['import', ...args], ctx.cliEnv);

interface StoredRow {
  seq: number;
  role: string;
  blocks: string;
  /** `created_at` in ms since the epoch. */
  createdAt: number;
}

async function stored(tenantId: string, sessionId: string): Promise<StoredRow[]> {
  return ctx.tdb.database.sql<StoredRow[]>`
    select seq::int as seq, role, content_blocks::text as blocks, (extract(epoch from created_at) * 1000)::float8 as "createdAt"
    from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

/** Each message stored as parsed: seqs 0..n-1, the role, every block (deep-equal and byte for byte), the time. */
async function expectStoredAsParsed(tenantId: string, sessionId: string, parsed: NativeMessage[]) {
  const rows = await stored(tenantId, sessionId);
  expect(rows.map((r) => r.seq)).toEqual(parsed.map((_, i) => i));
  expect(rows.map((r) => r.role)).toEqual(parsed.map((m) => m.message.role));
  expect(rows.map((r) => JSON.parse(r.blocks))).toStrictEqual(parsed.map((m) => m.message.content));
  expect(rows.map((r) => r.blocks)).toEqual(parsed.map((m) => JSON.stringify(m.message.content)));
  parsed.forEach((m, i) => {
    if (m.createdAt) expect(rows[i]?.createdAt).toBe(m.createdAt.getTime());
  });
  return rows;
}

/** Row count and digest of sessions and messages: equal snapshots mean nothing was written. */
async function snapshot() {
  return ctx.tdb.database.sql.unsafe(
    ['sessions', 'messages']
      .map(
        (t) => `select '${t}' as t, count(*)::int as n,
                md5(coalesce(string_agg(x::text, E'\\n' order by x::text), '')) as digest from ${t} x`,
      )
      .join(' union all '),
  );
}

type AnyBlock = { type: string; [key: string]: unknown };
const blocksOf = (rows: StoredRow[]): AnyBlock[] =>
  rows.flatMap((r) => {
    const content = JSON.parse(r.blocks) as string | AnyBlock[];
    return typeof content === 'string' ? [] : content;
  });

/**
 * The main session's file as the subagent's lines would sit in it had Claude Code logged them
 * there: each subagent line before the first main line written after it. None of the five files
 * has sidechain lines in a main session (the subagent has its own file), so the test makes one.
 */
async function mainWithSubagent(): Promise<string> {
  const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
  const pending = lines(await read(path.join(CLAUDE_CODE_DIR, SUBAGENT)));
  const out: string[] = [];
  for (const line of lines(await read(path.join(CLAUDE_CODE_DIR, MAIN)))) {
    const at = (JSON.parse(line) as { timestamp?: string }).timestamp;
    while (at && pending.length > 0 && (JSON.parse(pending[0] as string).timestamp as string) < at) {
      out.push(pending.shift() as string);
    }
    out.push(line);
  }
  out.push(...pending);
  const file = path.join(dir, 'with-sidechains', 'main-with-subagent.jsonl');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${out.join('\n')}\n`);
  return file;
}

describe('Claude Code session files', () => {
  it.each(FILES)('%s: detected, and every block stored exactly as parsed', async (name) => {
    const file = path.join(CLAUDE_CODE_DIR, name);
    const imported = await importTranscript(ctx.tdb.database.db, file, { tenantId: 'auto' });
    expect(imported).toMatchObject({ format: 'claude-code', detected: true, sessionId: sessionOf(name) });
    const parsed = parseClaudeCode(await read(file), file);
    expect(imported.messageCount).toBe(parsed.length);
    await expectStoredAsParsed('auto', sessionOf(name), parsed);
  });

  it('keeps the thinking signatures and the images of the five files', async () => {
    const parsedBlocks: AnyBlock[] = [];
    const storedBlocks: AnyBlock[] = [];
    for (const name of FILES) {
      const file = path.join(CLAUDE_CODE_DIR, name);
      await importTranscript(ctx.tdb.database.db, file, { tenantId: 'blocks' });
      for (const m of parseClaudeCode(await read(file), file)) {
        if (typeof m.message.content !== 'string')
          parsedBlocks.push(...(m.message.content as unknown as AnyBlock[]));
      }
      storedBlocks.push(...blocksOf(await stored('blocks', sessionOf(name))));
    }
    const nested = (blocks: AnyBlock[]) => [
      ...blocks,
      ...blocks.flatMap((b) => (Array.isArray(b.content) ? (b.content as AnyBlock[]) : [])),
    ];
    const thinking = storedBlocks.filter((b) => b.type === 'thinking');
    expect(thinking.length).toBeGreaterThan(0);
    expect(thinking).toEqual(parsedBlocks.filter((b) => b.type === 'thinking'));
    for (const b of thinking) expect(b.signature).toEqual(expect.stringMatching(/^.{40,}$/s));
    const images = nested(storedBlocks).filter((b) => b.type === 'image');
    expect(images.length).toBeGreaterThan(0);
    expect(images).toEqual(nested(parsedBlocks).filter((b) => b.type === 'image'));
    for (const b of images) expect((b.source as { data: string }).data.length).toBeGreaterThan(1_000);
  });

  it('`compactor import` detects each file, says so on its line, and stores what the parser reads', async () => {
    const before = await snapshot();
    const run = await cli([CLAUDE_CODE_DIR, '--tenant', 'cli-auto']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(FILES.length);
    for (const [i, name] of FILES.entries()) {
      const parsed = parseClaudeCode(await read(path.join(CLAUDE_CODE_DIR, name)), name);
      expect(lines[i]).toMatch(
        new RegExp(
          `^imported ${sessionOf(name)}: ${parsed.length} messages, \\d+ tokens \\(claude-code, detected; \\d+ ms\\)$`,
        ),
      );
      await expectStoredAsParsed('cli-auto', sessionOf(name), parsed);
    }
    expect(await snapshot()).not.toEqual(before);
  });

  it("--sidechains adds a main file's subagent lines, and changes nothing for the subagent's own file", async () => {
    const file = await mainWithSubagent();
    const text = await read(file);
    const without = parseClaudeCode(text, file);
    const withSidechains = parseClaudeCode(text, file, { sidechains: true });
    const subagent = parseClaudeCode(await read(path.join(CLAUDE_CODE_DIR, SUBAGENT)), SUBAGENT);
    // Left out, the subagent's lines change nothing: the session is the main file's own.
    expect(without.map((m) => m.message)).toEqual(
      parseClaudeCode(await read(path.join(CLAUDE_CODE_DIR, MAIN)), MAIN).map((m) => m.message),
    );
    expect(withSidechains).toHaveLength(without.length + subagent.length);

    const off = await cli([file, '--tenant', 'side-off']);
    const on = await cli([file, '--tenant', 'side-on', '--sidechains']);
    expect(off.code, off.stderr).toBe(0);
    expect(on.code, on.stderr).toBe(0);
    expect(off.stdout).toContain(`: ${without.length} messages`);
    expect(on.stdout).toContain(`: ${withSidechains.length} messages`);
    await expectStoredAsParsed('side-off', 'main-with-subagent', without);
    const rows = await expectStoredAsParsed('side-on', 'main-with-subagent', withSidechains);
    const texts = rows.map((r) => r.blocks);
    for (const m of subagent) expect(texts).toContain(JSON.stringify(m.message.content));

    const subagentFile = path.join(CLAUDE_CODE_DIR, SUBAGENT);
    for (const [tenantId, sidechains] of [
      ['sub-off', false],
      ['sub-on', true],
    ] as const) {
      await importTranscript(ctx.tdb.database.db, subagentFile, { tenantId, sidechains });
      await expectStoredAsParsed(tenantId, sessionOf(SUBAGENT), subagent);
    }
  });
});

/** A 1x1 PNG, base64. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A conversation with the blocks an agent keeps: thinking with its signature, tools, an image, a block from the future. */
const CONVERSATION: MessageParam[] = [
  { role: 'user', content: 'What is in src/a.ts?' },
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'Read the file first.', signature: 'EuYBCkQYAiJA-signed' },
      { type: 'text', text: 'Reading it.', citations: null },
      { type: 'tool_use', id: 'toolu_01', name: 'read_file', input: { path: 'src/a.ts', z: 1, a: 2 } },
    ],
  },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01',
        content: [
          { type: 'text', text: 'export const a = 1;' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        ],
      },
      { type: 'text', text: 'and this one?', cache_control: { type: 'ephemeral' } },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'hologram', frames: [{ at: 0 }] } as never,
      { type: 'text', text: 'It exports a = 1.' },
    ],
  },
];

describe('a JSONL of MessageParams', () => {
  it('round trips with --format anthropic and --session, and is detected without it', async () => {
    const file = path.join(dir, 'chat.jsonl');
    await writeFile(file, `${CONVERSATION.map((m) => JSON.stringify(m)).join('\n')}\n`);
    const expected = CONVERSATION.map((message, line) => ({ message, createdAt: null, line: line + 1 }));

    const run = await cli([file, '--format', 'anthropic', '--tenant', 'chat', '--session', 'chat-7']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^imported chat-7: 4 messages, \d+ tokens \(anthropic; \d+ ms\)\n$/);
    await expectStoredAsParsed('chat', 'chat-7', expected);

    const detected = await importTranscript(ctx.tdb.database.db, file, { tenantId: 'chat' });
    expect(detected).toMatchObject({
      sessionId: 'chat',
      format: 'anthropic',
      detected: true,
      messageCount: 4,
    });
    await expectStoredAsParsed('chat', 'chat', expected);
  });

  it('detects each file of a directory on its own', async () => {
    const mixed = path.join(dir, 'mixed');
    await mkdir(mixed);
    await copyFile(path.join(CORPUS_DIR, 'sweagent__ctf-rev-rock.jsonl'), path.join(mixed, 'a-corpus.jsonl'));
    await writeFile(path.join(mixed, 'b-chat.jsonl'), JSON.stringify(CONVERSATION[0]));
    await copyFile(path.join(CLAUDE_CODE_DIR, SUBAGENT), path.join(mixed, 'c-claude.jsonl'));
    const run = await cli([mixed, '--tenant', 'mixed']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^imported a-corpus: 37 messages, \d+ tokens \(corpus, detected; \d+ ms\)$/),
      expect.stringMatching(/^imported b-chat: 1 messages, \d+ tokens \(anthropic, detected; \d+ ms\)$/),
      expect.stringMatching(/^imported c-claude: 4 messages, \d+ tokens \(claude-code, detected; \d+ ms\)$/),
    ]);
  });
});

describe('refusals', () => {
  const lines = (...values: unknown[]) => `${values.map((v) => JSON.stringify(v)).join('\n')}\n`;
  const [first, second, third, fourth] = CONVERSATION;

  // The 1.16 MB Claude Code file, and a line in the middle of its live branch that starts a message.
  const largest = readFileSync(path.join(CLAUDE_CODE_DIR, LARGEST), 'utf8').split('\n');
  const middle =
    parseClaudeCode(largest.join('\n'), LARGEST)
      .slice(60)
      .find((m) => Array.isArray(m.message.content))?.line ?? 0;
  const withLine = (line: number, text: string) =>
    largest.map((l, i) => (i === line - 1 ? text : l)).join('\n');
  const withoutType = () => {
    const value = JSON.parse(largest[middle - 1] as string);
    delete value.message.content[0].type;
    return JSON.stringify(value);
  };

  /** [file name, how to make its text, the refusal it must get]. */
  const cases: Array<[string, () => string, string]> = [
    [
      'bad-json.jsonl',
      () => lines(first, second).concat('{"role": "user", "content": [\n', lines(fourth)),
      'bad-json.jsonl:3: not valid JSON (',
    ],
    [
      'no-role.jsonl',
      () => lines(first, second, { content: 'who am I?' }, fourth),
      'no-role.jsonl:3.role: expected "user" or "assistant", got nothing (read as anthropic, detected from its first line)',
    ],
    [
      'no-type.jsonl',
      () => lines(first, { role: 'assistant', content: [{ type: 'text', text: 'a' }, { text: 'b' }] }, third),
      'no-type.jsonl:2.content.1.type: expected a block type (read as anthropic, detected from its first line)',
    ],
    [
      'claude-no-type.jsonl',
      () => withLine(middle, withoutType()),
      `claude-no-type.jsonl:${middle}: message.content.0.type: expected a block type (read as claude-code, detected from its first line)`,
    ],
    [
      'claude-bad-json.jsonl',
      () => withLine(middle, (largest[middle - 1] as string).slice(0, 100)),
      `claude-bad-json.jsonl:${middle}: not valid JSON (`,
    ],
  ];
  const badDir = () => path.join(dir, 'bad');

  beforeAll(async () => {
    await mkdir(badDir());
    for (const [name, make] of cases) await writeFile(path.join(badDir(), name), make());
  });

  it.each(cases)(
    '%s is refused, naming the file, line and field, and nothing is written',
    async (name, _, expected) => {
      const before = await snapshot();
      const file = path.join(badDir(), name);
      const error = await importTranscript(ctx.tdb.database.db, file, { tenantId: 'refused' }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TranscriptError);
      // The path as given, then the line and field.
      const message = (error as Error).message;
      expect(message.startsWith(`${badDir()}${path.sep}${expected}`), message).toBe(true);
      expect(await snapshot()).toEqual(before);
    },
  );

  it('`compactor import` refuses each bad file on its own line, exits 1, and writes nothing', async () => {
    const before = await snapshot();
    const run = await cli([badDir(), '--tenant', 'refused']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const printed = run.stderr.trimEnd().split('\n');
    expect(printed).toHaveLength(cases.length);
    const sorted = [...cases].sort(([a], [b]) => (a < b ? -1 : 1)); // as the directory is read
    sorted.forEach(([name, , expected], i) => {
      expect(printed[i]).toMatch(new RegExp(`^not imported: \\S*${name.replace('.', '\\.')}:\\d+`));
      expect(printed[i]).toContain(expected);
    });
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a --format it does not know, or --sidechains with another format, before touching anything', async () => {
    const before = await snapshot();
    const file = path.join(CLAUDE_CODE_DIR, MAIN);
    const unknown = await cli([file, '--tenant', 'refused', '--format', 'openai']);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toBe(
      'compactor import: --format must be corpus, anthropic, claude-code, openai-chat or openai-responses, got "openai" (see: compactor import --help)\n',
    );
    const sidechains = await cli([file, '--tenant', 'refused', '--format', 'anthropic', '--sidechains']);
    expect(sidechains).toMatchObject({ code: 2, stdout: '' });
    expect(sidechains.stderr).toContain('--sidechains applies to --format claude-code, not anthropic');
    // Named, a format is not second-guessed: the file is refused at its first line in that format.
    const named = await cli([file, '--tenant', 'refused', '--format', 'anthropic']);
    expect(named.code).toBe(1);
    expect(named.stderr).toContain(`${MAIN}:1.role: expected "user" or "assistant", got nothing\n`);
    expect(await snapshot()).toEqual(before);
  });
});

describe('system messages', () => {
  const REQUEST = {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'developer', content: 'Answer in English.' },
      { role: 'user', content: 'fix the parser' },
      { role: 'assistant', content: 'done' },
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: 'thanks' },
    ],
  };

  async function pinnedSeqs(tenantId: string, sessionId: string): Promise<number[]> {
    const rows = await ctx.tdb.database.sql<{ seq: number }[]>`
      select seq::int as seq from messages
      where tenant_id = ${tenantId} and session_id = ${sessionId} and pinned order by seq`;
    return rows.map((r) => r.seq);
  }

  it('pins the leading system and developer messages by default, and none with --pin-system none', async () => {
    const file = path.join(dir, 'requests.jsonl');
    await writeFile(file, `${JSON.stringify(REQUEST)}\n`);
    const run = await cli([file, '--tenant', 'pins', '--session', 'default']);
    expect(run.code, run.stderr).toBe(0);
    // The later copy of the prompt is part of the conversation: it is not pinned.
    expect(await pinnedSeqs('pins', 'default')).toEqual([0, 1]);

    const none = await cli([file, '--tenant', 'pins', '--session', 'none', '--pin-system', 'none']);
    expect(none.code, none.stderr).toBe(0);
    expect(await pinnedSeqs('pins', 'none')).toEqual([]);

    await importTranscript(ctx.tdb.database.db, path.join(CLAUDE_CODE_DIR, SUBAGENT), { tenantId: 'pins' });
    expect(await pinnedSeqs('pins', sessionOf(SUBAGENT))).toEqual([]);
  });

  it('refuses a --pin-system value it does not know, naming the choices, before touching anything', async () => {
    const before = await snapshot();
    const file = path.join(dir, 'requests-refused.jsonl');
    await writeFile(file, `${JSON.stringify(REQUEST)}\n`);
    const run = await cli([file, '--tenant', 'refused', '--pin-system', 'all']);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain('--pin-system must be leading or none, got "all"');
    await expect(
      importTranscript(ctx.tdb.database.db, file, { tenantId: 'refused', pinSystem: 'all' as never }),
    ).rejects.toThrow('pinSystem "all": expected leading or none');
    expect(await snapshot()).toEqual(before);
  });
});
