/**
 * The pure rules of the `openai-chat` format: what a Chat Completions message must be, what is read
 * off it, and the context rules (every call answered directly after it, no tool message without its
 * call, the summary a user message), checked against the strict fake server's own rule check.
 */
import { describe, expect, it } from 'vitest';
import type { ContextRow } from '../../shared/context/render.ts';
import { NO_RESULT, SUMMARY_INTRO } from '../../shared/context/render.ts';
import type { StoredContent } from '../../shared/contract/blocks.ts';
import { TranscriptError } from '../../shared/contract/errors.ts';
import { clearedChatInputs, clearedChatResult } from '../../shared/formats/openai-chat/clearing.ts';
import { pairToolCalls, renderChatContext } from '../../shared/formats/openai-chat/context.ts';
import { type ChatMessage, chatFacts, chatMessageProblem } from '../../shared/formats/openai-chat/message.ts';
import { parseChatRequestsJsonl } from '../../shared/formats/openai-chat/transcript.ts';
import { chatRequestError } from '../support/fake-openai-chat.ts';

const call = (...ids: string[]): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({
    id,
    type: 'function',
    function: { name: 'bash', arguments: '{"cmd":"ls"}' },
  })),
});
const answer = (id: string, content = `out ${id}`): ChatMessage => ({
  role: 'tool',
  tool_call_id: id,
  content,
});
const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('chatMessageProblem', () => {
  it.each([
    [
      { role: 'assistant', content: null, tool_calls: [] },
      'm.tool_calls',
      /^empty array\. Expected an array with minimum length 1/,
    ],
    [{ role: 'tool', content: 'x' }, 'm.tool_call_id', /required on a tool message/],
    [{ role: 'assistant', content: null }, 'm.content', /^expected a string, got null/],
    [{ role: 'assistant' }, 'm.content', /^expected a string, got nothing/],
    [{ role: 'user', content: null }, 'm.content', /^expected a string, got null/],
    [{ role: 'tool', tool_call_id: 'c' }, 'm.content', /^expected a string, got nothing/],
    [
      {
        role: 'assistant',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }],
      },
      'm.tool_calls[0].function.arguments',
      /expected a string/,
    ],
    [
      { role: 'user', content: [{ type: 'image_url', image_url: {} }] },
      'm.content[0].image_url.url',
      /expected string/,
    ],
    [{ role: 'function', name: 'f', content: 'x' }, 'm.role', /legacy function role/],
    ['hello', 'm', /expected a Chat Completions message object/],
  ])('refuses %j at %s', (message, field, error) => {
    const problem = chatMessageProblem(message, 'm');
    expect(problem?.field.startsWith(field)).toBe(true);
    expect(problem?.message).toMatch(error);
  });

  it('accepts every role and part the SDK types, keeping fields it does not know', () => {
    const valid: unknown[] = [
      { role: 'developer', content: [{ type: 'text', text: 'be brief' }] },
      { role: 'system', content: 'sys', name: 'ops' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look', prompt_cache_breakpoint: { ttl: '30m' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          { type: 'file', file: { file_id: 'file-1' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }], refusal: null, annotations: [] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'g', input: 'x' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: 'done' }] },
    ];
    for (const m of valid) expect(chatMessageProblem(m, 'm')).toBeNull();
  });
});

describe('chatFacts', () => {
  it('reads the tool pair ids, the kind and a plain text without base64', () => {
    expect(chatFacts(call('a', 'b'))).toMatchObject({
      role: 'assistant',
      kind: 'tool_call',
      toolUseIds: ['a', 'b'],
      toolResultIds: [],
      toolName: 'bash',
      text: '{"name":"bash","arguments":{"cmd":"ls"}}\n{"name":"bash","arguments":{"cmd":"ls"}}',
    });
    expect(chatFacts(answer('a'))).toMatchObject({ role: 'tool', kind: 'tool_result', toolResultIds: ['a'] });
    expect(chatFacts({ role: 'developer', content: 'x' }).role).toBe('system');
    const image = chatFacts({
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(10_000)}` } }],
    });
    expect(image.text).toBe('[image: image/png, base64]');
    expect(image.tokenCount).toBeLessThan(1_000);
  });
});

describe('the context of an openai-chat session', () => {
  const rows = (messages: ChatMessage[]): ContextRow[] =>
    messages.map((m, seq) => ({
      seq,
      role: chatFacts(m).role,
      kind: chatFacts(m).kind,
      content: m as unknown as StoredContent,
      pinned: false,
    }));

  it('answers a call the session moved on from, and turns a tool message without its call into a user message', () => {
    const out = pairToolCalls([user('go'), call('a', 'b'), answer('b'), user('next'), answer('z')]);
    expect(out).toEqual([
      user('go'),
      call('a', 'b'),
      { role: 'tool', tool_call_id: 'a', content: NO_RESULT },
      answer('b'),
      user('next'),
      {
        role: 'user',
        content: '[A tool result whose tool call is not in this conversation (tool_call_id z)]\nout z',
      },
    ]);
    expect(chatRequestError(out)).toBeNull();
  });

  it('puts answers in call order and moves a system message from between a call and its answers', () => {
    const note: ChatMessage = { role: 'system', content: 'budget low' };
    const out = pairToolCalls([user('go'), call('a', 'b'), note, answer('b'), answer('a'), user('ok')]);
    expect(out).toEqual([user('go'), call('a', 'b'), answer('a'), answer('b'), note, user('ok')]);
    expect(chatRequestError(out)).toBeNull();
  });

  it('leaves the newest calls open while the agent runs them', () => {
    const out = pairToolCalls([user('go'), call('a', 'b'), answer('a')]);
    expect(out).toEqual([user('go'), call('a', 'b'), answer('a')]);
    expect(chatRequestError([...out, answer('b')])).toBeNull();
  });

  it('puts the summary after the system prompt as a user message, and restates archived system text', () => {
    const history = rows([{ role: 'system', content: 'sys' }, user('go'), call('a'), answer('a')]);
    const summary: ContextRow = {
      seq: 9,
      role: 'user',
      kind: 'summary',
      content: 'Summary: did things',
      pinned: false,
    };
    const context = renderChatContext({
      rows: [history[0] as ContextRow, summary, ...history.slice(2)],
      checkpoint: null,
      archivedSystem: ['old rule'],
    });
    expect(context.messages[0]).toEqual({ role: 'system', content: 'sys' });
    expect(context.messages[1]).toEqual({ role: 'system', content: 'old rule' });
    expect(context.messages[2]).toMatchObject({ role: 'user' });
    expect(String(context.messages[2]?.content).startsWith(SUMMARY_INTRO)).toBe(true);
    expect(context.messages.slice(3)).toEqual([call('a'), answer('a')]);
    expect(context.tokens).toBeGreaterThan(0);
    expect(chatRequestError(context.messages)).toBeNull();
  });

  it('restates identical archived system texts once, in order, and none the leading system message holds', () => {
    const context = renderChatContext({
      rows: rows([{ role: 'system', content: 'sys' }, user('go')]),
      checkpoint: null,
      archivedSystem: ['sys', 'rule A', 'sys', 'rule B', 'rule A', '  '],
    });
    expect(context.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'system', content: 'rule A' },
      { role: 'system', content: 'rule B' },
      user('go'),
    ]);
  });

  it('gives a context the strict check accepts whatever window of a history it is given', () => {
    const history: ChatMessage[] = [{ role: 'system', content: 's' }, user('u0')];
    for (let t = 0; t < 6; t++)
      history.push(call(`c${t}a`, `c${t}b`), answer(`c${t}a`), answer(`c${t}b`), user(`u${t + 1}`));
    for (let from = 1; from < history.length; from++) {
      for (let to = from + 1; to <= history.length; to++) {
        const window = [history[0] as ChatMessage, ...history.slice(from, to)];
        const out = renderChatContext({ rows: rows(window), checkpoint: null }).messages;
        const closed = out.at(-1)?.role === 'user' ? out : [...out, ...openAnswers(out)];
        expect(chatRequestError(closed), `window ${from}..${to}`).toBeNull();
      }
    }
  });
});

/** The answers an agent appends to the newest calls still open. */
function openAnswers(messages: ChatMessage[]): ChatMessage[] {
  const last = messages.findLast((m) => m.role === 'assistant');
  if (last?.role !== 'assistant' || !last.tool_calls) return [];
  const answered = new Set(
    messages.filter((m) => m.role === 'tool').map((m) => (m as { tool_call_id: string }).tool_call_id),
  );
  return last.tool_calls.filter((c) => !answered.has(c.id)).map((c) => answer(c.id));
}

describe('clearing Chat Completions messages', () => {
  it('replaces a tool message content and empties call arguments, every other field kept', () => {
    expect(clearedChatResult(answer('a'), '[cleared]')).toEqual({
      role: 'tool',
      tool_call_id: 'a',
      content: '[cleared]',
    });
    expect(clearedChatResult(user('x'), '[cleared]')).toBeNull();
    const cleared = clearedChatInputs(call('a', 'b'), new Set(['a']));
    expect(cleared).toMatchObject({
      tool_calls: [
        { id: 'a', function: { arguments: '{}' } },
        { id: 'b', function: { arguments: '{"cmd":"ls"}' } },
      ],
    });
    expect(clearedChatInputs(cleared, new Set(['a']))).toBeNull();
  });
});

describe('parseChatRequestsJsonl', () => {
  it('takes the last request as the session, naming the line and field of a bad message', () => {
    const text = [
      JSON.stringify({ model: 'm', messages: [user('a')] }),
      '',
      JSON.stringify({ model: 'm', messages: [user('a'), call('c'), answer('c')] }),
    ].join('\n');
    expect(parseChatRequestsJsonl(text, 'f.jsonl')).toEqual([user('a'), call('c'), answer('c')]);
    expect(() => parseChatRequestsJsonl('{"messages":[{"role":"tool","content":"x"}]}', 'f.jsonl')).toThrow(
      new TranscriptError(
        'f.jsonl:1: messages[0].tool_call_id: required on a tool message: the id of the tool call it answers',
      ),
    );
    expect(() => parseChatRequestsJsonl('{"role":"user","content":"x"}', 'f.jsonl')).toThrow(
      /f\.jsonl:1: messages: expected a Chat Completions request/,
    );
    expect(() => parseChatRequestsJsonl('\n', 'f.jsonl')).toThrow(/f\.jsonl: no messages/);
  });
});
