/**
 * The fake Messages API refuses, over real HTTP through the real SDK, what the real API refuses in a
 * conversation: here, thinking replayed after a client-side compaction changed the turns before it.
 * Every later test that builds a request from a compacted session leans on this.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Block, lastSignature, signThinking, type Turn } from '../support/conversation-rules.ts';
import { FakeAnthropicServer, SIGNING_KEY } from '../support/fake-anthropic.ts';

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
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    system,
    tools,
    messages: messages as Anthropic.MessageParam[],
  });

describe('the fake Messages API checks the conversation', () => {
  it('accepts a tool loop replayed as it was received', async () => {
    await expect(create(loop())).resolves.toMatchObject({ type: 'message' });
  });

  it('answers 400 to kept thinking whose earlier turns a compaction replaced', async () => {
    const compacted: Turn[] = [{ role: 'user', content: 'Summary of the work so far.' }, ...loop().slice(3)];
    const refused = create(compacted);
    await expect(refused).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(refused).rejects.toThrow(/messages\.1\.content\.0: Invalid `signature` in `thinking` block/);
  });
});
