/**
 * The pure rules of the `openai-responses` format: what a Responses input item must be, what is read
 * off it, the context rules (every call answered, no output without its call, reasoning only before
 * the item it produced and with its encrypted content, nothing before the newest compaction item,
 * the summary a user message), checked against the strict fake server's own rule check; the
 * clearing of outputs, inputs and reasoning; and the import of request logs and Agents SDK items.
 */
import { describe, expect, it } from 'vitest';
import type { ContextRow } from '../../shared/context/render.ts';
import { NO_RESULT, SUMMARY_INTRO } from '../../shared/context/render.ts';
import type { StoredContent } from '../../shared/contract/blocks.ts';
import { TranscriptError } from '../../shared/contract/errors.ts';
import {
  clearedReasoning,
  clearedResponsesInput,
  clearedResponsesOutput,
} from '../../shared/formats/openai-responses/clearing.ts';
import { pairCalls, renderResponsesContext } from '../../shared/formats/openai-responses/context.ts';
import {
  type ResponsesItem,
  responsesFacts,
  responsesItemProblem,
} from '../../shared/formats/openai-responses/item.ts';
import { parseResponsesLog } from '../../shared/formats/openai-responses/transcript.ts';
import { detectFormat, foreignWord, readsAs } from '../../shared/formats/registry.ts';
import { issuedState, responsesInputError } from '../support/fake-openai-responses.ts';

const state = issuedState();
const user = (text: string): ResponsesItem => ({ role: 'user', content: text });
const call = (id: string): ResponsesItem => ({
  type: 'function_call',
  id: `fc_${id}`,
  call_id: id,
  name: 'bash',
  arguments: '{"cmd":"ls"}',
});
const output = (id: string, text = `out ${id}`): ResponsesItem => ({
  type: 'function_call_output',
  call_id: id,
  output: text,
});
const reasoning = (id: string): ResponsesItem => ({
  type: 'reasoning',
  id,
  summary: [{ type: 'summary_text', text: `thinking ${id}` }],
  encrypted_content: state.sign('reasoning', id),
});
const said = (text: string, id?: string): ResponsesItem => ({
  type: 'message',
  role: 'assistant',
  ...(id ? { id } : {}),
  content: [{ type: 'output_text', text, annotations: [] }],
});
const compactionItem = (id: string): ResponsesItem => ({
  type: 'compaction',
  id,
  encrypted_content: state.sign('compaction', id),
});

const rows = (items: ResponsesItem[]): ContextRow[] =>
  items.map((item, seq) => ({
    seq,
    role: responsesFacts(item).role,
    kind: responsesFacts(item).kind,
    content: item as unknown as StoredContent,
    pinned: false,
  }));
const render = (items: ResponsesItem[]) =>
  renderResponsesContext({ rows: rows(items), checkpoint: null, archivedSystem: [] }).input;

describe('responsesItemProblem', () => {
  it.each([
    [
      { type: 'function_call', call_id: 'c', name: 'f', arguments: { a: 1 } },
      'm.arguments',
      /expected a string/,
    ],
    [{ type: 'function_call', name: 'f', arguments: '{}' }, 'm.call_id', /call_id string/],
    [{ type: 'function_call_output', call_id: 'c' }, 'm.output', /./],
    [{ type: 'reasoning', id: 'rs_1' }, 'm.summary', /summary_text parts/],
    [{ type: 'compaction', id: 'cmp_1' }, 'm.encrypted_content', /opaque string/],
    [{ role: 'tool', content: 'x' }, 'm.role', /expected one of "user", "system", "developer", "assistant"/],
    [{ role: 'user', content: [{ type: 'input_image' }] }, 'm.content[0]', /needs image_url .* or file_id/],
    [{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }, 'm.content[0].type', /./],
    [{ type: 'item_reference', id: 'msg_1' }, 'm.type', /points at an item OpenAI stored/],
    [{ type: 'compaction_trigger' }, 'm.type', /final input item/],
    [{ type: 'frobnicate' }, 'm.type', /expected a Responses input item type/],
    [{ type: 'reasoning', summary: [], content: 'x' }, 'm.content', /./],
    [{ type: 'local_shell_call', id: 'lsh_1', action: {} }, 'm.call_id', /call_id string/],
    [{ type: 'local_shell_call_output', output: 'x' }, 'm.id', /the local shell call's call_id/],
    ['hello', 'm', /expected a Responses input item object/],
  ])('refuses %j at %s', (item, field, error) => {
    const problem = responsesItemProblem(item, 'm');
    expect(problem?.field).toBe(field);
    expect(problem?.message).toMatch(error);
  });

  it.each([
    user('hi'),
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be terse' }] },
    said('done', 'msg_1'),
    { ...said('x'), phase: 'final_answer' },
    call('c1'),
    output('c1'),
    { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'x' }] },
    reasoning('rs_1'),
    compactionItem('cmp_1'),
    { type: 'custom_tool_call', call_id: 'c2', name: 'patch', input: '*** Begin' },
    { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
    // As OpenAI's Codex CLI replays its items: reasoning without an id and with `content: null`, a
    // web search without an id and with `action.queries`, an assistant message with a `phase`.
    { type: 'reasoning', summary: [], content: null, encrypted_content: 'gAAAA' },
    { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'x', queries: ['x'] } },
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'x' }],
      phase: 'commentary',
    },
    { type: 'custom_tool_call', status: 'completed', call_id: 'c3', name: 'apply_patch', input: '*** Begin' },
    // As the API returns a server-side tool search: `arguments` an object, `call_id` null.
    {
      type: 'tool_search_call',
      id: 'tsc_1',
      call_id: null,
      execution: 'server',
      status: 'completed',
      arguments: { queries: ['w'] },
    },
    {
      type: 'tool_search_output',
      id: 'tso_1',
      call_id: null,
      execution: 'server',
      status: 'completed',
      tools: [],
    },
    { type: 'additional_tools', role: 'developer', tools: [{ type: 'function', name: 'f', parameters: {} }] },
    {
      type: 'local_shell_call',
      id: 'lsh_1',
      call_id: 'c4',
      status: 'completed',
      action: { type: 'exec', command: ['ls'], env: {} },
    },
    { type: 'local_shell_call_output', id: 'c4', output: '{"stdout":"a"}' },
  ])('accepts %j', (item) => {
    expect(responsesItemProblem(item, 'm')).toBeNull();
  });

  it('reads a row off each item: pairs by call_id, reasoning as thinking, developer as system', () => {
    expect(responsesFacts(call('c1'))).toMatchObject({
      role: 'assistant',
      kind: 'tool_call',
      toolUseIds: ['c1'],
      toolName: 'bash',
      thinking: false,
      text: '{"name":"bash","arguments":{"cmd":"ls"}}',
    });
    expect(responsesFacts(output('c1'))).toMatchObject({
      role: 'tool',
      kind: 'tool_result',
      toolResultIds: ['c1'],
    });
    expect(responsesFacts(reasoning('rs_1'))).toMatchObject({
      role: 'assistant',
      thinking: true,
      text: '[reasoning] thinking rs_1',
    });
    expect(responsesFacts({ type: 'message', role: 'developer', content: 'x' }).role).toBe('system');
  });

  it("pairs the client tools' calls with their outputs, and hosted tools' items with nothing", () => {
    const shell = { type: 'local_shell_call', id: 'lsh_1', call_id: 'c4', status: 'completed', action: {} };
    expect(responsesFacts(shell)).toMatchObject({ kind: 'tool_call', toolUseIds: ['c4'] });
    expect(responsesFacts({ type: 'local_shell_call_output', id: 'c4', output: 'a' })).toMatchObject({
      role: 'tool',
      kind: 'tool_result',
      toolResultIds: ['c4'],
    });
    expect(responsesFacts({ type: 'apply_patch_call', call_id: 'c5', operation: {} })).toMatchObject({
      kind: 'tool_call',
      toolUseIds: ['c5'],
    });
    for (const hosted of [
      { type: 'tool_search_call', id: 'tsc_1', call_id: null, execution: 'server', arguments: {} },
      { type: 'tool_search_output', id: 'tso_1', call_id: null, execution: 'server', tools: [] },
      { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'x' } },
    ]) {
      expect(responsesFacts(hosted)).toMatchObject({ kind: 'message', toolUseIds: [], toolResultIds: [] });
    }
    // A tool search the agent runs itself is its call to answer.
    const search = { type: 'tool_search_call', call_id: 'c6', execution: 'client', arguments: {} };
    expect(responsesFacts(search)).toMatchObject({ kind: 'tool_call', toolUseIds: ['c6'] });
    expect(
      responsesFacts({ type: 'tool_search_output', call_id: 'c6', execution: 'client', tools: [] }),
    ).toMatchObject({ kind: 'tool_result', toolResultIds: ['c6'] });
    expect(responsesItemProblem({ ...search, call_id: null }, 'm')?.field).toBe('m.call_id');
  });
});

describe('what shows a Responses item', () => {
  // An Anthropic Message as the Messages API returns it: `type: "message"` too.
  const anthropicReply = {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: 'hello' }],
    model: 'claude-haiku-4-5',
    stop_reason: 'end_turn',
  };

  it('a Responses-only type or part marks an item in another session; an Anthropic Message is no Responses item', () => {
    expect(foreignWord('anthropic', call('c1'), 'm')).toBe(
      'm.type: "function_call" is an OpenAI Responses input item',
    );
    expect(foreignWord('openai-chat', said('x'), 'm')).toMatch(/^m\.type: "message" is /);
    expect(foreignWord('anthropic', said('x'), 'm')).toBe(
      'm.content[0].type: "output_text" is an OpenAI Responses content part',
    );
    expect(foreignWord('anthropic', { type: 'message', role: 'user', content: 'hi' }, 'm')).toBeNull();
    expect(foreignWord('anthropic', anthropicReply, 'm')).toBeNull();
    expect(readsAs('openai-responses', call('c1'))).toBe(true);
    expect(readsAs('openai-responses', anthropicReply)).toBe(false);
  });

  it('detects a log of items or requests, and still reads a logged Anthropic Message as anthropic', () => {
    expect(detectFormat(JSON.stringify(anthropicReply), 'f')).toBe('anthropic');
    expect(detectFormat(JSON.stringify(said('x')), 'f')).toBe('openai-responses');
    expect(detectFormat(JSON.stringify(call('c1')), 'f')).toBe('openai-responses');
    expect(detectFormat(JSON.stringify({ model: 'm', input: 'hi' }), 'f')).toBe('openai-responses');
  });
});

describe('renderResponsesContext', () => {
  it('sends a valid history exactly as stored, and the strict fake accepts it', () => {
    const items = [
      { role: 'system', content: 'You are careful.' },
      user('fix it'),
      reasoning('rs_1'),
      call('c1'),
      output('c1'),
      reasoning('rs_2'),
      said('fixed', 'msg_2'),
    ];
    const input = render(items);
    expect(input).toEqual(items);
    expect(input[2]).toBe(items[2]);
    expect(responsesInputError(input, state, false)).toBeNull();
  });

  it('answers a call the session moved on from, and turns an orphan output into user text', () => {
    const input = render([user('a'), call('c1'), user('b'), output('c9', 'lost')]);
    expect(input).toEqual([
      user('a'),
      call('c1'),
      { type: 'function_call_output', call_id: 'c1', output: NO_RESULT },
      user('b'),
      {
        type: 'message',
        role: 'user',
        content: '[A tool output whose call is not in this conversation (call_id c9)]\nlost',
      },
    ]);
    expect(responsesInputError(input, state, false)).toBeNull();
  });

  it("sends hosted tools' items as they are, answering none of them", () => {
    const items = [
      user('find the weather tool'),
      reasoning('rs_1'),
      { type: 'tool_search_call', id: 'tsc_1', call_id: null, execution: 'server', arguments: { q: 'w' } },
      { type: 'tool_search_output', id: 'tso_1', call_id: null, execution: 'server', tools: [] },
      { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'w' } },
      { type: 'additional_tools', role: 'developer', tools: [] },
      said('done', 'msg_1'),
    ];
    const input = render(items);
    expect(input).toEqual(items);
    expect(responsesInputError(input, state, false)).toBeNull();
  });

  it('answers each client tool the session moved on from with its own output type', () => {
    const calls: ResponsesItem[] = [
      { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin' },
      { type: 'local_shell_call', id: 'lsh_1', call_id: 'c2', status: 'completed', action: {} },
      { type: 'shell_call', call_id: 'c3', action: { commands: ['ls'] } },
      { type: 'apply_patch_call', call_id: 'c4', operation: { type: 'delete_file', path: 'a' } },
      { type: 'tool_search_call', call_id: 'c5', execution: 'client', arguments: { q: 'x' } },
    ];
    const input = render([user('a'), ...calls, user('b')]);
    expect(input.slice(6, 11)).toEqual([
      { type: 'custom_tool_call_output', call_id: 'c1', output: NO_RESULT },
      { type: 'local_shell_call_output', id: 'c2', output: NO_RESULT },
      {
        type: 'shell_call_output',
        call_id: 'c3',
        output: [{ stdout: '', stderr: NO_RESULT, outcome: { type: 'exit', exit_code: 1 } }],
      },
      { type: 'apply_patch_call_output', call_id: 'c4', status: 'failed', output: NO_RESULT },
      { type: 'tool_search_output', call_id: 'c5', execution: 'client', status: 'completed', tools: [] },
    ]);
    expect(responsesInputError(input, state, false)).toBeNull();
    // A local shell output answers its call by `id`: one naming no call before it is an orphan.
    expect(render([user('a'), { type: 'local_shell_call_output', id: 'c9', output: 'x' }])[1]).toMatchObject({
      role: 'user',
      content: expect.stringContaining('(call_id c9)'),
    });
  });

  it('leaves the newest calls open for the agent to answer', () => {
    const input = pairCalls([user('a'), reasoning('rs_1'), call('c1'), call('c2'), output('c1')]);
    expect(input.filter((i) => i.type === 'function_call_output')).toHaveLength(1);
    expect(responsesInputError([...input, output('c2')], state, false)).toBeNull();
  });

  it('drops reasoning that lost its item or its encrypted content, and the id of the item it produced', () => {
    const cleared = clearedReasoning(reasoning('rs_2')) as ResponsesItem;
    const input = render([
      user('a'),
      reasoning('rs_1'),
      user('b'),
      cleared,
      said('ok', 'msg_2'),
      reasoning('rs_3'),
    ]);
    expect(input).toEqual([user('a'), user('b'), said('ok')]);
    expect(responsesInputError(input, state, false)).toBeNull();
  });

  it('sends nothing before the newest compaction item but the instructions and the user messages it came with', () => {
    const items = [
      { role: 'developer', content: 'rules' },
      user('old'),
      said('old answer'),
      user('kept by compact'),
      compactionItem('cmp_1'),
      user('new'),
    ];
    const input = render(items);
    expect(input).toEqual([items[0], items[3], items[4], items[5]]);
    expect(responsesInputError(input, state, false)).toBeNull();
  });

  it('puts the summary first as a user message, after the instructions and restated system text', () => {
    const summary: ContextRow = {
      seq: 5,
      role: 'user',
      kind: 'summary',
      content: 'what happened',
      pinned: false,
    };
    const [system, ...rest] = rows([{ role: 'system', content: 'rules' }, user('next')]);
    const { input } = renderResponsesContext({
      rows: [system as ContextRow, summary, { ...(rest[0] as ContextRow), seq: 6 }],
      checkpoint: null,
      archivedSystem: ['old rules'],
    });
    expect(input).toEqual([
      { role: 'system', content: 'rules' },
      { role: 'developer', content: 'old rules' },
      { type: 'message', role: 'user', content: expect.stringContaining(SUMMARY_INTRO) },
      user('next'),
    ]);
    expect(String(input[2]?.content)).toContain('<session-record>');
  });
});

describe('the strict fake Responses API', () => {
  it.each([
    [[user('a'), call('c1'), user('b')], /^No tool output found for function call c1\.$/],
    [[user('a'), output('c1')], /^No tool call found for function call output with call_id c1\.$/],
    [
      [user('a'), reasoning('rs_1'), user('b')],
      /^Item 'rs_1' of type 'reasoning' was provided without its required following item\.$/,
    ],
    [
      [user('a'), { ...reasoning('rs_1'), encrypted_content: 'forged.blob' }, said('x')],
      /could not be verified/,
    ],
    [
      [user('a'), { ...compactionItem('cmp_1'), encrypted_content: `${state.sign('compaction', 'cmp_1')}x` }],
      /could not be verified/,
    ],
    [[user('a'), { type: 'compaction_trigger' }, user('b')], /must be the final input item/],
    [
      [user('a'), { type: 'tool_search_call', call_id: 's1', execution: 'client', arguments: {} }, user('b')],
      /^No tool output found for function call s1\.$/,
    ],
    [
      [user('a'), { type: 'local_shell_call_output', id: 'l1', output: 'x' }],
      /^No tool call found for function call output with call_id l1\.$/,
    ],
  ])('refuses %j', (input, error) => {
    expect(responsesInputError(input, state, false)?.message).toMatch(error);
  });

  it('refuses reasoning without encrypted content under store: false, with a 404', () => {
    const bare = { type: 'reasoning', id: 'rs_1', summary: [] };
    expect(responsesInputError([user('a'), bare, said('x')], state, false)).toMatchObject({
      status: 404,
      message: expect.stringMatching(/Items are not persisted when `store` is set to false/),
    });
  });

  it('refuses an item it produced after reasoning, replayed by id without that reasoning', () => {
    state.reasoningOf.set('fc_c1', 'rs_1');
    expect(responsesInputError([user('a'), call('c1'), output('c1')], state)?.message).toBe(
      "Item 'fc_c1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_1'.",
    );
    expect(responsesInputError([user('a'), reasoning('rs_1'), call('c1'), output('c1')], state)).toBeNull();
    state.reasoningOf.delete('fc_c1');
  });
});

describe('clearing', () => {
  it('replaces an output, empties a cleared call input, and strips reasoning of what it carries', () => {
    expect(clearedResponsesOutput(output('c1'), '[cleared]')).toEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: '[cleared]',
    });
    expect(clearedResponsesOutput(call('c1'), 'x')).toBeNull();
    expect(clearedResponsesInput(call('c1'), new Set(['c1']))).toMatchObject({ arguments: '{}' });
    expect(clearedResponsesInput(call('c1'), new Set(['c2']))).toBeNull();
    expect(clearedReasoning(reasoning('rs_1'))).toEqual({ type: 'reasoning', id: 'rs_1', summary: [] });
    expect(clearedReasoning({ type: 'reasoning', id: 'rs_1', summary: [] })).toBeNull();
  });
});

describe('parseResponsesLog', () => {
  const items = [user('a'), reasoning('rs_1'), call('c1'), output('c1')];

  it('takes the last request of a stateless log as the session', () => {
    const log = [
      { model: 'm', input: 'a' },
      { model: 'm', input: items },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');
    expect(parseResponsesLog(log, 'log.jsonl')).toEqual(items);
    expect(parseResponsesLog(JSON.stringify({ model: 'm', input: 'hi' }), 'log.jsonl')).toEqual([
      { role: 'user', content: 'hi' },
    ]);
  });

  it('reads Agents SDK session items, as a JSON array or one per line', () => {
    expect(parseResponsesLog(JSON.stringify(items, null, 2), 'items.json')).toEqual(items);
    expect(parseResponsesLog(items.map((i) => JSON.stringify(i)).join('\n'), 'items.jsonl')).toEqual(items);
  });

  it.each([
    [
      [
        { model: 'm', input: items },
        { model: 'm', previous_response_id: 'resp_1', input: [user('b')] },
      ],
      /^log:2: previous_response_id: this request sends only the items after response "resp_1"/,
    ],
    [
      [{ model: 'm', input: [user('a'), { type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }],
      /^log:1: input\[1\]: arguments: expected a string/,
    ],
    [
      [
        {
          type: 'function_call_result',
          callId: 'c',
          name: 'f',
          status: 'completed',
          output: { type: 'text', text: 'x' },
        },
      ],
      /^log:1: callId: an item of the OpenAI Agents SDK for JavaScript/,
    ],
    [[{ model: 'm', input: [] }], /^log:1: input: no items/],
  ])('refuses %j', (lines, error) => {
    const text = lines.map((l) => JSON.stringify(l)).join('\n');
    expect(() => parseResponsesLog(text, 'log')).toThrow(TranscriptError);
    expect(() => parseResponsesLog(text, 'log')).toThrow(error);
  });
});
