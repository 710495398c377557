/**
 * The anthropic summarizer on Amazon Bedrock and Google Vertex AI: a real worker, built by the
 * summarizer factory from a config naming the platform, summarizes a corpus session through the
 * real @anthropic-ai/bedrock-sdk (SigV4 with static test credentials) or @anthropic-ai/vertex-sdk
 * (an OAuth access token) over HTTP, against the fake Messages API answering the platform's own
 * path and body (test/support/fake-anthropic.ts, `platform`). The ledger row prices the platform's
 * model id as its base model; the GenAI span names the platform as `gen_ai.provider.name`.
 */
import { randomUUID } from 'node:crypto';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { SummarizerConfigError } from '../../shared/contract/errors.ts';
import { RUN_COMPLETED } from '../../shared/protocol/events.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import type { AnthropicPlatformConfig, Config } from '../../worker/config/config.ts';
import { tracedLlmCalls } from '../../worker/observability/tracing.ts';
import { batchesFor, summarizerFor, summarizersFor } from '../../worker/summarizers/index.ts';
import {
  BEDROCK_API_VERSION,
  type FakeAnthropicHandle,
  FakeAnthropicServer,
  VERTEX_API_VERSION,
} from '../support/fake-anthropic.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'platforms';
const strategy = { type: 'summarize', keepRecent: 8, maxSummaryTokens: 2_000 } as const;
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

const fakes = {
  bedrock: new FakeAnthropicServer({ platform: 'bedrock' }),
  vertex: new FakeAnthropicServer({ platform: 'vertex' }),
};
const handles: Partial<Record<keyof typeof fakes, FakeAnthropicHandle>> = {};

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  handles.bedrock = await fakes.bedrock.start();
  handles.vertex = await fakes.vertex.start();
});

afterAll(async () => {
  await Promise.all(Object.values(handles).map((h) => h.close()));
  await provider.shutdown();
  trace.disable();
  context.disable();
});

/** Each platform: its settings pointing at its fake, the model id it names, its wire shape. */
const PLATFORMS = {
  bedrock: {
    model: 'global.anthropic.claude-haiku-4-5-20251001-v1:0',
    settings: (baseURL: string): AnthropicPlatformConfig => ({
      platform: 'bedrock',
      region: 'eu-west-1',
      baseURL,
      credentials: { accessKeyId: 'AKIDTESTTESTTESTTEST', secretAccessKey: 'test-secret-not-real' },
    }),
    path: '/model/global.anthropic.claude-haiku-4-5-20251001-v1:0/invoke',
    version: BEDROCK_API_VERSION,
    provider: 'aws.bedrock',
  },
  vertex: {
    model: 'claude-haiku-4-5@20251001',
    settings: (baseURL: string): AnthropicPlatformConfig => ({
      platform: 'vertex',
      region: 'us-east5',
      projectId: 'compactor-test',
      accessToken: 'ya29.test-token',
      baseURL,
    }),
    path: '/projects/compactor-test/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5@20251001:rawPredict',
    version: VERTEX_API_VERSION,
    provider: 'gcp.vertex_ai',
  },
} as const;

function configOf(name: keyof typeof PLATFORMS): Config {
  const p = PLATFORMS[name];
  const url = handles[name]?.url ?? '';
  return { ...ctx.config, anthropicApiKey: undefined, anthropicPlatform: p.settings(url), model: p.model };
}

/** Sends a run-completed event for a fresh copy of a corpus session; waits until its job settled. */
async function compact(sessionId: string): Promise<'completed' | 'failed'> {
  const messages = await loadCorpusSession('sweagent__ctf-web-i_got_id');
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  const eventId = randomUUID();
  await ctx.producer.queue.add(RUN_COMPLETED, { eventId, tenantId, sessionId, strategy }, { jobId: eventId });
  return waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(eventId);
    return state === 'completed' || state === 'failed' ? state : undefined;
  }, 25_000);
}

describe.each(['bedrock', 'vertex'] as const)('the anthropic summarizer on %s', (name) => {
  const p = PLATFORMS[name];

  it("summarizes a session through the platform's SDK, priced as the base model", async () => {
    const config = configOf(name);
    ctx.startWorker({ summarizers: { primary: summarizerFor(config, tracedLlmCalls) } });
    const sessionId = `${name}-session`;
    expect(await compact(sessionId)).toBe('completed');
    await ctx.closeWorkers();

    const [row] = await ctx.reads.history(tenantId, sessionId);
    expect(row).toMatchObject({ status: 'applied', summarizer: 'anthropic', model: p.model });
    const tokens = {
      inputTokens: row?.inputTokens ?? 0,
      outputTokens: row?.outputTokens ?? 0,
      cacheReadTokens: row?.cacheReadTokens ?? 0,
      cacheWriteTokens: row?.cacheWriteTokens ?? 0,
    };
    const priced = costUsd(p.model, tokens);
    expect(priced).toMatchObject({ known: true, pricedAs: 'claude-haiku-4-5' });
    expect(row?.costUsd).toBeCloseTo(priced.usd, 9);
    expect(priced.usd).toBeGreaterThan(0);

    // What went over the wire: the platform's path and body, signed as the platform signs.
    const [request, ...more] = fakes[name].requests;
    expect(more).toEqual([]);
    expect(request?.path).toBe(p.path);
    const body = request?.body as Record<string, unknown>;
    expect(body.anthropic_version).toBe(p.version);
    expect(body).not.toHaveProperty('model');
    expect(request?.headers['anthropic-version']).toBeUndefined();
    const auth = String(request?.headers.authorization);
    if (name === 'bedrock') {
      expect(auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTESTTESTTESTTEST\/\d{8}\/eu-west-1\/bedrock\//);
    } else expect(auth).toBe('Bearer ya29.test-token');
    expect(request?.headers['x-api-key']).toBeUndefined();

    const chat = exporter
      .getFinishedSpans()
      .find((s) => s.kind === SpanKind.CLIENT && s.attributes['compactor.session.id'] === sessionId);
    expect(chat?.attributes).toMatchObject({
      'gen_ai.provider.name': p.provider,
      'gen_ai.request.model': p.model,
      'gen_ai.usage.output_tokens': row?.outputTokens,
    });
  });

  it("names the platform's own settings when it refuses the request", async () => {
    const sessionId = `${name}-refused`;
    const messages = await loadCorpusSession('sweagent__ctf-web-i_got_id');
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
    fakes[name].enqueue({ status: 403, errorType: 'permission_error', message: 'Access denied.' });
    const advice =
      name === 'bedrock'
        ? /^Amazon Bedrock rejected the request \(403 .*Access denied.*\): .*bedrock:InvokeModel .*AWS_REGION/
        : /^Google Vertex AI rejected the request \(403 .*Access denied.*\): .*Model Garden.*roles\/aiplatform\.user/;
    const failed = ctx.compactInProcess(
      { tenantId, sessionId, strategy },
      { summarizers: { primary: summarizerFor(configOf(name)) } },
    );
    await expect(failed).rejects.toThrow(SummarizerConfigError);
    await expect(failed).rejects.toThrow(advice);
    await expect(failed).rejects.not.toThrow(/ANTHROPIC_API_KEY/);
  });

  it('has no Message Batches client: batch sweeps summarize online', () => {
    expect(batchesFor(configOf(name))).toBeNull();
  });
});

describe('anthropic-compaction on the platforms', () => {
  it('refuses on Bedrock, naming the platform and what to use instead, without a request', async () => {
    const before = fakes.bedrock.requests.length;
    const compaction = summarizersFor(configOf('bedrock'))['anthropic-compaction'];
    const input = {
      tenantId,
      sessionId: 'compaction',
      leaving: [],
      previous: null,
      maxSummaryTokens: 2_000,
    } as unknown as Parameters<NonNullable<typeof compaction>['summarize']>[0];
    const refused = compaction?.summarize(input);
    await expect(refused).rejects.toThrow(SummarizerConfigError);
    await expect(refused).rejects.toThrow(
      /anthropic-compaction summarizer is not available on Amazon Bedrock: .*name the anthropic summarizer/,
    );
    expect(fakes.bedrock.requests.length).toBe(before);
  });

  it('compacts on Vertex AI: the block comes back through the platform, the beta as a header', async () => {
    const sessionId = 'vertex-compaction';
    const turns = Array.from({ length: 8 }, (_, i) => [
      {
        seq: 2 * i,
        message: { role: 'user' as const, content: `task ${i}: explain module ${i} of the parser` },
      },
      {
        seq: 2 * i + 1,
        message: {
          role: 'assistant' as const,
          content: `Module ${i} tokenizes input ${i} and reports errors. `.repeat(40),
        },
      },
    ]).flat();
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: turns });
    const before = fakes.vertex.requests.length;
    const outcome = await ctx.compactInProcess(
      {
        tenantId,
        sessionId,
        strategy: { ...strategy, keepRecent: 4, cutAtUserTurn: true, summarizer: 'anthropic-compaction' },
      },
      { summarizers: { named: summarizersFor(configOf('vertex')) } },
    );
    expect(outcome.row?.status, outcome.row?.reason ?? '').toBe('applied');
    expect(outcome.row).toMatchObject({
      summarizer: 'anthropic-compaction',
      model: PLATFORMS.vertex.model,
    });
    expect(outcome.row?.costUsd).toBeGreaterThan(0);
    const [request, ...more] = fakes.vertex.requests.slice(before);
    expect(more).toEqual([]);
    expect(request?.path).toBe(PLATFORMS.vertex.path);
    expect(request?.headers['anthropic-beta']).toBe('compact-2026-09-04');
    expect(request?.body).toMatchObject({ compaction: { type: 'summarize' } });
  });
});
