/**
 * The LangChain adapter's pure parts (producer/frameworks/langchain/): LangChain messages stored as
 * Chat Completions messages or Anthropic `MessageParam`s and mapped back, byte for byte for
 * everything stored; what each format cannot hold refused with an error naming the message and the
 * block; the format chosen by the model; the session id of a run; the recall tools bound to it.
 */
import { ChatAnthropic } from '@langchain/anthropic';
import {
  AIMessage,
  type BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { DynamicStructuredTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import {
  formatOfModel,
  fromAnthropicContext,
  fromAnthropicMessage,
  fromChatMessage,
  recallServer,
  sessionIdOf,
  sessionRecallTools,
  storedMessages,
  toAnthropicMessage,
  toChatMessage,
} from '../../producer/frameworks/langchain/index.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { anthropicContentProblem } from '../../shared/formats/anthropic/content-rules.ts';
import { chatMessageProblem } from '../../shared/formats/openai-chat/message.ts';
import { chatRequestError } from '../support/fake-openai-chat.ts';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A conversation as an agent on ChatOpenAI holds it. */
function chatConversation(): BaseMessage[] {
  return [
    new SystemMessage('Be careful.'),
    new HumanMessage({
      content: [
        { type: 'text', text: 'What is on this screen?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'low' } },
      ],
      name: 'ada',
    }),
    new AIMessage({
      content: 'Reading.',
      tool_calls: [
        { id: 'call_1', name: 'read_file', args: { path: 'a.ts', lines: [1, 2] }, type: 'tool_call' },
      ],
    }),
    new ToolMessage({ content: 'export const a = 1;', tool_call_id: 'call_1', name: 'read_file' }),
    new AIMessage({
      content: '',
      tool_calls: [
        { id: 'call_2', name: 'read_file', args: { path: 'b.ts' }, type: 'tool_call' },
        { id: 'call_3', name: 'read_file', args: {}, type: 'tool_call' },
      ],
    }),
    new ToolMessage({ content: [{ type: 'text', text: 'export const b = 2;' }], tool_call_id: 'call_2' }),
    new ToolMessage({ content: 'Error: no path', tool_call_id: 'call_3', status: 'error' }),
    new AIMessage({ content: [{ type: 'text', text: 'Both read.' }] }),
    new SystemMessage({ content: 'Be brief.', additional_kwargs: { __openai_role__: 'developer' } }),
  ];
}

describe('the openai-chat mapping', () => {
  it('stores each message as the Chat Completions message ChatOpenAI sends for it', () => {
    const stored = storedMessages(chatConversation(), 'openai-chat', 0);
    expect(stored).toEqual([
      { role: 'system', content: 'Be careful.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is on this screen?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'low' } },
        ],
        name: 'ada',
      },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"a.ts","lines":[1,2]}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'export const a = 1;' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.ts"}' } },
          { id: 'call_3', type: 'function', function: { name: 'read_file', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'export const b = 2;' }] },
      { role: 'tool', tool_call_id: 'call_3', content: 'Error: no path' },
      { role: 'assistant', content: [{ type: 'text', text: 'Both read.' }] },
      { role: 'developer', content: 'Be brief.' },
    ]);
    // Each is a valid Chat Completions message for compactor, and the whole a valid request.
    expect(stored.map((m, i) => chatMessageProblem(m, `messages[${i}]`))).toEqual(stored.map(() => null));
    expect(chatRequestError(stored)).toBeNull();
  });

  it('maps every stored message back to a message that stores the same bytes', () => {
    const stored = storedMessages(chatConversation(), 'openai-chat', 0);
    const back = stored.map((m, i) => fromChatMessage(m, `context.messages[${i}]`));
    expect(JSON.stringify(storedMessages(back, 'openai-chat', 0))).toBe(JSON.stringify(stored));
    const call = back[2] as AIMessage;
    expect(call.tool_calls).toEqual([
      { id: 'call_1', name: 'read_file', args: { path: 'a.ts', lines: [1, 2] }, type: 'tool_call' },
    ]);
    expect((back[8] as SystemMessage).additional_kwargs).toEqual({ __openai_role__: 'developer' });
    // compactor's own messages: the summary (a user message), a call's missing answer, a null content.
    expect(fromChatMessage({ role: 'user', content: 'summary' }, 'm')).toBeInstanceOf(HumanMessage);
    expect(
      fromChatMessage({ role: 'tool', tool_call_id: 'c', content: 'no result was recorded' }, 'm'),
    ).toMatchObject({ tool_call_id: 'c', content: 'no result was recorded' });
    const nullContent = fromChatMessage(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      'm',
    );
    expect(nullContent.content).toBe('');
  });

  it('keeps a call written in the content too once, in tool_calls, and a reply of no text and calls as null', () => {
    const reply = new AIMessage({
      content: [{ type: 'tool_call', id: 'call_9', name: 'f', args: { x: 1 } }],
      tool_calls: [{ id: 'call_9', name: 'f', args: { x: 1 }, type: 'tool_call' }],
    });
    expect(toChatMessage(reply, 'messages[0] (ai)')).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
    });
  });

  it.each([
    [
      'a thinking block',
      new AIMessage({ content: [{ type: 'thinking', thinking: 'hm', signature: 'sig' }] }),
      /^messages\[4\] \(ai\)\.content\[0\]: a "thinking" block, which the openai-chat session format cannot hold .*anthropic format/,
    ],
    [
      'a reasoning block',
      new AIMessage({ content: [{ type: 'reasoning', reasoning: 'hm' }] }),
      /content\[0\]: a "reasoning" block/,
    ],
    [
      "LangChain's standard image block",
      new HumanMessage({ content: [{ type: 'image', url: 'https://example.com/a.png' }] }),
      /^messages\[4\] \(human\)\.content\[0\]: a "image" block.*user messages take text, image_url/,
    ],
    [
      'an image in a tool message',
      new ToolMessage({
        content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }],
        tool_call_id: 'c',
      }),
      /content\[0\]: a "image_url" block.*tool message holds text only/,
    ],
    [
      'a call without an id',
      new AIMessage({ content: '', tool_calls: [{ name: 'f', args: {}, type: 'tool_call' }] }),
      /^messages\[4\] \(ai\)\.tool_calls\[0\]\.id: required/,
    ],
    [
      'arguments that are not JSON',
      new AIMessage({
        content: '',
        invalid_tool_calls: [{ id: 'c', name: 'f', args: '{oops', error: 'bad', type: 'invalid_tool_call' }],
      }),
      /invalid_tool_calls: 1 tool call\(s\) whose arguments are not JSON \(f\)/,
    ],
    [
      'a message of another role',
      new ChatMessage({ content: 'hi', role: 'critic' }),
      /^messages\[4\] \(generic\): the openai-chat session format has no role for a "generic" message/,
    ],
  ])('refuses %s, naming the message', (_what, message, error) => {
    const messages = [...chatConversation().slice(0, 4), message];
    const refused = () => storedMessages(messages, 'openai-chat', 0);
    expect(refused).toThrow(InvalidInputError);
    expect(refused).toThrow(error);
  });
});

/** A conversation as an agent on ChatAnthropic holds it: signed thinking, tool_use, results. */
function anthropicConversation(): BaseMessage[] {
  return [
    new HumanMessage('Read a.ts.'),
    new AIMessage({
      content: [
        { type: 'thinking', thinking: 'I should read it.', signature: 'c2lnbmVk' },
        { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
        { type: 'text', text: 'Reading.', citations: null },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
      ],
      tool_calls: [{ id: 'toolu_1', name: 'read_file', args: { path: 'a.ts' }, type: 'tool_call' }],
    }),
    new ToolMessage({
      content: [
        { type: 'text', text: 'The screen:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      ],
      tool_call_id: 'toolu_1',
    }),
    new AIMessage({
      content: 'Again.',
      tool_calls: [{ id: 'toolu_2', name: 'read_file', args: {}, type: 'tool_call' }],
    }),
    new ToolMessage({ content: 'Error: no path', tool_call_id: 'toolu_2', status: 'error' }),
    new AIMessage('Done.'),
  ];
}

describe('the anthropic mapping', () => {
  it('stores the blocks as the model returned them, and tool messages as tool_result turns', () => {
    const stored = storedMessages(anthropicConversation(), 'anthropic', 0);
    expect(stored).toEqual([
      { role: 'user', content: 'Read a.ts.' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should read it.', signature: 'c2lnbmVk' },
          { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
          { type: 'text', text: 'Reading.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: 'The screen:' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            ],
          },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Again.' },
          { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: {} },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'Error: no path', is_error: true }],
      },
      { role: 'assistant', content: 'Done.' },
    ]);
    expect(
      stored.map((m, i) => anthropicContentProblem(m.role, m.content, `messages[${i}].content`)),
    ).toEqual(stored.map(() => null));
  });

  it('maps every stored message back to a message that stores the same bytes', () => {
    const stored = storedMessages(anthropicConversation(), 'anthropic', 0);
    const back = fromAnthropicContext(undefined, stored as never);
    expect(JSON.stringify(storedMessages(back, 'anthropic', 0))).toBe(JSON.stringify(stored));
    expect((back[1] as AIMessage).tool_calls).toEqual([
      { id: 'toolu_1', name: 'read_file', args: { path: 'a.ts' }, type: 'tool_call' },
    ]);
    // A user turn holding tool results comes back as a human message with them, as they are.
    expect(back[2]).toBeInstanceOf(HumanMessage);
    const withSystem = fromAnthropicContext(
      [{ type: 'text', text: 'Be careful.' }],
      stored.slice(0, 1) as never,
    );
    expect(withSystem[0]).toBeInstanceOf(SystemMessage);
    expect(withSystem[0]?.content).toEqual([{ type: 'text', text: 'Be careful.' }]);
  });

  it("undoes a stream's traces as ChatAnthropic does: the blocks' index, a tool_use input still JSON text", () => {
    const streamed = new AIMessage({
      content: [
        { index: 0, type: 'thinking', thinking: 'Hm.', signature: 'c2ln' },
        { index: 1, type: 'tool_use', id: 'toolu_3', name: 'f', input: '{"x":1}' },
        { index: 2, type: 'tool_use', id: 'toolu_4', name: 'g', input: '{"y":2}' },
      ],
      tool_calls: [{ id: 'toolu_3', name: 'f', args: { x: 1 }, type: 'tool_call' }],
    });
    expect(toAnthropicMessage(streamed, 'messages[0] (ai)')).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Hm.', signature: 'c2ln' },
        { type: 'tool_use', id: 'toolu_3', name: 'f', input: { x: 1 } },
        { type: 'tool_use', id: 'toolu_4', name: 'g', input: { y: 2 } },
      ],
    });
  });

  it.each([
    [
      'a reasoning block (the v1 output format)',
      new AIMessage({ content: [{ type: 'reasoning', reasoning: 'hm' }] }),
      /^messages\[1\] \(ai\)\.content\[0\]: a "reasoning" block, which the anthropic session format cannot hold/,
    ],
    [
      "LangChain's standard file block",
      new HumanMessage({ content: [{ type: 'file', url: 'https://example.com/a.pdf' }] }),
      /^messages\[1\] \(human\)\.content\[0\]: a "file" block/,
    ],
    [
      'an image URL of another scheme',
      new HumanMessage({ content: [{ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }] }),
      /content\[0\]\.image_url\.url: expected a base64 data URL or an http\(s\) URL/,
    ],
    [
      'a tool message without its call id',
      new ToolMessage({ content: 'x', tool_call_id: '' }),
      /^messages\[1\] \(tool\)\.tool_call_id: required/,
    ],
  ])('refuses %s, naming the message', (_what, message, error) => {
    const refused = () => storedMessages([new HumanMessage('hi'), message], 'anthropic', 0);
    expect(refused).toThrow(InvalidInputError);
    expect(refused).toThrow(error);
  });

  it('reads tool calls off tool_use blocks, and nothing off a string', () => {
    expect((fromAnthropicMessage({ role: 'assistant', content: 'ok' }) as AIMessage).tool_calls).toEqual([]);
  });
});

describe('formatOfModel', () => {
  it('stores ChatAnthropic in the anthropic format, every other model in openai-chat', async () => {
    expect(await formatOfModel(new ChatAnthropic({ model: 'claude-sonnet-5', apiKey: 'k' }))).toBe(
      'anthropic',
    );
    expect(await formatOfModel(new ChatOpenAI({ model: 'gpt-5.4-mini', apiKey: 'k' }))).toBe('openai-chat');
    expect(await formatOfModel('anthropic:claude-sonnet-5')).toBe('anthropic');
    expect(await formatOfModel('openai:gpt-5.4-mini')).toBe('openai-chat');
    const configurable = { _getModelInstance: async () => new ChatAnthropic({ model: 'c', apiKey: 'k' }) };
    expect(await formatOfModel(configurable)).toBe('anthropic');
  });
});

describe('sessionIdOf', () => {
  it('takes the option, a function of the run, or the thread id; refuses a run with none', () => {
    expect(sessionIdOf('s-1', {})).toBe('s-1');
    expect(
      sessionIdOf(({ context }) => `user-${(context as { user: string }).user}`, {
        context: { user: 'ada' },
      }),
    ).toBe('user-ada');
    expect(sessionIdOf(undefined, { configurable: { thread_id: 't-1' } })).toBe('t-1');
    expect(() => sessionIdOf(undefined, {})).toThrow(
      /no session id for this run: pass the sessionId option, or invoke the agent with configurable.thread_id/,
    );
  });
});

describe('sessionRecallTools', () => {
  const mcpLike = (calls: unknown[]) =>
    new DynamicStructuredTool({
      name: 'recall_search',
      description: 'Searches.',
      schema: {
        type: 'object' as const,
        properties: { sessionId: { type: 'string' }, query: { type: 'string' } },
        required: ['sessionId', 'query'],
      },
      responseFormat: 'content_and_artifact',
      func: async (args: unknown) => {
        calls.push(args);
        return [{ type: 'text', text: '{"hits":[]}', structuredContent: { hits: [] } }, []];
      },
    });

  it('hides sessionId from the model and fills in the run session; the model gets the text', async () => {
    const calls: unknown[] = [];
    const [bound] = sessionRecallTools([mcpLike(calls)], undefined);
    expect(bound?.schema).toEqual({
      type: 'object',
      properties: { query: { type: 'string' } },
      required: ['query'],
    });
    const answer = await bound?.invoke(
      { type: 'tool_call', id: 'call_1', name: 'recall_search', args: { query: 'a.ts' } },
      { configurable: { thread_id: 'thread-7' } },
    );
    expect(calls).toEqual([{ query: 'a.ts', sessionId: 'thread-7' }]);
    expect(answer).toBeInstanceOf(ToolMessage);
    expect((answer as ToolMessage).content).toBe('{"hits":[]}');
    expect((answer as ToolMessage).artifact).toEqual({ structuredContent: { hits: [] }, blocks: [] });
  });

  it('refuses a tool that takes no sessionId: not a recall tool', () => {
    const other = new DynamicStructuredTool({
      name: 'read_file',
      description: 'Reads.',
      schema: { type: 'object' as const, properties: { path: { type: 'string' } } },
      func: async () => '',
    });
    expect(() => sessionRecallTools([other], 's')).toThrow(
      /recall tool "read_file": its JSON Schema has no sessionId/,
    );
  });
});

describe('recallServer', () => {
  it('is /v1/mcp of the API with the key as bearer token; a missing one is named', () => {
    expect(recallServer('http://127.0.0.1:3100', 'cpt_key')).toEqual({
      transport: 'http',
      url: 'http://127.0.0.1:3100/v1/mcp',
      headers: { authorization: 'Bearer cpt_key' },
    });
    expect(() => recallServer(undefined, 'k')).toThrow(/recallServer: no API URL/);
    expect(() => recallServer('http://127.0.0.1:3100', '')).toThrow(/recallServer: no API key/);
  });
});
