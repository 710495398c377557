/**
 * The OpenAI Agents SDK adapter's item mapping (producer/frameworks/openai-agents/to-responses.ts,
 * from-responses.ts), checked against the SDK's own converters (`@openai/agents-openai` 0.20.0:
 * `convertToOutputItem`, which reads a Responses model's output into the SDK's items, and
 * `getInputItems`, which turns the SDK's items into a request's `input`): items the SDK made come
 * back exactly, what the SDK sends for the items given back is what it sent for the originals, what
 * is stored is what it sends (a message keeping its `type`), and what cannot be stored whole is
 * refused, naming the field. Also the size of a run's last request (usage.ts).
 */
import type { AgentInputItem } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import {
  callsOf,
  toAgentItem,
  toAgentItems,
} from '../../producer/frameworks/openai-agents/from-responses.ts';
import { toResponsesItems } from '../../producer/frameworks/openai-agents/to-responses.ts';
import { lastRequestTokens } from '../../producer/frameworks/openai-agents/usage.ts';
import { NO_RESULT } from '../../shared/context/render.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { renderResponsesContext } from '../../shared/formats/openai-responses/context.ts';
import { type ResponsesItem, responsesItemProblem } from '../../shared/formats/openai-responses/item.ts';
import { issuedState, responsesInputError } from '../support/fake-openai-responses.ts';

/** The SDK's converters: internal to `@openai/agents-openai`, so imported by file. */
const converter = (await import(
  // @ts-expect-error: the package ships no declarations for its internal files' .mjs paths
  '../../node_modules/@openai/agents-openai/dist/openaiResponsesConverter.mjs'
)) as {
  getInputItems(input: AgentInputItem[]): unknown[];
  convertToOutputItem(items: unknown[]): AgentInputItem[];
};
const { getInputItems, convertToOutputItem } = converter;

const state = issuedState();
const json = (value: unknown) => JSON.parse(JSON.stringify(value));

/** A Responses model's output, as the API answers it: reasoning, a call, a message with annotations. */
const responseOutput = [
  {
    id: 'rs_1',
    type: 'reasoning',
    summary: [{ type: 'summary_text', text: 'Reading the parser first.' }],
    encrypted_content: state.sign('reasoning', 'rs_1'),
  },
  {
    id: 'fc_1',
    type: 'function_call',
    status: 'completed',
    call_id: 'call_1',
    name: 'read_file',
    arguments: '{"path":"src/parser.ts"}',
  },
  {
    id: 'rs_2',
    type: 'reasoning',
    summary: [],
    encrypted_content: state.sign('reasoning', 'rs_2'),
  },
  {
    id: 'msg_2',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    phase: 'final_answer',
    content: [
      {
        type: 'output_text',
        text: 'The parser drops the last token.',
        annotations: [{ type: 'url_citation', url: 'https://example.com', start_index: 0, end_index: 3 }],
        logprobs: [],
      },
      { type: 'refusal', refusal: 'Not that part.' },
    ],
  },
];
state.admit(responseOutput);

/** What the SDK's runner hands `Session.addItems` after such a run (its own items, as it makes them). */
function sdkItems(): AgentInputItem[] {
  const [rs1, fc1, rs2, msg2] = convertToOutputItem(json(responseOutput));
  return [
    { type: 'message', role: 'user', content: 'Why does the parser fail?' },
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'Here is a screenshot and the spec.' },
        { type: 'input_image', image: 'https://example.com/shot.png', detail: 'high' },
        { type: 'input_image', image: { id: 'file_img' }, detail: 'low' },
        { type: 'input_file', file: { id: 'file_spec' }, filename: 'spec.pdf' },
        { type: 'input_file', file: 'https://example.com/spec.pdf' },
      ],
    },
    rs1 as AgentInputItem,
    fc1 as AgentInputItem,
    {
      type: 'function_call_result',
      name: 'read_file',
      callId: 'call_1',
      status: 'completed',
      output: { type: 'text', text: 'export function parse() {}' },
    },
    rs2 as AgentInputItem,
    msg2 as AgentInputItem,
  ] as AgentInputItem[];
}

describe('SDK items as Responses items and back', () => {
  it('gives back the items the SDK made exactly, encrypted reasoning and ids included', () => {
    const items = sdkItems();
    const stored = toResponsesItems(items);
    expect(json(toAgentItems(stored))).toEqual(json(items));
    // Reasoning with its encrypted content and id, the call's id: stored as the API gave them.
    expect(stored[2]).toEqual(responseOutput[0]);
    expect(stored[3]).toMatchObject({ id: 'fc_1', call_id: 'call_1', arguments: '{"path":"src/parser.ts"}' });
    expect(stored[6]).toMatchObject({ id: 'msg_2', phase: 'final_answer' });
  });

  it('stores what the SDK sends, and the SDK sends the same for the items given back', () => {
    const items = sdkItems();
    const stored = toResponsesItems(items);
    const sent = getInputItems(items) as Array<Record<string, unknown>>;
    // Stored = sent, but that a message keeps the `type` the SDK leaves out of user messages.
    expect(stored).toEqual(
      sent.map((item, i) =>
        (items[i] as { type?: string }).type === 'message' ? { type: 'message', ...item } : item,
      ),
    );
    expect(json(getInputItems(toAgentItems(stored)))).toEqual(json(sent));
    // Every stored item is one compactor takes, and the strict fake takes the request.
    stored.forEach((item, i) => {
      expect(responsesItemProblem(item, `messages[${i}]`)).toBeNull();
    });
    expect(responsesInputError(stored, state, false)).toBeNull();
  });

  it('keeps the wire of a Chat Completions model and of tool outputs with parts', () => {
    const items = [
      { type: 'message', role: 'system', content: 'Answer briefly.' },
      { type: 'message', role: 'user', content: 'What is in the picture?' },
      // The SDK's Chat Completions model: the response id on every item, providerData of its own.
      {
        id: 'chatcmpl-1',
        type: 'function_call',
        arguments: '{}',
        name: 'screenshot',
        callId: 'call_a',
        status: 'completed',
        providerData: { type: 'function' },
      },
      {
        type: 'function_call_result',
        name: 'screenshot',
        callId: 'call_a',
        status: 'completed',
        output: [
          { type: 'input_text', text: 'The dashboard:' },
          { type: 'input_image', image: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
          { type: 'input_file', file: 'data:application/pdf;base64,JVBERi0=', filename: 'page.pdf' },
        ],
      },
      {
        id: 'chatcmpl-2',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'A dashboard.', providerData: { refusal: null } }],
      },
    ] as AgentInputItem[];
    const stored = toResponsesItems(items);
    expect(json(getInputItems(toAgentItems(stored)))).toEqual(json(getInputItems(items)));
    // The tool output's parts come back as the SDK holds them.
    expect(toAgentItems(stored)[3]).toMatchObject({ output: (items[3] as { output: unknown }).output });
  });

  it('gives a result the name of its call, found in the items or in the context', () => {
    const result = {
      type: 'function_call_result',
      name: 'read_file',
      callId: 'call_1',
      status: 'completed',
      output: 'done',
    } as AgentInputItem;
    const stored = toResponsesItems([result], new Map([['call_1', { name: 'read_file' }]]));
    expect(stored).toEqual([
      { type: 'function_call_output', call_id: 'call_1', output: 'done', status: 'completed' },
    ]);
    // A string output comes back as the SDK's own text output.
    expect(toAgentItem(stored[0] as ResponsesItem, new Map([['call_1', { name: 'read_file' }]]))).toEqual({
      type: 'function_call_result',
      name: 'read_file',
      callId: 'call_1',
      status: 'completed',
      output: { type: 'text', text: 'done' },
    });
  });

  it('maps what a compacted context holds: the summary, a synthetic output, restated system text', () => {
    const call = { type: 'function_call', call_id: 'call_9', name: 'bash', arguments: '{}' };
    const input: ResponsesItem[] = [
      { role: 'developer', content: 'Archived instructions.' },
      { type: 'message', role: 'user', content: 'Summary of the earlier conversation…' },
      call,
      { type: 'function_call_output', call_id: 'call_9', output: NO_RESULT },
      { type: 'compaction', id: 'cmp_1', encrypted_content: 'blob' },
    ];
    expect(json(toAgentItems(input))).toEqual([
      { role: 'system', content: 'Archived instructions.' },
      { type: 'message', role: 'user', content: 'Summary of the earlier conversation…' },
      {
        type: 'function_call',
        callId: 'call_9',
        name: 'bash',
        arguments: '{}',
        providerData: { type: 'function_call' },
      },
      {
        type: 'function_call_result',
        name: 'bash',
        callId: 'call_9',
        status: 'completed',
        output: { type: 'text', text: NO_RESULT },
      },
      {
        type: 'compaction',
        id: 'cmp_1',
        encrypted_content: 'blob',
        providerData: { type: 'compaction', id: 'cmp_1' },
      },
    ]);
    expect(callsOf(input).get('call_9')).toEqual({ name: 'bash', namespace: undefined });
    // The rendered context of a session the adapter wrote maps back too.
    const rows = toResponsesItems(sdkItems()).map((content, seq) => ({
      seq,
      role: 'user' as const,
      kind: 'message' as const,
      content,
      contentVersion: null,
      hasThinking: false,
      pinned: false,
    }));
    const rendered = renderResponsesContext({ rows: rows as never, checkpoint: null, archivedSystem: [] });
    expect(json(toAgentItems(rendered.input))).toEqual(json(sdkItems()));
  });

  it('drops nothing without a word: what cannot be stored whole is refused, naming the field', () => {
    const refused = (items: unknown[], calls = new Map<string, { name: string }>()) => {
      try {
        toResponsesItems(items as AgentInputItem[], calls);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    const call = { type: 'function_call', callId: 'c1', name: 'read_file', arguments: '{}' };
    expect(
      refused([
        call,
        { type: 'function_call_result', name: 'write_file', callId: 'c1', status: 'completed', output: 'x' },
      ]),
    ).toMatch(/^items\[1\]\.name: "write_file" is not the name of its call \("read_file"\)/);
    expect(
      refused([
        { type: 'function_call_result', name: 'read_file', callId: 'c2', status: 'completed', output: 'x' },
      ]),
    ).toMatch(/^items\[0\]\.callId: no function_call with call_id "c2"/);
    expect(refused([{ type: 'hosted_tool_call', name: 'web_search_call', id: 'ws_1' }])).toMatch(
      /^items\[0\]\.type: the compactor session stores .* not "hosted_tool_call"/,
    );
    expect(refused([{ type: 'message', role: 'user', content: 'hi', mood: 'happy' }])).toMatch(
      /^items\[0\]\.mood: a user message has no field "mood"/,
    );
    expect(
      refused([{ type: 'message', role: 'user', content: [{ type: 'audio', audio: 'UklGRg==' }] }]),
    ).toMatch(/^items\[0\]\.content\[0\]\.type: expected input_text, input_image or input_file/);
    expect(
      refused([
        call,
        {
          type: 'function_call_result',
          name: 'read_file',
          callId: 'c1',
          status: 'completed',
          output: { type: 'text', text: 'x', providerData: { cached: true } },
        },
      ]),
    ).toMatch(/^items\[1\]\.output\.providerData: the SDK sends nothing of it here/);
    expect(refused([{ type: 'compaction', encrypted_content: 'b', providerData: { note: 'mine' } }])).toMatch(
      /^items\[0\]\.providerData\.note: the SDK sends nothing of a compaction item/,
    );
    expect(
      refused([{ type: 'message', role: 'assistant', status: 'completed', content: [], phase: 'x' }]),
    ).toMatch(/^items\[0\]\.phase: expected "commentary" or "final_answer"/);
  });

  it('leaves out only what the SDK never sends', () => {
    const [stored] = toResponsesItems([
      {
        id: 'FAKE_ID',
        type: 'function_call',
        callId: 'c1',
        name: 'f',
        arguments: '{}',
        providerData: { id: 'other', type: 'function', callId: 'c9', traceTag: 'kept' },
      },
    ] as AgentInputItem[]);
    expect(stored).toEqual({
      type: 'function_call',
      name: 'f',
      call_id: 'c1',
      arguments: '{}',
      trace_tag: 'kept',
    });
    const [compaction] = toResponsesItems([
      { type: 'compaction', id: 'cmp_1', encrypted_content: 'blob', created_by: 'server' },
    ] as AgentInputItem[]);
    expect(compaction).toEqual({ type: 'compaction', id: 'cmp_1', encrypted_content: 'blob' });
  });
});

describe("a run's last request", () => {
  it('gives its prompt tokens and cache reads, skipping the SDK compaction endpoint', () => {
    expect(lastRequestTokens(undefined)).toEqual({});
    expect(
      lastRequestTokens({
        requestUsageEntries: [
          { inputTokens: 100, inputTokensDetails: { cached_tokens: 0 } },
          { inputTokens: 900, inputTokensDetails: { cached_tokens: 800 }, endpoint: 'responses.create' },
          { inputTokens: 50, endpoint: 'responses.compact' },
        ],
      }),
    ).toEqual({ inputTokens: 900, cacheReadTokens: 800 });
    expect(
      lastRequestTokens({
        requestUsageEntries: [{ inputTokens: 10, inputTokensDetails: { cached_tokens: 20 } }],
      }),
    ).toEqual({ inputTokens: 10 });
  });
});
