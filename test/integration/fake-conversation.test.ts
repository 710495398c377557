/**
 * The fake Messages API refuses, over real HTTP through the real SDK, what the real API refuses in a
 * conversation: here, thinking replayed after a client-side compaction changed the turns before it.
 * Every later test that builds a request from a compacted session leans on this.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Block, lastSignature, signThinking, type Turn } from '../support/conversation-rules.ts';
import { FakeAnthropicServer, SIGNING_KEY, THINKING_BINDING_BETA } from '../support/fake-anthropic.ts';
import { ADAPTIVE_THINKING, MANUAL_THINKING, MANUAL_THINKING_MODEL, SONNET } from '../support/models.ts';

const fake = new FakeAnthropicServer();
let close: () => Promise<void>;
let client: Anthropic;
const system = 'You are a coding agent.';
const tools = [{ name: 'bash', description: 'run a command', input_schema: { type: 'object' as const } }];

beforeAll(async () => {
  const started = await fake.start();
  close = started.close;
  client = new Anthropic({ apiKey: 'test', baseURL: started.url, maxRetries: 0 });
});

afterAll(async () => {
  await close?.();
});

/** Two rounds of a tool loop, each assistant turn with thinking signed as the fake signs it. */
function loop(): Turn[] {
  const messages: Turn[] = [{ role: 'user', content: 'fix the failing test' }];
  for (const i of [0, 1]) {
    const signature = signThinking(
      { system, tools, messages },
      [],
      `step ${i}`,
      lastSignature(messages),
      SIGNING_KEY,
    );
    const blocks: Block[] = [
      { type: 'thinking', thinking: `step ${i}`, signature },
      { type: 'tool_use', id: `toolu_${i}`, name: 'bash', input: { command: `pytest -k ${i}` } },
    ];
    messages.push({ role: 'assistant', content: blocks });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'ok' }],
    });
  }
  return messages;
}

const create = (messages: Turn[]) =>
  client.messages.create({
    model: SONNET,
    max_tokens: 1024,
    system,
    tools,
    messages: messages as Anthropic.MessageParam[],
  });

/** One agent run of `rounds` tool calls, with thinking on, each reply sent back as received. */
async function agentRun(
  rounds: number,
  start: Anthropic.MessageParam[],
  thinking: Anthropic.ThinkingConfigParam = MANUAL_THINKING,
): Promise<Anthropic.MessageParam[]> {
  const messages = [...start];
  for (let i = 0; i < rounds; i++) {
    fake.enqueue({
      reply: { thinking: `plan ${i}`, text: `running ${i}`, toolUse: [{ name: 'bash', input: { i } }] },
    });
    const reply = await client.messages.create({
      // Manual thinking on the model that takes it, adaptive on the current Sonnet.
      model: thinking.type === 'enabled' ? MANUAL_THINKING_MODEL : SONNET,
      max_tokens: 2048,
      thinking,
      system,
      tools,
      messages,
    });
    expect(reply.stop_reason).toBe('tool_use');
    messages.push({ role: 'assistant', content: reply.content as Anthropic.ContentBlockParam[] });
    const call = reply.content.find((b) => b.type === 'tool_use');
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: call?.id ?? '', content: `done ${i}` }],
    });
  }
  return messages;
}

describe('the fake Messages API checks the conversation', () => {
  it("runs an agent loop with signed thinking; a compaction must drop the kept turns' thinking", async () => {
    const history = await agentRun(4, [{ role: 'user', content: 'migrate the database' }]);
    expect(history).toHaveLength(9);
    const signed = history[1]?.content as Anthropic.ContentBlockParam[];
    expect(signed[0]).toMatchObject({ type: 'thinking', thinking: 'plan 0', signature: expect.any(String) });
    // A client-side compaction: the first two rounds become a summary, the last two stay.
    const kept = history.slice(5);
    const compacted: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Summary of rounds 0 and 1.' },
      ...kept,
    ];
    await expect(create(compacted as Turn[])).rejects.toThrow(/bound to a different conversation/);
    const stripped = compacted.map((m) =>
      typeof m.content === 'string' ? m : { ...m, content: m.content.filter((b) => b.type !== 'thinking') },
    ) as Anthropic.MessageParam[];
    // The compaction landed inside an open tool loop: with manual thinking, the loop's last
    // assistant turn must start with its (now invalid) thinking, so the request is refused...
    const manual = client.messages.create({
      model: MANUAL_THINKING_MODEL,
      max_tokens: 2048,
      thinking: MANUAL_THINKING,
      system,
      tools,
      messages: stripped,
    });
    await expect(manual).rejects.toThrow(/must start with a thinking block/);
    // ...while adaptive thinking, which relaxes that rule, goes on from the compacted history.
    const more = await agentRun(2, stripped, ADAPTIVE_THINKING);
    expect(more).toHaveLength(stripped.length + 4);
  });

  it('accepts a tool loop replayed as it was received', async () => {
    await expect(create(loop())).resolves.toMatchObject({ type: 'message' });
  });

  it('answers 400 to kept thinking whose earlier turns a compaction replaced', async () => {
    const compacted: Turn[] = [{ role: 'user', content: 'Summary of the work so far.' }, ...loop().slice(3)];
    const refused = create(compacted);
    await expect(refused).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(refused).rejects.toThrow(/messages\.1\.content\.0: Invalid `signature` in `thinking` block/);
  });

  it('drops thinking whose prefix changed with drop_block under the binding beta, and only then', async () => {
    const compacted: Turn[] = [{ role: 'user', content: 'Summary of the work so far.' }, ...loop().slice(3)];
    const dropBlock = {
      type: 'adaptive' as const,
      block_binding: { prefix_mismatch_behavior: 'drop_block' as const },
    };
    const beta = (messages: Turn[]) =>
      client.beta.messages.create({
        model: SONNET,
        max_tokens: 1024,
        betas: [THINKING_BINDING_BETA],
        thinking: dropBlock,
        system,
        tools,
        messages: messages as Anthropic.Beta.BetaMessageParam[],
      });
    await expect(beta(compacted)).resolves.toMatchObject({
      input_transformations: [
        { type: 'thinking_dropped', reason: 'prefix_binding_mismatch', path: 'messages.1.content.0' },
      ],
    });
    // Nothing to drop: the list is there, empty.
    await expect(beta(loop())).resolves.toMatchObject({ input_transformations: [] });
    // Without the beta the field is unknown to the API.
    const plain = client.messages.create({
      model: SONNET,
      max_tokens: 1024,
      thinking: dropBlock as never,
      system,
      tools,
      messages: compacted as Anthropic.MessageParam[],
    });
    await expect(plain).rejects.toThrow(/thinking\.block_binding: Extra inputs are not permitted/);
  });
});
