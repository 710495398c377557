/**
 * A worker whose configuration names the `openai` summarizer (`COMPACTOR_SUMMARIZER=openai`), end
 * to end: events go through BullMQ to a real worker, whose summarizer calls the strict fake Chat
 * Completions server (test/support/fake-openai-chat.ts) through the real `openai` SDK over HTTP,
 * and the compaction is committed with its ledger row (summarizer, model, tokens, cost). A strategy
 * may still name the process's other summarizer (`anthropic`, against the fake Messages API), and
 * a summary under the strategy's `minFidelity` is not committed. Traced as tracing.test.ts traces
 * the `anthropic` summarizer: each request is a GenAI `chat {model}` span whose provider, models
 * and token counts are the ledger row's.
 */
import { randomUUID } from 'node:crypto';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import type { CompactionRow } from '../../producer/postgres/schema.ts';
import { RUN_COMPLETED } from '../../shared/protocol/events.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { checkpointSchema, emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import type { OpenAIConfig } from '../../worker/config/config.ts';
import { FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { transcript } from '../support/transcript-builder.ts';

const MODEL = 'gpt-5.4-mini';
const openai: OpenAIConfig = {
  apiKey: 'sk-test',
  baseURL: undefined, // the fake's, once it listens
  model: MODEL,
  structuredOutputs: 'auto',
  providerName: 'openai',
};
const ctx = useIntegration({ anthropic: true, config: { summarizer: 'openai', openai } });
const tenantId = 'openai';
const chat = new FakeOpenAIChatServer();
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const summarize = { type: 'summarize', keepRecent: 8, maxSummaryTokens: 2_000 } as const;

beforeAll(async () => {
  openai.baseURL = await chat.start();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  ctx.startWorker();
});

afterAll(async () => {
  await chat.close();
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

/** Sends a run-completed event for a fresh copy of a corpus session; waits until its job settled. */
async function compact(
  sessionId: string,
  strategy: Strategy = summarize,
  messages?: Parameters<typeof createSession>[1]['messages'],
): Promise<'completed' | 'failed'> {
  messages ??= await loadCorpusSession('sweagent__ctf-web-i_got_id');
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  const eventId = randomUUID();
  await ctx.producer.queue.add(
    RUN_COMPLETED,
    { eventId, tenantId, sessionId, strategy },
    { jobId: eventId, attempts: 1 },
  );
  return waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(eventId);
    return state === 'completed' || state === 'failed' ? state : undefined;
  }, 25_000);
}

async function ledgerRow(sessionId: string): Promise<CompactionRow> {
  const [row] = await ctx.reads.history(tenantId, sessionId);
  if (!row) throw new Error(`no ledger row for ${sessionId}`);
  return row;
}

async function checkpointOf(sessionId: string): Promise<unknown> {
  const [row] = await ctx.tdb.database.sql<{ checkpoint: unknown }[]>`
    select checkpoint from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  return row?.checkpoint ?? null;
}

const spans = () => exporter.getFinishedSpans();
const jobSpanOf = (sessionId: string) =>
  spans().filter((s) => s.name === 'compaction' && s.attributes['compactor.session.id'] === sessionId);
const chatSpansOf = (job: ReadableSpan | undefined) =>
  spans().filter(
    (s) => s.parentSpanContext?.spanId === job?.spanContext().spanId && s.kind === SpanKind.CLIENT,
  );

describe('a worker configured with the openai summarizer', () => {
  it('compacts a session through the Chat Completions server, and records model, tokens and cost', async () => {
    const sent = chat.requests.length;
    expect(await compact('first')).toBe('completed');
    const row = await ledgerRow('first');
    expect(row).toMatchObject({ status: 'applied', summarizer: 'openai', model: `${MODEL}-2026-03-17` });
    expect(row.messagesAfter ?? 0).toBeLessThan(row.messagesBefore ?? 0);
    expect(row.inputTokens).toBeGreaterThan(0);
    expect(row.outputTokens).toBeGreaterThan(0);
    const usage = {
      inputTokens: row.inputTokens ?? 0,
      outputTokens: row.outputTokens ?? 0,
      cacheReadTokens: row.cacheReadTokens ?? 0,
      cacheWriteTokens: row.cacheWriteTokens ?? 0,
    };
    expect(Number(row.costUsd ?? 0)).toBeGreaterThan(0);
    expect(Number(row.costUsd ?? 0)).toBeCloseTo(costUsd(row.model ?? '', usage).usd, 6); // cost_usd keeps 6 decimals
    const checkpoint = checkpointSchema.parse(await checkpointOf('first'));
    expect(checkpoint.goal).not.toBe('');
    // One strict json_schema request, nothing to the Messages API.
    const requests = chat.requests.slice(sent) as Array<{ response_format?: { type: string } }>;
    expect(requests.map((r) => r.response_format?.type)).toEqual(['json_schema']);
    expect(ctx.fake.requests).toEqual([]);
  });

  it('traces each request as a GenAI chat span with provider openai, its models and the ledger tokens', async () => {
    expect(await compact('traced')).toBe('completed');
    const row = await ledgerRow('traced');
    const [job] = jobSpanOf('traced');
    expect(job?.attributes['compactor.summarizer']).toBe('openai');
    const [span, ...others] = chatSpansOf(job);
    expect(others).toEqual([]);
    expect(span?.name).toBe(`chat ${MODEL}`);
    expect(span?.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': MODEL,
      'gen_ai.response.model': row.model,
      'gen_ai.response.finish_reasons': ['stop'],
      // prompt_tokens, cached ones included: the ledger's uncached input plus its cache reads.
      'gen_ai.usage.input_tokens':
        (row.inputTokens ?? 0) + (row.cacheReadTokens ?? 0) + (row.cacheWriteTokens ?? 0),
      'gen_ai.usage.output_tokens': row.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': row.cacheReadTokens,
      'server.address': new URL(openai.baseURL ?? '').hostname,
      'server.port': Number(new URL(openai.baseURL ?? '').port),
      'compactor.session.id': 'traced',
    });
    // The second summary repeats the first one's schema and system prompt: read from the cache.
    expect(row.cacheReadTokens).toBeGreaterThan(0);
    // The span's trace context reached the server.
    const { traceId, spanId } = span?.spanContext() ?? {};
    expect(chat.headers.at(-1)?.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('marks a rate-limited request ERROR with the server error code; the job waits and succeeds', async () => {
    chat.enqueue({ status: 429, retryAfter: 1 });
    expect(await compact('limited')).toBe('completed');
    const requests = jobSpanOf('limited').flatMap(chatSpansOf);
    expect(requests.map((s) => s.status.code === SpanStatusCode.ERROR)).toEqual([true, false]);
    expect(requests[0]?.attributes['error.type']).toBe('rate_limit_exceeded');
    expect(requests[0]?.attributes['gen_ai.provider.name']).toBe('openai');
    expect(await ledgerRow('limited')).toMatchObject({ status: 'applied', summarizer: 'openai' });
  });

  it("lets a strategy name the process's other summarizer", async () => {
    expect(await compact('named', { ...summarize, summarizer: 'anthropic' })).toBe('completed');
    expect(await ledgerRow('named')).toMatchObject({ status: 'applied', summarizer: 'anthropic' });
    expect(ctx.fake.requests.length).toBe(1);
  });

  it('commits no openai summary under minFidelity: the skipped row names the summarizer and the score', async () => {
    // As a model answers the strict schema: every field but the media list, which compactor sets itself.
    const { media: _media, ...answered } = emptyCheckpoint();
    chat.enqueue({ answer: { analysis: '', ...answered, goal: 'something happened' } });
    const before = await checkpointOf('first');
    expect(await compact('lossy', { ...summarize, minFidelity: 0.9, onLowFidelity: 'skip' }, ruled())).toBe(
      'completed',
    );
    const row = await ledgerRow('lossy');
    expect(row.status).toBe('skipped');
    expect(row.summarizer).toBe('openai');
    expect(row.reason).toMatch(
      /the openai summary's fidelity 0\.\d+ is below minFidelity 0\.9 .*instructions 0\/2/,
    );
    expect(await checkpointOf('lossy')).toBeNull();
    expect(await checkpointOf('first')).toEqual(before);
  });
});

/** A session whose user states two rules, which a lossy summary loses. */
function ruled() {
  const t = transcript().user(
    'Fix the flaky payment test. Never edit files under migrations/. Always run make lint before you commit.',
  );
  for (let i = 0; i < 10; i++)
    t.bash(`python -m pytest tests/test_payments_${i}.py -q`, `${i + 1} passed`, 0);
  t.user('Now update docs/payments.md to match.');
  for (let i = 0; i < 8; i++) t.bash(`sed -n ${i * 10},${i * 10 + 9}p docs/payments.md`, 'text', 0);
  return t.messages.map((m) => ({
    seq: m.seq,
    role: m.role,
    kind: m.kind === 'summary' ? 'message' : m.kind,
    content: m.content,
    toolCallId: m.toolCallId,
    toolName: m.toolName,
  }));
}
