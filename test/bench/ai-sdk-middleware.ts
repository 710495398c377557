/**
 * Part 14 of `npm run bench`: the time the AI SDK middleware (producer/frameworks/ai-sdk/) adds to
 * one model call of an agent whose session holds 500 messages. The same `generateText` request of
 * the real `ai` package, on a local fake model (a v4 `LanguageModel` object answering at once: no
 * network, no provider), is timed without the middleware and with it, alternating, after warm-up
 * calls; the middleware's calls each load the context, append the user's turn, load again, store
 * the answer and enqueue `session.run.completed` (Redis), so the session grows by two messages a
 * call from 500. Reported: median and p95 of each side, and the difference, against the target of
 * at most 5 ms added. Prints numbers; asserts nothing.
 */

import { randomUUID } from 'node:crypto';
import type { LanguageModelV4, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { generateText, type ModelMessage, wrapLanguageModel } from 'ai';
import { compactorMiddleware } from '../../producer/frameworks/ai-sdk/index.ts';
import { appendToLiveSession, createProducer, createSession, loadContext } from '../../producer/index.ts';
import { openDatabase } from '../../producer/postgres/db.ts';
import { encodeAiSdkMessage } from '../../shared/formats/ai-sdk/encoding.ts';
import { REDIS_URL } from '../support/env.ts';
import { fmt } from './report.ts';

/** Timed calls of each side (after warm-up). */
const CALLS = 60;
const WARM_UP = 5;
/** Messages in the session (and in the application's own history) before the first call. */
const SESSION_MESSAGES = 500;

/** A v4 model that answers every call with the same short text, at once. */
function localModel(): LanguageModelV4 {
  const answer: LanguageModelV4GenerateResult = {
    content: [{ type: 'text', text: 'Done.' }],
    finishReason: { unified: 'stop', raw: 'end_turn' },
    usage: {
      inputTokens: { total: 20_000, noCache: 20_000, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 2, text: 2, reasoning: 0 },
    },
    warnings: [],
  };
  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'local',
    supportedUrls: {},
    doGenerate: async () => answer,
    doStream: async () => {
      throw new Error('not streamed in this bench');
    },
  };
}

/** A user turn, an assistant turn: `n` messages of a few hundred characters each. */
function historyOf(n: number): ModelMessage[] {
  const text = (i: number) =>
    `Message ${i}: ${'the agent reads a file and reports what it found. '.repeat(6)}`;
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { role: 'user' as const, content: [{ type: 'text' as const, text: text(i) }] }
      : { role: 'assistant' as const, content: [{ type: 'text' as const, text: text(i) }] },
  );
}

const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};

/**
 * Runs part 14 on the bench database at `url`, with a queue under `prefix`, and reports it through
 * `section` (test/bench/report.ts).
 */
export async function aiSdkMiddlewareOverhead(
  url: string,
  prefix: string,
  section: (title: string, header: string[], rows: string[][], notes?: string[]) => void,
): Promise<void> {
  const database = openDatabase(url, { max: 2 });
  const producer = createProducer({ redisUrl: REDIS_URL, prefix });
  const tenantId = 'bench';
  const sessionId = 'ai-sdk-500';
  const system = 'You are a careful coding assistant.';
  const history = historyOf(SESSION_MESSAGES - 1);
  try {
    // The session as the middleware would have stored it: the system prompt pinned, then the history.
    await createSession(database.db, {
      tenantId,
      sessionId,
      format: 'ai-sdk',
      messages: [
        { seq: 0, message: encodeAiSdkMessage({ role: 'system', content: system }), pinned: true },
        ...history.map((m, i) => ({
          seq: i + 1,
          message: encodeAiSdkMessage(m as { role: string; content: unknown }),
        })),
      ],
    });
    const bare = localModel();
    const wrapped = wrapLanguageModel({
      model: localModel(),
      middleware: compactorMiddleware({ db: database.db, producer, tenantId, sessionId }),
    });
    const without: number[] = [];
    const withIt: number[] = [];
    for (let i = 0; i < WARM_UP + CALLS; i++) {
      for (const [model, into] of [
        [bare, without],
        [wrapped, withIt],
      ] as const) {
        const messages = [...history, { role: 'user' as const, content: `Call ${i}: what next?` }];
        const started = performance.now();
        const result = await generateText({ model, system, messages, maxRetries: 0 });
        const ms = performance.now() - started;
        if (result.text !== 'Done.') throw new Error(`bench model answered ${result.text}`);
        if (i >= WARM_UP) into.push(ms);
        if (model === wrapped) history.push(messages.at(-1) as ModelMessage, ...result.responseMessages);
      }
    }
    // What a call is made of: the client library's own calls on the same session, alone.
    const timed = async (f: () => Promise<unknown>) => {
      const xs: number[] = [];
      for (let i = 0; i < WARM_UP + CALLS; i++) {
        const started = performance.now();
        await f();
        if (i >= WARM_UP) xs.push(performance.now() - started);
      }
      return xs;
    };
    const loads = await timed(() => loadContext(database.db, { tenantId, sessionId, format: 'ai-sdk' }));
    let n = 0;
    const appends = await timed(() =>
      appendToLiveSession(
        database.db,
        tenantId,
        sessionId,
        [
          encodeAiSdkMessage(
            n++ % 2 === 0
              ? { role: 'user', content: [{ type: 'text', text: 'One more question.' }] }
              : { role: 'assistant', content: [{ type: 'text', text: 'One more answer.' }] },
          ) as never,
        ],
        { format: 'ai-sdk' },
      ),
    );
    const enqueues = await timed(() => producer.runCompleted({ tenantId, sessionId, eventId: randomUUID() }));
    const row = (label: string, xs: number[]) => [
      label,
      fmt(quantile(xs, 0.5), 2),
      fmt(quantile(xs, 0.95), 2),
    ];
    const added = (q: number) => quantile(withIt, q) - quantile(without, q);
    section(
      '14. AI SDK middleware: time added per generateText call, 500-message session',
      ['request', 'p50 ms', 'p95 ms'],
      [
        row('generateText, local model, no middleware', without),
        row('generateText, local model, compactor middleware', withIt),
        ['added by the middleware (target ≤ 5 ms)', fmt(added(0.5), 2), fmt(added(0.95), 2)],
        row('of which, alone: loadContext (the session, ai-sdk)', loads),
        row('of which, alone: appendToLiveSession (one message)', appends),
        row('of which, alone: producer.runCompleted (Redis)', enqueues),
      ],
      [
        `${CALLS} calls each after ${WARM_UP} warm-up calls, alternating; the application sends its whole history (${SESSION_MESSAGES} messages, growing by 2 a call), the middleware sends compactor's context instead.`,
        'With the middleware a call loads the context with the new user turn pending, then stores that turn and the answer in one append and enqueues session.run.completed (Redis): one database connection, in-process. A busy machine (load average over the core count) inflates every number here.',
        'The last three rows time those client-library calls alone, on the same session after the loop: a call through the middleware costs about one load, one append and one enqueue.',
      ],
    );
  } finally {
    await producer.close();
    await database.close();
  }
}
