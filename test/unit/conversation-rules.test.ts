/**
 * The conversation rules the fake Messages API enforces, and its thinking signatures: what the
 * real API accepts passes, what it refuses fails with its error, and a thinking block replayed
 * after the conversation before it changed (a client-side compaction) is refused.
 */
import { describe, expect, it } from 'vitest';
import {
  type Block,
  type Conversation,
  checkConversation,
  lastSignature,
  signThinking,
  type Turn,
} from '../support/conversation-rules.ts';

const KEY = 'fake-signing-key';
const system = 'You are a coding agent.';
const tools = [{ name: 'bash', input_schema: { type: 'object' } }];

/** The reply the fake would write after `messages`: signed thinking, then `rest`. */
function reply(messages: Turn[], thinking: string, rest: Block[]): Turn {
  const signature = signThinking({ system, tools, messages }, [], thinking, lastSignature(messages), KEY);
  return { role: 'assistant', content: [{ type: 'thinking', thinking, signature }, ...rest] };
}

/** A tool loop of `rounds` calls, each answered, ending with a user turn. */
function toolLoop(rounds: number): Turn[] {
  const messages: Turn[] = [{ role: 'user', content: 'fix the failing test' }];
  for (let i = 0; i < rounds; i++) {
    messages.push(
      reply(messages, `step ${i}`, [{ type: 'tool_use', id: `toolu_${i}`, name: 'bash', input: { i } }]),
    );
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `ok ${i}` }],
    });
  }
  return messages;
}

const check = (messages: Turn[], extra: Partial<Conversation> = {}) =>
  checkConversation({ system, tools, messages, thinking: { type: 'enabled' }, ...extra }, KEY);

describe('conversation structure', () => {
  it('accepts a tool loop with its thinking replayed as received', () => {
    expect(() => check(toolLoop(3))).not.toThrow();
  });

  it('combines consecutive same-role turns, as the API does', () => {
    const messages: Turn[] = [
      { role: 'user', content: 'first' },
      { role: 'user', content: [{ type: 'text', text: 'second' }] },
    ];
    expect(() => check(messages)).not.toThrow();
  });

  it('refuses a tool_result whose tool_use is not in the turn just before', () => {
    const messages: Turn[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'done' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'late' }] },
    ];
    expect(() => check(messages, { thinking: undefined })).toThrow(/unexpected `tool_use_id`.*toolu_x/);
  });

  it('refuses a tool_use left without its tool_result in the next turn', () => {
    const messages: Turn[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} }] },
      { role: 'user', content: 'never mind' },
    ];
    expect(() => check(messages, { thinking: undefined })).toThrow(/without `tool_result` blocks.*toolu_1/);
  });

  it('refuses text before the tool_result blocks of a turn', () => {
    const messages: Turn[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'here:' },
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' },
        ],
      },
    ];
    expect(() => check(messages, { thinking: undefined })).toThrow(/must come first/);
  });

  it('refuses a system message first and an assistant prefill last', () => {
    expect(() => check([{ role: 'system', content: 'be brief' }])).toThrow(/cannot be the first entry/);
    expect(() =>
      check([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Sure' },
      ]),
    ).toThrow(/prefill/);
  });

  it('with manual thinking, refuses a final tool-loop turn that does not start with thinking', () => {
    const messages: Turn[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    ];
    expect(() => check(messages)).toThrow(/must start with a thinking block/);
    expect(() => check(messages, { thinking: { type: 'adaptive' } })).not.toThrow();
  });
});

describe('thinking signatures', () => {
  it('refuses a tampered or empty signature, and edited thinking text', () => {
    const messages = toolLoop(1);
    const turn = messages[1] as { content: Block[] };
    const thinking = turn.content[0] as Block;
    expect(() =>
      check(
        messages.map((m, i) =>
          i === 1 ? { ...m, content: [{ ...thinking, thinking: 'edited' }, ...turn.content.slice(1)] } : m,
        ),
      ),
    ).toThrow('messages.1.content.0: Invalid `signature` in `thinking` block');
    expect(() =>
      check(
        messages.map((m, i) =>
          i === 1 ? { ...m, content: [{ ...thinking, signature: '' }, ...turn.content.slice(1)] } : m,
        ),
      ),
    ).toThrow(/Invalid `signature`/);
  });

  it('ignores key order, formatting and cache_control: the values are what is bound', () => {
    const messages = toolLoop(2);
    const reordered = {
      tools: [{ input_schema: { type: 'object' }, name: 'bash', cache_control: { type: 'ephemeral' } }],
    };
    expect(() => check(messages, reordered)).not.toThrow();
  });

  it('refuses kept thinking after a client-side compaction replaced the turns before it', () => {
    const messages = toolLoop(4);
    // The first two rounds summarized into one user message; rounds 3 and 4 kept as they were.
    const compacted: Turn[] = [
      { role: 'user', content: 'Summary of the work so far: ...' },
      ...messages.slice(5),
    ];
    expect(() => check(compacted, { thinking: { type: 'adaptive' } })).toThrow(
      /bound to a different conversation/,
    );
    // The same request with the kept turns' thinking left out is valid.
    const stripped = compacted.map((m) =>
      typeof m.content === 'string' ? m : { ...m, content: m.content.filter((b) => b.type !== 'thinking') },
    );
    expect(() => check(stripped, { thinking: { type: 'adaptive' } })).not.toThrow();
  });

  it('allows thinking removed from the start, the end, or all of it, but not a gap', () => {
    const messages = toolLoop(3);
    const without = (indexes: number[]) =>
      messages.map((m, i) =>
        indexes.includes(i) && typeof m.content !== 'string'
          ? { ...m, content: m.content.filter((b) => b.type !== 'thinking') }
          : m,
      );
    const adaptive = { thinking: { type: 'adaptive' } };
    expect(() => check(without([1]), adaptive)).not.toThrow();
    expect(() => check(without([5]), adaptive)).not.toThrow();
    expect(() => check(without([1, 3, 5]), adaptive)).not.toThrow();
    expect(() => check(without([3]), adaptive)).toThrow(/messages\.5\.content\.0: .*different conversation/);
  });
});

describe('drop_block', () => {
  it('drops a block whose prefix changed and every thinking block after it, and reports each', () => {
    const messages = toolLoop(4);
    const compacted: Turn[] = [
      { role: 'user', content: 'Summary of the work so far.' },
      ...messages.slice(5),
    ];
    const conversation = { system, tools, messages: compacted, thinking: { type: 'adaptive' } };
    expect(checkConversation(conversation, KEY, { dropMismatchedThinking: true })).toEqual([
      { type: 'thinking_dropped', reason: 'prefix_binding_mismatch', path: 'messages.1.content.0' },
      { type: 'thinking_dropped', reason: 'prefix_binding_mismatch', path: 'messages.3.content.0' },
    ]);
    expect(
      checkConversation({ ...conversation, messages: toolLoop(2) }, KEY, { dropMismatchedThinking: true }),
    ).toEqual([]);
  });

  it('still refuses a tampered signature', () => {
    const messages = toolLoop(1);
    const turn = messages[1] as { content: Block[] };
    const forged = messages.map((m, i) =>
      i === 1
        ? { ...m, content: [{ ...(turn.content[0] as Block), thinking: 'edited' }, ...turn.content.slice(1)] }
        : m,
    );
    expect(() =>
      checkConversation({ system, tools, messages: forged }, KEY, { dropMismatchedThinking: true }),
    ).toThrow(/Invalid `signature`/);
  });
});

describe('strict checks', () => {
  const strict = (messages: Turn[], extra: Partial<Conversation> = {}) =>
    checkConversation({ system, tools, messages, ...extra }, KEY, { strict: true });

  it('accepts what the default accepts when it is well formed', () => {
    expect(() => strict(toolLoop(2), { thinking: { type: 'adaptive' } })).not.toThrow();
  });

  it('refuses a first message that is not a user turn', () => {
    const messages: Turn[] = [
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'hi' },
    ];
    expect(() => check(messages, { thinking: undefined })).not.toThrow();
    expect(() => strict(messages)).toThrow(/messages\.0\.role: the first message must use the "user" role/);
  });

  it('refuses adjacent user or assistant turns, but not around a system message', () => {
    const twoUsers: Turn[] = [
      { role: 'user', content: 'first' },
      { role: 'user', content: 'second' },
    ];
    expect(() => strict(twoUsers)).toThrow(/messages\.1\.role: roles must alternate/);
    const twoAssistants: Turn[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'ok' },
    ];
    expect(() => strict(twoAssistants)).toThrow(/messages\.2\.role: roles must alternate/);
    const aroundSystem: Turn[] = [
      { role: 'user', content: 'go' },
      { role: 'system', content: 'be brief' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'thanks' },
    ];
    expect(() => strict(aroundSystem)).not.toThrow();
  });

  it('refuses empty content and empty text blocks', () => {
    expect(() => strict([{ role: 'user', content: '' }])).toThrow(
      /messages\.0: all messages must have non-empty content/,
    );
    expect(() => strict([{ role: 'user', content: [] }])).toThrow(/non-empty content/);
    expect(() => strict([{ role: 'user', content: [{ type: 'text', text: ' ' }] }])).toThrow(
      /messages\.0\.content\.0\.text: text content blocks must contain non-whitespace text/,
    );
  });

  it('with any thinking on, refuses a final tool-loop turn that does not start with thinking', () => {
    const messages: Turn[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    ];
    expect(() => strict(messages, { thinking: { type: 'adaptive' } })).toThrow(
      /must start with a thinking block/,
    );
    expect(() => strict(messages)).not.toThrow();
  });
});
