/**
 * The pure parts of the Claude Agent SDK adapter (producer/frameworks/claude-agent-sdk/): how
 * transcript lines become messages (the lines of one streamed reply one message, a reply still
 * streaming held back, a bad line named by its seq), the compaction lines a resume is served, the
 * policy's summary instructions, the recall server entry.
 */
import { describe, expect, it } from 'vitest';
import {
  BOUNDARY_TEXT,
  compactionChain,
  isMessageLine,
  lastUsageOf,
  messagesOf,
  recallNote,
  recallServer,
  summaryInstructionsOf,
} from '../../producer/frameworks/claude-agent-sdk/index.ts';
import { InvalidInputError, TranscriptError } from '../../shared/contract/errors.ts';

const user = (text: string, extra: Record<string, unknown> = {}) => ({
  type: 'user',
  uuid: `u-${text}`,
  message: { role: 'user', content: [{ type: 'text', text }] },
  timestamp: '2026-11-01T10:00:00.000Z',
  ...extra,
});
const reply = (id: string, block: Record<string, unknown>, usage?: Record<string, unknown>) => ({
  type: 'assistant',
  uuid: `a-${id}-${String(block.type)}`,
  message: { id, type: 'message', role: 'assistant', content: [block], ...(usage ? { usage } : {}) },
});

describe('transcript lines as messages', () => {
  const lines = [
    user('Fix the parser.'),
    reply('msg_1', { type: 'thinking', thinking: 'Look first.', signature: 'sig' }),
    reply('msg_1', { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a.ts' } }),
    user('result', {
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
    }),
    reply('msg_2', { type: 'text', text: 'Done.' }),
  ].map((entry, i) => ({ seq: i * 2 + 1, entry }));

  it('joins the lines of one reply, and holds back a reply still streaming', () => {
    const open = messagesOf(lines, 'session "s"', false);
    expect(open.map((m) => m.message.role)).toEqual(['user', 'assistant', 'user']);
    expect(open[1]?.message.content).toEqual([
      { type: 'thinking', thinking: 'Look first.', signature: 'sig' },
      { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a.ts' } },
    ]);
    expect(open[1]?.seqs).toEqual([3, 5]);
    expect(open[0]?.createdAt?.toISOString()).toBe('2026-11-01T10:00:00.000Z');
    const closed = messagesOf(lines, 'session "s"', true);
    expect(closed.map((m) => m.seqs)).toEqual([[1], [3, 5], [7], [9]]);
  });

  it('reads only user and assistant lines of the main conversation as messages', () => {
    expect(isMessageLine({ type: 'user' })).toBe(true);
    expect(isMessageLine({ type: 'assistant', isSidechain: true })).toBe(false);
    expect(isMessageLine({ type: 'attachment' })).toBe(false);
    expect(isMessageLine({ type: 'system', subtype: 'compact_boundary' })).toBe(false);
  });

  it('names the seq and the field of a line that is no message', () => {
    const bad = [{ seq: 41, entry: { type: 'user', message: { role: 'user', content: 7 } } }];
    expect(() => messagesOf(bad, 'session "s"', true)).toThrow(TranscriptError);
    expect(() => messagesOf(bad, 'session "s"', true)).toThrow(/session "s", line seq 41: message\.content/);
  });

  it("reports the newest reply's prompt size, cache reads and writes included", () => {
    const entries = [
      reply('m1', { type: 'text', text: 'a' }, { input_tokens: 5, cache_read_input_tokens: 100 }),
      reply(
        'm2',
        { type: 'text', text: 'b' },
        {
          input_tokens: 7,
          cache_read_input_tokens: 300,
          cache_creation_input_tokens: 20,
        },
      ),
      { type: 'attachment' },
    ];
    expect(lastUsageOf(entries)).toEqual({ inputTokens: 327, cacheReadTokens: 300 });
    expect(lastUsageOf([{ type: 'user' }])).toBeNull();
  });
});

describe('the compaction lines of a resume', () => {
  it('writes a boundary, then one line per message, each the child of the one before', () => {
    let n = 0;
    const chain = compactionChain({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'summary' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Read', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] },
      ],
      sessionId: 's-1',
      version: 3,
      leafUuid: 'leaf',
      model: 'claude-sonnet-5',
      common: { cwd: '/repo' },
      now: new Date('2026-11-01T00:00:00Z'),
      newUuid: () => `uuid-${++n}`,
    });
    expect(chain.map((l) => l.type)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(chain[0]).toMatchObject({
      subtype: 'compact_boundary',
      content: BOUNDARY_TEXT,
      parentUuid: null,
      logicalParentUuid: 'leaf',
      cwd: '/repo',
      sessionId: 's-1',
    });
    expect(chain.slice(1).map((l) => l.parentUuid)).toEqual(['uuid-1', 'uuid-2', 'uuid-3']);
    expect(chain[2]?.message).toMatchObject({
      id: 'msg_compactor_3_1',
      model: 'claude-sonnet-5',
      stop_reason: 'tool_use',
    });
  });

  it('refuses a system message, which no Claude Code line holds', () => {
    expect(() =>
      compactionChain({
        messages: [{ role: 'system', content: 'x' } as never],
        sessionId: 's',
        version: 1,
        leafUuid: null,
        now: new Date(),
        newUuid: () => 'u',
      }),
    ).toThrow(/context\.messages\[0\]: a "system" message/);
  });
});

describe('the policy and recall', () => {
  it("takes the summary instructions of summarize and of auto's summary stage", () => {
    expect(
      summaryInstructionsOf({ type: 'summarize', keepRecent: 4, instructions: 'Keep paths.' } as never),
    ).toBe('Keep paths.');
    expect(
      summaryInstructionsOf({ type: 'auto', summarize: { instructions: 'Keep errors.' } } as never),
    ).toBe('Keep errors.');
    expect(summaryInstructionsOf({ type: 'slidingWindow', maxMessages: 5 } as never)).toBeNull();
  });

  it('gives the MCP server entry and its tools, and refuses what cannot reach it', () => {
    expect(recallServer({ apiUrl: 'http://127.0.0.1:3100', apiKey: 'cpt_x' })).toEqual({
      mcpServers: {
        compactor: {
          type: 'http',
          url: 'http://127.0.0.1:3100/v1/mcp',
          headers: { Authorization: 'Bearer cpt_x' },
        },
      },
      allowedTools: ['mcp__compactor__recall_search', 'mcp__compactor__recall_read'],
    });
    expect(() => recallServer({ apiUrl: 'nowhere', apiKey: 'k' })).toThrow(InvalidInputError);
    expect(() => recallServer({ apiUrl: 'ftp://x', apiKey: 'k' })).toThrow(/http\(s\)/);
    expect(() => recallServer({ apiUrl: 'http://x', apiKey: ' ' })).toThrow(/recall\.apiKey/);
    expect(recallNote('s-1')).toContain('"s-1"');
  });
});
