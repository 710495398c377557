/**
 * OpenTelemetry traces of summarized compactions, read back from a real tracer provider
 * (@opentelemetry/sdk-trace with an in-memory exporter, the async-hooks context manager and the W3C
 * propagator, registered globally as a service's SDK would register them): events go through
 * BullMQ to a real worker whose `anthropic` summarizer calls the fake Messages API over HTTP. Each
 * job attempt is a `compaction` span carrying the ledger row's id; each LLM request its GenAI
 * `chat {model}` child span, whose model and token counts are the ledger row's, whose trace
 * context reached the API as `traceparent`, and which a failed request marks `ERROR` with the
 * API's error type.
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
import { DEFAULT_SUMMARY_MODEL } from '../../worker/config/config.ts';
import { TRACER_NAME } from '../../worker/observability/tracing.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration({ anthropic: true, config: { model: DEFAULT_SUMMARY_MODEL } });
const tenantId = 'traced';
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const strategy = { type: 'summarize', keepRecent: 8, maxSummaryTokens: 2_000 } as const;

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  ctx.startWorker();
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

/** Sends a run-completed event for a fresh copy of a corpus session; waits until its job settled. */
async function compact(sessionId: string, attempts = 3): Promise<'completed' | 'failed'> {
  const messages = await loadCorpusSession('sweagent__ctf-web-i_got_id');
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  const eventId = randomUUID();
  await ctx.producer.queue.add(
    RUN_COMPLETED,
    { eventId, tenantId, sessionId, strategy },
    { jobId: eventId, attempts },
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

const spans = () => exporter.getFinishedSpans();
const jobSpanOf = (sessionId: string) =>
  spans().filter((s) => s.name === 'compaction' && s.attributes['compactor.session.id'] === sessionId);
const childrenOf = (parent: ReadableSpan) =>
  spans().filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);

describe('traces of a summarized compaction', () => {
  it('are a compaction span with the ledger row, and a GenAI chat span with its model and tokens', async () => {
    // Two sessions: the second request reads the system prompt the first one wrote to the cache.
    expect(await compact('first')).toBe('completed');
    expect(await compact('second')).toBe('completed');
    for (const sessionId of ['first', 'second']) {
      const row = await ledgerRow(sessionId);
      expect(row).toMatchObject({ status: 'applied', summarizer: 'anthropic' });
      const [job, ...more] = jobSpanOf(sessionId);
      expect(more).toEqual([]);
      expect(job?.kind).toBe(SpanKind.INTERNAL);
      expect(job?.instrumentationScope.name).toBe(TRACER_NAME);
      expect(job?.attributes).toMatchObject({
        'compactor.compaction.id': row.id,
        'compactor.compaction.status': 'applied',
        'compactor.tenant.id': tenantId,
        'compactor.session.id': sessionId,
        'compactor.trigger': 'event',
        'compactor.strategy': 'summarize',
        'compactor.summarizer': 'anthropic',
        'compactor.messages.before': row.messagesBefore,
        'compactor.messages.after': row.messagesAfter,
        'compactor.cost_usd': row.costUsd,
      });
      // The pipeline's observer events are the job span's events.
      expect(job?.events.map((e) => e.attributes?.['compactor.stage'])).toContain('summarize');

      const [chat, ...others] = childrenOf(job as ReadableSpan).filter((s) => s.kind === SpanKind.CLIENT);
      expect(others).toEqual([]);
      expect(chat?.name).toBe(`chat ${DEFAULT_SUMMARY_MODEL}`);
      expect(chat?.status.code).not.toBe(SpanStatusCode.ERROR);
      expect(chat?.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': DEFAULT_SUMMARY_MODEL,
        'gen_ai.response.model': row.model,
        'gen_ai.conversation.id': sessionId,
        'gen_ai.response.finish_reasons': ['tool_use'],
        // The conventions count Anthropic's cached input in gen_ai.usage.input_tokens.
        'gen_ai.usage.input_tokens':
          (row.inputTokens ?? 0) + (row.cacheReadTokens ?? 0) + (row.cacheWriteTokens ?? 0),
        'gen_ai.usage.output_tokens': row.outputTokens,
        'gen_ai.usage.cache_read.input_tokens': row.cacheReadTokens,
        'gen_ai.usage.cache_creation.input_tokens': row.cacheWriteTokens,
        'server.address': new URL(ctx.llm.url).hostname,
        'server.port': Number(new URL(ctx.llm.url).port),
        'compactor.tenant.id': tenantId,
        'compactor.session.id': sessionId,
      });
      expect(row.outputTokens).toBeGreaterThan(0);
    }
    expect((await ledgerRow('second')).cacheReadTokens).toBeGreaterThan(0);
    // The SDK's own span of the same call would count its tokens twice: it is off.
    expect(spans().filter((s) => s.name.startsWith('anthropic.'))).toEqual([]);
  });

  it('sends the chat span trace context to the API as traceparent', async () => {
    const before = ctx.fake.requests.length;
    expect(await compact('propagated')).toBe('completed');
    const [request] = ctx.fake.requests.slice(before).filter((r) => r.path.startsWith('/v1/messages'));
    const [job] = jobSpanOf('propagated');
    const [chat] = childrenOf(job as ReadableSpan);
    const { traceId, spanId } = chat?.spanContext() ?? {};
    expect(request?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('marks a failed LLM request ERROR with the API error type, and its job with the error name', async () => {
    ctx.fake.enqueue('overloaded');
    expect(await compact('overloaded', 1)).toBe('failed');
    const [job] = jobSpanOf('overloaded');
    expect(job?.status.code).toBe(SpanStatusCode.ERROR);
    // The error's name: a transient error, which BullMQ would retry on a later attempt.
    expect(job?.attributes['error.type']).toBe('TransientError');
    const [chat] = childrenOf(job as ReadableSpan).filter((s) => s.kind === SpanKind.CLIENT);
    expect(chat?.status.code).toBe(SpanStatusCode.ERROR);
    expect(chat?.attributes).toMatchObject({
      'error.type': 'overloaded_error',
      'gen_ai.request.model': DEFAULT_SUMMARY_MODEL,
      'compactor.session.id': 'overloaded',
    });
    expect(chat?.attributes['gen_ai.usage.output_tokens']).toBeUndefined();
  });
});
