/**
 * OpenTelemetry traces of the worker, through `@opentelemetry/api` only: every call is a no-op
 * until the service registers an SDK (docs/guide/operate.md shows how); nothing here exports,
 * samples or configures anything.
 *
 * Two kinds of span:
 * - one per attempt of a compaction job ({@link traceCompactionJob}): kind `INTERNAL`, named
 *   `compaction`, with the job's tenant, session and trigger from its start and, at its end, the
 *   ledger row it left (`compactor.compaction.id`, status, strategy, summarizer, counts, cost). The
 *   pipeline's observer events (stage durations, fence rejections, budget refusals, fidelity
 *   scores) become its span events ({@link tracingObserver});
 * - one per LLM request a summarizer sends ({@link tracedLlmCalls}), a child of the job's span: an
 *   inference span as the GenAI semantic conventions define it, kind `CLIENT`, named
 *   `{gen_ai.operation.name} {gen_ai.request.model}` (`chat claude-haiku-5-5`), with the request,
 *   response and usage attributes, and `error.type` with status `ERROR` when the request fails.
 *   Its trace context goes with the request (`traceparent`, when a propagator is registered).
 *
 * The attribute names, and the version of the conventions they follow, are in ./tracing-names.ts.
 */
import {
  type Attributes,
  type AttributeValue,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { PipelineEvent, PipelineObserver } from '../pipeline/ports.ts';
import type { LlmAnswer, LlmCall, LlmCalls } from '../summarizers/llm-calls.ts';
import { COMPACTOR, GEN_AI } from './tracing-names.ts';

/** The instrumentation scope of compactor's spans. */
export const TRACER_NAME = '@agent-compactor/compactor';

const tracer = () => trace.getTracer(TRACER_NAME);

/** What a compaction job's span starts with. */
export interface JobSpanStart {
  tenantId: string;
  sessionId: string;
  /** BullMQ's job id. */
  jobId: string | undefined;
  /** `event`, `manual` or `sweep`. */
  trigger: string;
  eventId: string | null;
  /** 1 for the job's first attempt. */
  attempt: number;
}

/** What a settled job's span ends with: the ledger row it left (none for a summary queued for a batch). */
export interface JobSpanEnd {
  /** `applied`, `skipped`, `failed`, `duplicate` or `batched`. */
  status: string;
  compactionId: string | null;
  strategy?: string | null | undefined;
  summarizer?: string | null | undefined;
  messagesBefore?: number | null | undefined;
  messagesAfter?: number | null | undefined;
  tokensBefore?: number | null | undefined;
  tokensAfter?: number | null | undefined;
  costUsd?: number | null | undefined;
}

/**
 * Runs `work`, one attempt of a compaction job, inside its span: the active span while `work` runs,
 * so that the summarizers' LLM requests are its children. The span ends with what `ended` reads
 * from the result. A thrown error gives it `error.type` (the error's class name) and status
 * `ERROR`, unless `rescheduled(error)` says the error only puts the job back in the queue (another
 * worker holds the session, the tenant is at its share): no failure, `compactor.job.rescheduled`.
 * @returns what `work` returns. @throws what `work` throws.
 */
export function traceCompactionJob<T>(
  start: JobSpanStart,
  work: () => Promise<T>,
  ended: (result: T) => JobSpanEnd,
  rescheduled: (error: unknown) => boolean,
): Promise<T> {
  const attributes: Attributes = {
    [COMPACTOR.TENANT_ID]: start.tenantId,
    [COMPACTOR.SESSION_ID]: start.sessionId,
    [GEN_AI.CONVERSATION_ID]: start.sessionId,
    [COMPACTOR.TRIGGER]: start.trigger,
    [COMPACTOR.JOB_ATTEMPT]: start.attempt,
    ...defined(COMPACTOR.JOB_ID, start.jobId),
    ...defined(COMPACTOR.EVENT_ID, start.eventId),
  };
  return tracer().startActiveSpan('compaction', { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      const result = await work();
      if (span.isRecording()) span.setAttributes(jobEndAttributes(ended(result)));
      return result;
    } catch (error) {
      if (rescheduled(error)) span.setAttribute(COMPACTOR.JOB_RESCHEDULED, true);
      else failed(span, error, errorClass(error));
      throw error;
    } finally {
      span.end();
    }
  });
}

function jobEndAttributes(end: JobSpanEnd): Attributes {
  return {
    [COMPACTOR.COMPACTION_STATUS]: end.status,
    ...defined(COMPACTOR.COMPACTION_ID, end.compactionId),
    ...defined(COMPACTOR.STRATEGY, end.strategy),
    ...defined(COMPACTOR.SUMMARIZER, end.summarizer),
    ...defined(COMPACTOR.MESSAGES_BEFORE, end.messagesBefore),
    ...defined(COMPACTOR.MESSAGES_AFTER, end.messagesAfter),
    ...defined(COMPACTOR.TOKENS_BEFORE, end.tokensBefore),
    ...defined(COMPACTOR.TOKENS_AFTER, end.tokensAfter),
    ...defined(COMPACTOR.COST_USD, end.costUsd),
  };
}

/**
 * The summarizers' requests, each in its GenAI inference span (see the file comment), the active
 * span while it runs; the span's trace context is handed to the request as headers.
 */
export const tracedLlmCalls: LlmCalls = {
  send(call, request, report) {
    const name = `${call.operation} ${call.model}`;
    const attributes = callAttributes(call);
    return tracer().startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        const headers: Record<string, string> = {};
        propagation.inject(context.active(), headers);
        const result = await request(headers);
        if (span.isRecording()) span.setAttributes(answerAttributes(report.answer(result)));
        return result;
      } catch (error) {
        failed(span, error, report.errorType(error));
        throw error;
      } finally {
        span.end();
      }
    });
  },
};

/** The attributes an inference span starts with (a sampler sees these), and compactor's own. */
function callAttributes(call: LlmCall): Attributes {
  return {
    [GEN_AI.OPERATION_NAME]: call.operation,
    [GEN_AI.PROVIDER_NAME]: call.provider,
    [GEN_AI.REQUEST_MODEL]: call.model,
    [GEN_AI.CONVERSATION_ID]: call.sessionId,
    ...defined(GEN_AI.REQUEST_MAX_TOKENS, call.maxTokens),
    ...serverOf(call.baseURL),
    [COMPACTOR.TENANT_ID]: call.tenantId,
    [COMPACTOR.SESSION_ID]: call.sessionId,
    [COMPACTOR.SUMMARIZER]: call.summarizer,
  };
}

function answerAttributes(answer: LlmAnswer): Attributes {
  return {
    ...defined(GEN_AI.RESPONSE_MODEL, answer.model),
    ...defined(GEN_AI.RESPONSE_ID, answer.id),
    ...(answer.finishReasons.length > 0 ? { [GEN_AI.RESPONSE_FINISH_REASONS]: answer.finishReasons } : {}),
    [GEN_AI.USAGE_INPUT_TOKENS]: answer.inputTokens,
    [GEN_AI.USAGE_OUTPUT_TOKENS]: answer.outputTokens,
    [GEN_AI.USAGE_CACHE_READ_INPUT_TOKENS]: answer.cacheReadTokens,
    [GEN_AI.USAGE_CACHE_CREATION_INPUT_TOKENS]: answer.cacheCreationTokens,
  };
}

/**
 * The pipeline's events as events of the active span (the job's): `compactor.stage` with the
 * stage and its duration, `compactor.fence_rejected`, `compactor.budget_exceeded` with what was
 * done instead and the limit's scope and period, `compactor.fidelity` with the summarizer and score.
 */
export function tracingObserver(): PipelineObserver {
  return {
    observe(event) {
      const span = trace.getActiveSpan();
      if (!span?.isRecording()) return;
      const [name, attributes] = spanEventOf(event);
      span.addEvent(name, attributes);
    },
  };
}

function spanEventOf(event: PipelineEvent): [string, Attributes] {
  switch (event.type) {
    case 'stage':
      return ['compactor.stage', { [COMPACTOR.STAGE]: event.stage, [COMPACTOR.STAGE_DURATION_MS]: event.ms }];
    case 'fenceRejected':
      return ['compactor.fence_rejected', {}];
    case 'fidelity':
      return [
        'compactor.fidelity',
        { [COMPACTOR.SUMMARIZER]: event.summarizer, [COMPACTOR.FIDELITY_SCORE]: event.score },
      ];
    case 'budgetExceeded':
      return [
        'compactor.budget_exceeded',
        {
          [COMPACTOR.BUDGET_ACTION]: event.action,
          [COMPACTOR.BUDGET_SCOPE]: event.limit.scope,
          [COMPACTOR.BUDGET_PERIOD]: event.limit.period,
        },
      ];
  }
}

/** `server.address` and `server.port` of a base URL (the port its scheme implies when it names none). */
function serverOf(baseURL: string): Attributes {
  try {
    const { hostname, port, protocol } = new URL(baseURL);
    return {
      [GEN_AI.SERVER_ADDRESS]: hostname.replace(/^\[(.*)\]$/, '$1'),
      [GEN_AI.SERVER_PORT]: port ? Number(port) : protocol === 'http:' ? 80 : 443,
    };
  } catch {
    return {};
  }
}

/** Status `ERROR` with `error.type` and its message, and the exception as a span event. */
function failed(span: Span, error: unknown, type: string): void {
  span.setAttribute(GEN_AI.ERROR_TYPE, type);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  if (error instanceof Error) span.recordException(error);
}

/** The class name of an error (`SessionNotFoundError`), or `_OTHER`, the conventions' fallback. */
export function errorClass(error: unknown): string {
  return error instanceof Error && error.name ? error.name : '_OTHER';
}

/** `{ [key]: value }`, or nothing for a null or undefined value. */
function defined(key: string, value: AttributeValue | null | undefined): Attributes {
  return value === null || value === undefined ? {} : { [key]: value };
}
