/**
 * The fake Messages API speaks on-demand compaction (beta `compact-2026-09-04`) as documented, over
 * real HTTP through the real SDK: the block and its usage, every documented refusal, and the kept
 * turns' thinking surviving the block exactly when the docs' "Compaction and preserved thinking"
 * conditions hold. Tests of compactor's own use of on-demand compaction lean on this.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { BetaMessage, BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPACTION_BETA,
  type CompactionStopReason,
  compactionSupported,
  FakeAnthropicServer,
  preservesThinking,
  THINKING_BINDING_BETA,
} from '../support/fake-anthropic.ts';
import { ADAPTIVE_THINKING } from '../support/models.ts';

const fake = new FakeAnthropicServer();
const strictFake = new FakeAnthropicServer({ strict: true });
let client: Anthropic;
let strictClient: Anthropic;
const closers: Array<() => Promise<void>> = [];

const MODEL = 'claude-opus-4-6';
const system = 'You are a coding agent.';
const tools = [{ name: 'bash', description: 'run a command', input_schema: { type: 'object' as const } }];
// Adaptive: the form the SDK and the docs recommend on Opus 4.6 (manual thinking is deprecated there).
const thinking = ADAPTIVE_THINKING;

beforeAll(async () => {
  for (const [server, set] of [
    [fake, (c: Anthropic) => (client = c)],
    [strictFake, (c: Anthropic) => (strictClient = c)],
  ] as const) {
    const started = await server.start();
    closers.push(started.close);
    set(new Anthropic({ apiKey: 'test', baseURL: started.url, maxRetries: 0 }));
  }
});

afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
});

type Params = Partial<Anthropic.Beta.Messages.MessageCreateParamsNonStreaming>;

/** A request with the compaction beta (and whatever else `params` sets). */
function request(messages: BetaMessageParam[], params: Params = {}, on = client): Promise<BetaMessage> {
  return on.beta.messages.create({
    model: MODEL,
    max_tokens: 4096,
    system,
    tools,
    thinking,
    messages,
    betas: [COMPACTION_BETA],
    ...params,
  });
}

/** A compaction request over `messages`. */
function compact(messages: BetaMessageParam[], params: Params = {}, on = client): Promise<BetaMessage> {
  return request(messages, { compaction: { type: 'summarize' }, ...params }, on);
}

/** The block of a compaction answer, as it is sent back. */
function blockOf(answer: BetaMessage): Anthropic.Beta.Messages.BetaCompactionBlockParam {
  expect(answer.stop_reason).toBe('compaction');
  const [block] = answer.content as unknown as Array<{
    type: 'compaction';
    content: string;
    signature: string;
  }>;
  if (!block) throw new Error('no compaction block');
  return block;
}

/** The assistant message of its own that carries the block on later requests. */
const own = (block: Anthropic.Beta.Messages.BetaCompactionBlockParam): BetaMessageParam => ({
  role: 'assistant',
  content: [block],
});

/** The request's rejection: status, `error_code` and message. */
async function refusal(
  promise: Promise<unknown>,
): Promise<{ status: number; code: string | null; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof Anthropic.APIError)) throw new Error(`expected an API error, got ${String(error)}`);
  return { status: error.status ?? 0, code: error.errorCode, message: error.apiMessage ?? '' };
}

/**
 * An agent session run against `server` with thinking on, every reply sent back as received:
 * u0, a0 (tool), u1 (result), a1 (end_turn), u2 ... then `lastUser` and one more tool round a2, u3.
 * Every assistant turn's thinking is signed by the fake over what came before it.
 */
async function session(
  options: { splitLastUser?: boolean; on?: Anthropic; server?: FakeAnthropicServer; model?: string } = {},
): Promise<BetaMessageParam[]> {
  const on = options.on ?? client;
  const server = options.server ?? fake;
  const messages: BetaMessageParam[] = [
    { role: 'user', content: 'Fix the failing test in src/app.ts please' },
  ];
  const turn = async (reply: {
    thinking: string;
    text: string;
    toolUse?: Array<{ name: string; input: Record<string, unknown> }>;
  }) => {
    server.enqueue({ reply });
    const answer = await request(messages, { model: options.model ?? MODEL }, on);
    messages.push({
      role: 'assistant',
      content: answer.content as Anthropic.Beta.Messages.BetaContentBlockParam[],
    });
    return answer.content.find((b) => b.type === 'tool_use')?.id;
  };
  const first = await turn({
    thinking: 'run the test',
    text: 'Running it.',
    toolUse: [{ name: 'bash', input: { command: 'npx vitest run test/app.test.ts' } }],
  });
  messages.push({
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: String(first), content: 'FAIL test/app.test.ts: expected 2' },
    ],
  });
  await turn({ thinking: 'the off-by-one in src/app.ts', text: 'Fixed the off-by-one in src/app.ts.' });
  if (options.splitLastUser) {
    messages.push({ role: 'user', content: 'Thanks.' });
    messages.push({ role: 'user', content: 'Now update /docs/notes.md too.' });
  } else {
    messages.push({ role: 'user', content: 'Thanks. Now update /docs/notes.md too.' });
  }
  const second = await turn({
    thinking: 'edit the notes',
    text: 'Editing.',
    toolUse: [{ name: 'bash', input: { command: 'vim /docs/notes.md' } }],
  });
  messages.push({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: String(second), content: 'saved' }],
  });
  return messages;
}

describe('a compaction request', () => {
  it('answers one signed block, stop_reason compaction, and bills the call in usage.iterations', async () => {
    const messages = await session();
    const answer = await compact(messages, {
      compaction: { type: 'summarize', instructions: 'Keep file paths.' },
    });
    expect(answer.content).toHaveLength(1);
    const block = blockOf(answer);
    expect(Object.keys(block).sort()).toEqual(['content', 'signature', 'type']);
    expect(block.signature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(block.content).toContain('Summary of 7 messages (4 user, 3 assistant).');
    expect(block.content).toContain('First user request: Fix the failing test in src/app.ts please');
    expect(block.content).toContain('Latest user message: Thanks. Now update /docs/notes.md too.');
    expect(block.content).toMatch(/Files: .*src\/app\.ts/);
    expect(block.content).toMatch(/Files: .*\/docs\/notes\.md/);
    expect(block.content).toMatch(/Files: .*test\/app\.test\.ts/);
    expect(block.content).toContain('Instructions followed: Keep file paths.');
    const usage = answer.usage as unknown as Record<string, unknown>;
    expect(usage).toMatchObject({
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
    const [iteration] = usage.iterations as Array<Record<string, number | string>>;
    expect(iteration).toMatchObject({
      type: 'compaction',
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
    // ~4 characters per token, like the rest of the fake.
    const sent = JSON.stringify(messages).length / 4;
    expect(iteration?.input_tokens).toBeGreaterThan(sent * 0.5);
    expect(iteration?.input_tokens).toBeLessThan(sent * 2);
    expect(iteration?.output_tokens).toBe(Math.ceil((block.content ?? '').length / 4));
  });

  it('is deterministic: the same request gives the same block', async () => {
    const messages = await session();
    expect(blockOf(await compact(messages))).toEqual(blockOf(await compact(messages)));
  });

  it('may end with an assistant turn; a normal request may not', async () => {
    const messages = await session();
    const upToReply = messages.slice(0, 4);
    expect(upToReply[3]?.role).toBe('assistant');
    blockOf(await compact(upToReply));
    expect((await refusal(request(upToReply))).message).toMatch(/prefill/);
  });

  it('takes several betas in one header', async () => {
    const messages = await session();
    blockOf(await compact(messages, { betas: [THINKING_BINDING_BETA, COMPACTION_BETA] }));
  });

  it('compacts on any model id, and records what the API would say of it', async () => {
    const messages = await session();
    blockOf(await compact(messages, { model: 'claude-test' }));
    expect(fake.compactions.at(-1)).toMatchObject({
      model: 'claude-test',
      modelSupported: false,
      summarized: 7,
    });
    blockOf(await compact(messages, { model: 'claude-sonnet-5-5' }));
    expect(fake.compactions.at(-1)).toMatchObject({ modelSupported: true, preservesThinking: true });
  });

  it('answers content [] with stop_reason max_tokens when the summary does not fit max_tokens', async () => {
    const answer = await compact(await session(), { max_tokens: 5, thinking: { type: 'disabled' } });
    expect(answer.stop_reason).toBe('max_tokens');
    expect(answer.content).toEqual([]);
  });

  it.each<CompactionStopReason>([
    'max_tokens',
    'model_context_window_exceeded',
    'tool_use',
    'refusal',
    'end_turn',
  ])(
    'scripted { compactionStop: %s } answers 200, content [] and that stop reason, still billed',
    async (stop) => {
      const messages = await session();
      fake.enqueue({ compactionStop: stop });
      const answer = await compact(messages);
      expect(answer.stop_reason).toBe(stop);
      expect(answer.content).toEqual([]);
      const usage = answer.usage as unknown as {
        input_tokens: number;
        iterations: Array<{ type: string; input_tokens: number }>;
      };
      expect(usage.input_tokens).toBe(0);
      expect(usage.iterations[0]?.type).toBe('compaction');
      expect(usage.iterations[0]?.input_tokens).toBeGreaterThan(0);
    },
  );

  it("scripted 'compaction-unavailable' answers 529 overloaded_error with error_code compaction_unavailable", async () => {
    const messages = await session();
    fake.enqueue('compaction-unavailable');
    const error = await compact(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const apiError = error as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).toBe(529);
    expect(apiError.type).toBe('overloaded_error');
    expect(apiError.errorCode).toBe('compaction_unavailable');
  });

  it('without the beta header: 400, compaction requires anthropic-beta: compact-2026-09-04', async () => {
    const messages = await session();
    const params = {
      model: MODEL,
      max_tokens: 4096,
      system,
      tools,
      messages,
      compaction: { type: 'summarize' },
    };
    const result = await refusal(
      client.messages.create(params as unknown as Anthropic.MessageCreateParamsNonStreaming),
    );
    expect(result.status).toBe(400);
    expect(result.message).toMatch(/compaction.*requires anthropic-beta: compact-2026-09-04/);
  });

  it.each<[string, Params, RegExp]>([
    [
      'an extra field',
      { compaction: { type: 'summarize', model: 'x' } as never },
      /^compaction\.model: Extra inputs are not permitted/,
    ],
    ['another type', { compaction: { type: 'clear' } as never }, /^compaction\.type/],
    [
      'blank instructions',
      { compaction: { type: 'summarize', instructions: '  ' } },
      /^compaction\.instructions/,
    ],
    [
      'instructions over 16,384 characters',
      { compaction: { type: 'summarize', instructions: 'x'.repeat(16_385) } },
      /16384/,
    ],
    ['stop_sequences', { stop_sequences: ['END'] }, /^stop_sequences/],
    [
      'output_config.format',
      { output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } },
      /^output_config\.format/,
    ],
    ["tool_choice 'any'", { tool_choice: { type: 'any' } }, /^tool_choice/],
    ["tool_choice 'tool'", { tool_choice: { type: 'tool', name: 'bash' } }, /^tool_choice/],
    ['context_management', { context_management: { edits: [] } } as Params, /^context_management/],
  ])('refuses %s with a 400', async (_, params, message) => {
    const messages = await session();
    const result = await refusal(compact(messages, { thinking: { type: 'disabled' }, ...params }));
    expect(result).toMatchObject({ status: 400, code: null });
    expect(result.message).toMatch(message);
  });

  it('accepts instructions of exactly 16,384 characters and tool_choice auto', async () => {
    const messages = await session();
    const instructions = 'y'.repeat(16_384);
    blockOf(
      await compact(messages, {
        compaction: { type: 'summarize', instructions },
        tool_choice: { type: 'auto' },
      }),
    );
  });

  it('refuses a request whose last assistant turn ends in a tool call with no result yet', async () => {
    const messages = (await session()).slice(0, -1);
    const result = await refusal(compact(messages));
    expect(result).toMatchObject({ status: 400, code: null });
    expect(result.message).toMatch(/tool call with no result yet/);
  });

  it('answers compaction_nothing_to_summarize for blank content or only the previous block', async () => {
    const blank = await refusal(
      compact([{ role: 'user', content: '   ' }], { thinking: { type: 'disabled' } }),
    );
    expect(blank).toMatchObject({ status: 400, code: 'compaction_nothing_to_summarize' });
    const block = blockOf(await compact(await session()));
    const onlyBlock = await refusal(compact([own(block)]));
    expect(onlyBlock).toMatchObject({ status: 400, code: 'compaction_nothing_to_summarize' });
  });
});

describe('a later request carrying the block', () => {
  /** A session, its block for the messages before `cut`, and the kept turns. */
  async function compacted(cut: number, params: Params = {}) {
    const messages = await session();
    const block = blockOf(await compact(messages.slice(0, cut), params));
    return { messages, block, kept: messages.slice(cut) };
  }

  it('without the beta header: 400, compaction is not one of the expected content block types', async () => {
    const { block, kept } = await compacted(4);
    const result = await refusal(
      client.messages.create({
        model: MODEL,
        max_tokens: 4096,
        system,
        tools,
        thinking,
        messages: [own(block), ...kept] as unknown as Anthropic.MessageParam[],
      }),
    );
    expect(result).toMatchObject({ status: 400, code: null });
    expect(result.message).toBe(
      "messages.0.content.0.type: 'compaction' is not one of the expected content block types",
    );
  });

  it('answers compaction_block_misplaced when summarized messages are left in front of the block', async () => {
    const { messages, block, kept } = await compacted(4);
    const behind = await refusal(request([messages[0] as BetaMessageParam, own(block), ...kept]));
    expect(behind).toMatchObject({ status: 400, code: 'compaction_block_misplaced' });
    const second = await refusal(
      request([{ role: 'user', content: [{ type: 'text', text: 'hi' }, block] }, ...kept]),
    );
    expect(second).toMatchObject({ status: 400, code: 'compaction_block_misplaced' });
  });

  it('answers a 400 with no error_code to two blocks', async () => {
    const { block, kept } = await compacted(4);
    const result = await refusal(
      request([own(block), ...kept.slice(0, 2), { role: 'assistant', content: [block] }, ...kept.slice(2)]),
    );
    expect(result).toMatchObject({ status: 400, code: null });
    expect(result.message).toMatch(/exactly one `compaction` block/);
  });

  it('answers compaction_content_mismatch to an edited summary', async () => {
    const { block, kept } = await compacted(4);
    const edited = { ...block, content: `${block.content}\nAlso: nothing.` };
    expect(await refusal(request([own(edited), ...kept]))).toMatchObject({
      status: 400,
      code: 'compaction_content_mismatch',
    });
  });

  it('answers compaction_signature_invalid to a signature that does not verify', async () => {
    const { block, kept } = await compacted(4);
    const raw = JSON.parse(Buffer.from(String(block.signature), 'base64').toString('utf8')) as Record<
      string,
      unknown
    >;
    const forged = Buffer.from(JSON.stringify({ ...raw, preserved: !raw.preserved })).toString('base64');
    for (const signature of ['', 'not-a-signature', forged]) {
      const result = await refusal(request([own({ ...block, signature }), ...kept]));
      expect(result).toMatchObject({ status: 400, code: 'compaction_signature_invalid' });
    }
  });

  it('refuses a field the block did not have', async () => {
    const { block, kept } = await compacted(4);
    const result = await refusal(request([own({ ...block, citations: null } as never), ...kept]));
    expect(result.message).toMatch(/citations: Extra inputs are not permitted/);
  });
});

describe("the kept turns' thinking through a compaction block", () => {
  it('survives a cut where the next kept message is a user turn after a summarized reply', async () => {
    const messages = await session();
    const block = blockOf(await compact(messages.slice(0, 4)));
    const next = [own(block), ...messages.slice(4)];
    // [block, u "Thanks. Now update...", a (thinking, tool_use), u (tool_result)]
    fake.enqueue({ reply: { thinking: 'notes done', text: 'Done.' } });
    const answer = await request(next);
    expect(answer.stop_reason).toBe('end_turn');
    // Thinking produced after the block is bound to it: the next request verifies it.
    next.push({
      role: 'assistant',
      content: answer.content as Anthropic.Beta.Messages.BetaContentBlockParam[],
    });
    next.push({ role: 'user', content: 'Thanks!' });
    await expect(request(next)).resolves.toMatchObject({ type: 'message' });
  });

  it('survives a cut after a user turn, the kept reply right after the block (strict: two assistant messages)', async () => {
    const messages = await session({ on: strictClient, server: strictFake });
    const block = blockOf(await compact(messages.slice(0, 5), {}, strictClient));
    // The kept reply is an assistant message right after the block's own assistant message.
    await expect(request([own(block), ...messages.slice(5)], {}, strictClient)).resolves.toMatchObject({
      type: 'message',
    });
    // Or the block leads the kept reply's own message.
    const reply = messages[5] as {
      role: 'assistant';
      content: Anthropic.Beta.Messages.BetaContentBlockParam[];
    };
    const lead: BetaMessageParam = { role: 'assistant', content: [block, ...reply.content] };
    await expect(request([lead, ...messages.slice(6)], {}, strictClient)).resolves.toMatchObject({
      type: 'message',
    });
  });

  it('strict mode still refuses an assistant first message without the block, and three in a row', async () => {
    const messages = await session({ on: strictClient, server: strictFake });
    const block = blockOf(await compact(messages.slice(0, 5), {}, strictClient));
    const first = await refusal(request(messages.slice(5), {}, strictClient));
    expect(first.message).toMatch(/first message must use the "user" role/);
    const reply = messages[5] as BetaMessageParam;
    const three = await refusal(request([own(block), reply, reply, ...messages.slice(6)], {}, strictClient));
    expect(three.message).toMatch(/roles must alternate/);
  });

  it('survives compacting again: the new block holds the old summary and everything after it', async () => {
    const messages = await session();
    const first = blockOf(await compact(messages.slice(0, 4)));
    const afterFirst = [own(first), ...messages.slice(4)];
    const second = blockOf(await compact(afterFirst.slice(0, 2)));
    expect(second.content).toContain('Summary of 1 message (1 user, 0 assistant).');
    expect(second.content).toContain('Earlier summary:');
    expect(second.content).toContain(`  ${(first.content ?? '').split('\n')[0]}`);
    await expect(request([own(second), ...afterFirst.slice(2)])).resolves.toMatchObject({ type: 'message' });
  });

  it.each<[string, { split?: boolean; compaction?: Params; later?: Params }]>([
    ['the next kept message has the role of the last summarized one', { split: true }],
    [
      'the compaction request had other tools',
      { compaction: { tools: [...tools, { name: 'grep', input_schema: { type: 'object' } }] } },
    ],
    [
      'the compaction request had another system prompt',
      { compaction: { system: 'You are a careful coding agent.' } },
    ],
    [
      'the compaction ran on a model without preserved thinking (Haiku)',
      { compaction: { model: 'claude-haiku-4-5' } },
    ],
  ])(
    'fails when %s: 400 bound to a different conversation, or the drop with drop_block',
    async (_, setup) => {
      const messages = await session({ splitLastUser: setup.split });
      // Split: [u, a, u(result), a, u "Thanks.", u "Now update...", a, u(result)]: cut between the two users.
      const cut = setup.split ? 5 : 4;
      expect(messages[cut - 1]?.role).toBe(setup.split ? 'user' : 'assistant');
      const block = blockOf(await compact(messages.slice(0, cut), setup.compaction));
      const next = [own(block), ...messages.slice(cut)];
      const result = await refusal(request(next));
      expect(result.status).toBe(400);
      expect(result.message).toMatch(
        /^messages\.2\.content\.0: Invalid `signature` in `thinking` block\. The block is bound to a different conversation/,
      );
      const dropped = await request(next, {
        betas: [COMPACTION_BETA, THINKING_BINDING_BETA],
        thinking: { ...thinking, block_binding: { prefix_mismatch_behavior: 'drop_block' } } as never,
      });
      expect((dropped as unknown as { input_transformations: unknown[] }).input_transformations).toEqual([
        { type: 'thinking_dropped', reason: 'prefix_binding_mismatch', path: 'messages.2.content.0' },
      ]);
    },
  );

  it('fails when a system message sits between the block and the kept turns', async () => {
    const messages = await session();
    const block = blockOf(await compact(messages.slice(0, 4)));
    const system_: BetaMessageParam = { role: 'system', content: 'Be brief.' } as unknown as BetaMessageParam;
    const result = await refusal(request([own(block), system_, ...messages.slice(4)]));
    expect(result.message).toMatch(/bound to a different conversation/);
  });

  it('fails when a kept turn was edited, as without compaction', async () => {
    const messages = await session();
    const block = blockOf(await compact(messages.slice(0, 4)));
    const result = await refusal(
      request([own(block), { role: 'user', content: 'Now update the notes.' }, ...messages.slice(5)]),
    );
    expect(result.message).toMatch(/bound to a different conversation/);
  });
});

describe('model support', () => {
  it('knows which models compaction and preserved thinking are documented for', () => {
    for (const model of [
      'claude-fable-5-1',
      'claude-mythos-preview',
      'claude-opus-4-6',
      'claude-opus-5-5',
      'claude-sonnet-4-6',
    ]) {
      expect(compactionSupported(model), model).toBe(true);
    }
    for (const model of [
      'claude-opus-4-5-20251101',
      'claude-sonnet-4-5',
      'claude-haiku-4-5',
      'claude-test',
    ]) {
      expect(compactionSupported(model), model).toBe(false);
    }
    for (const model of [
      'claude-opus-4-5-20251101',
      'claude-sonnet-4-6',
      'claude-fable-5',
      'claude-mythos-5-1',
      'claude-test',
    ]) {
      expect(preservesThinking(model), model).toBe(true);
    }
    for (const model of [
      'claude-haiku-4-5',
      'claude-opus-4-1',
      'claude-sonnet-4-5',
      'claude-3-7-sonnet-latest',
    ]) {
      expect(preservesThinking(model), model).toBe(false);
    }
  });
});
