/**
 * Native transcripts: Claude Code session files and JSONL of MessageParams, read into messages
 * whose content is exactly what the file holds. Expected counts come from the five real Claude
 * Code files shipped in corpus/claude-code (counted independently of this parser).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TranscriptError } from '../../shared/contract/errors.ts';
import { parseAnthropicJsonl, parseClaudeCode } from '../../shared/contract/native-transcripts.ts';
import { detectFormat } from '../../shared/formats/registry.ts';

const DIR = fileURLToPath(new URL('../../corpus/claude-code/', import.meta.url));
const read = (name: string) => readFileSync(`${DIR}${name}`, 'utf8');

/** Each file's messages, assistant messages, blocks, thinking blocks and images on its live branch. */
const FILES = [
  ['0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl', 33, 11, 47, 7, 0],
  ['4b2030ed-5563-49ea-b703-6a002f2d3cc8.jsonl', 4, 2, 6, 2, 0],
  ['agent-a9cad17.jsonl', 4, 2, 4, 0, 0],
  ['general-tool-calls.jsonl', 125, 56, 198, 49, 0],
  ['images-in-user-messages.jsonl', 10, 3, 14, 2, 1],
] as const;

type AnyBlock = { type: string; [k: string]: unknown };
const blocks = (content: unknown): AnyBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : (content as AnyBlock[]);

describe('Claude Code session files', () => {
  it.each(FILES)(
    '%s: the live branch, one message per streamed reply',
    (file, count, assistants, total, thinking, images) => {
      const text = read(file);
      expect(detectFormat(text, file)).toBe('claude-code');
      const messages = parseClaudeCode(text, file);
      const all = messages.flatMap((m) => blocks(m.message.content));
      expect(messages).toHaveLength(count);
      expect(messages.filter((m) => m.message.role === 'assistant')).toHaveLength(assistants);
      expect(all).toHaveLength(total);
      expect(all.filter((b) => b.type === 'thinking')).toHaveLength(thinking);
      expect(all.filter((b) => b.type === 'image')).toHaveLength(images);
      expect(messages[0]?.message.role).toBe('user');
      // Every call is answered, parallel ones included (each result line forks from its own call's
      // line), except a call of the last message, which may still be waiting.
      const answered = new Set(all.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])));
      const last = messages[messages.length - 1];
      for (const m of messages) {
        if (m === last) continue;
        for (const b of blocks(m.message.content))
          if (b.type === 'tool_use') expect(answered).toContain(b.id);
      }
    },
  );

  it('keeps every block of a reply exactly as written, signatures included, in line order', () => {
    const text = read('general-tool-calls.jsonl');
    const lines = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l));
    const messages = parseClaudeCode(text, 'general-tool-calls.jsonl');
    const reply = messages.find((m) => m.message.role === 'assistant');
    const id = lines.find((l) => l.type === 'assistant')?.message.id;
    // The file's runs of consecutive lines of that reply; the message is one of them, whole.
    const runs: unknown[][] = [];
    let previous: unknown = null;
    for (const l of lines) {
      if (l.type !== 'assistant' && l.type !== 'user') continue;
      const mine = l.type === 'assistant' && l.message.id === id;
      if (mine && previous === id) runs[runs.length - 1]?.push(...l.message.content);
      else if (mine) runs.push([...l.message.content]);
      previous = l.type === 'assistant' ? l.message.id : null;
    }
    expect(runs.length).toBeGreaterThan(0);
    expect(runs).toContainEqual(reply?.message.content);
    expect(blocks(reply?.message.content).length).toBeGreaterThan(1);
    const first = blocks(reply?.message.content)[0];
    expect(first?.type).toBe('thinking');
    expect(typeof first?.signature).toBe('string');
  });

  it('keeps an image block with its base64 data', () => {
    const messages = parseClaudeCode(read('images-in-user-messages.jsonl'), 'images');
    const image = messages.flatMap((m) => blocks(m.message.content)).find((b) => b.type === 'image');
    expect(image).toMatchObject({
      source: { type: 'base64', media_type: expect.stringMatching(/^image\//) },
    });
    expect(String((image?.source as { data?: string } | undefined)?.data).length).toBeGreaterThan(100);
  });

  it('leaves sidechain lines out of a main session unless asked', () => {
    const lines = [
      { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'main' } },
      {
        type: 'user',
        uuid: 's1',
        parentUuid: 'u1',
        isSidechain: true,
        message: { role: 'user', content: 'sub' },
      },
      {
        type: 'assistant',
        uuid: 'a1',
        parentUuid: 'u1',
        message: { id: 'msg_1', role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      },
    ];
    const text = lines.map((l) => JSON.stringify(l)).join('\n');
    expect(parseClaudeCode(text, 'x').map((m) => m.message.content)).toEqual([
      'main',
      [{ type: 'text', text: 'ok' }],
    ]);
    expect(parseClaudeCode(text, 'x', { sidechains: true })).toHaveLength(3);
  });

  it("keeps a main reply whole when a background subagent's lines fall between its lines", () => {
    const reply = (uuid: string, parentUuid: string, text: string) => ({
      type: 'assistant',
      uuid,
      parentUuid,
      message: { id: 'msg_main', role: 'assistant', content: [{ type: 'text', text }] },
    });
    const lines = [
      { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'go' } },
      reply('a1', 'u1', 'first'),
      {
        type: 'assistant',
        uuid: 's1',
        parentUuid: null,
        isSidechain: true,
        agentId: 'x',
        message: { id: 'msg_sub', role: 'assistant', content: [{ type: 'text', text: 'sub' }] },
      },
      reply('a2', 'a1', 'second'),
    ];
    const text = lines.map((l) => JSON.stringify(l)).join('\n');
    const contents = (options?: { sidechains: boolean }) =>
      parseClaudeCode(text, 'x', options).map((m) => m.message.content);
    const whole = [
      { type: 'text', text: 'first' },
      { type: 'text', text: 'second' },
    ];
    expect(contents()).toEqual(['go', whole]);
    expect(contents({ sidechains: true })).toEqual(['go', whole, [{ type: 'text', text: 'sub' }]]);
  });

  it('refuses a bad line, naming the file, the line and the field', () => {
    const good = JSON.stringify({ type: 'user', uuid: 'u1', message: { role: 'user', content: 'hi' } });
    const broken = () => parseClaudeCode(`${good}\n{"type": "assistant"`, 'f.jsonl');
    expect(broken).toThrow(TranscriptError);
    expect(broken).toThrow(/^f\.jsonl:2: not valid JSON/);
    const noType = JSON.stringify({
      type: 'user',
      uuid: 'u2',
      message: { role: 'user', content: [{ text: 'x' }] },
    });
    expect(() => parseClaudeCode(`${good}\n${noType}`, 'f.jsonl')).toThrow(
      'f.jsonl:2: message.content.0.type: expected a block type',
    );
    const wrongRole = JSON.stringify({
      type: 'assistant',
      uuid: 'u3',
      message: { role: 'user', content: 'x' },
    });
    expect(() => parseClaudeCode(wrongRole, 'f.jsonl')).toThrow(
      'f.jsonl:1: message.role: "user" on a "assistant" line',
    );
    expect(() => parseClaudeCode(JSON.stringify({ type: 'summary', summary: 's' }), 'f.jsonl')).toThrow(
      'f.jsonl: no user or assistant messages',
    );
  });
});

describe('JSONL of MessageParams', () => {
  it('reads each line as a message, unknown block types kept verbatim', () => {
    const lines = [
      { role: 'user', content: 'hello' },
      {
        role: 'assistant',
        content: [
          { type: 'future_block', payload: { a: 1 } },
          { type: 'text', text: 'hi' },
        ],
      },
    ];
    const text = lines.map((l) => JSON.stringify(l)).join('\n');
    expect(detectFormat(text, 'a.jsonl')).toBe('anthropic');
    expect(parseAnthropicJsonl(text, 'a.jsonl').map((m) => m.message)).toEqual(lines);
  });

  it('refuses a role the Messages API does not take, naming the line', () => {
    expect(() => parseAnthropicJsonl('{"role":"tool","content":"x"}', 'a.jsonl')).toThrow(
      'a.jsonl:1.role: expected "user" or "assistant", got "tool"',
    );
  });

  it('tells the corpus format apart, and says when it cannot tell', () => {
    const corpus = readFileSync(
      fileURLToPath(new URL('../../corpus/sessions/sweagent__test-repo-i1.jsonl', import.meta.url)),
      'utf8',
    );
    expect(detectFormat(corpus, 'c.jsonl')).toBe('corpus');
    expect(() => detectFormat('{"hello":1}', 'x.jsonl')).toThrow(/x.jsonl:1: cannot tell the format/);
  });

  it('reads a line with seq or kind as the corpus format, so its parser names the field missing', () => {
    expect(detectFormat('{"role":"user","kind":"message","content":"hi"}', 'c.jsonl')).toBe('corpus');
    expect(detectFormat('\n{"seq":0,"role":"user","content":"hi"}', 'c.jsonl')).toBe('corpus');
  });

  it('escapes what a line that is not JSON holds, so a refusal prints no terminal escapes', () => {
    const refusal = () => parseAnthropicJsonl('\x1b[2J\u202eoops', 'a.jsonl');
    expect(refusal).toThrow(/^a\.jsonl:1: not valid JSON \(.*\\u001b/);
    expect(refusal).not.toThrow(/[\p{Cc}\p{Cf}]/u);
    expect(() =>
      parseAnthropicJsonl(`{"role":{"x":"${'y'.repeat(1_000)}"},"content":""}`, 'a.jsonl'),
    ).toThrow(/^a\.jsonl:1\.role: expected "user" or "assistant", got .{1,400}$/);
  });
});
