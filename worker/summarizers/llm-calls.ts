/**
 * The port through which a summarizer sends each of its LLM requests, so that whoever built it can
 * watch them (worker/observability/tracing.ts turns each into an OpenTelemetry GenAI span) without
 * the summarizer knowing how. A summarizer describes the request before it goes and the answer
 * after, in the terms below; {@link directCalls} sends and watches nothing.
 */

/** One LLM request as a summarizer is about to send it. */
export interface LlmCall {
  /** Who serves the model, e.g. `anthropic` (the GenAI conventions' `gen_ai.provider.name`). */
  provider: string;
  /** What the request asks, e.g. `chat` for a Messages API call (`gen_ai.operation.name`). */
  operation: string;
  /** The model the request names. */
  model: string;
  /** The request's output ceiling (`max_tokens`), tokens. */
  maxTokens?: number | undefined;
  /** The endpoint the request goes to. */
  baseURL: string;
  tenantId: string;
  /** The session being summarized (the GenAI conventions' conversation). */
  sessionId: string;
  /** The summarizer's name (`anthropic`, `anthropic-compaction`). */
  summarizer: string;
}

/** What an answered LLM request reports. Tokens are the provider's counts. */
export interface LlmAnswer {
  /** The model that answered (a dated snapshot of the one requested, say), or null. */
  model: string | null;
  /** The answer's id, or null. */
  id: string | null;
  /** Why the model stopped (`tool_use`, `end_turn`, `compaction`, ...). */
  finishReasons: string[];
  /**
   * Every input token of the request, cached ones included. Anthropic reports the uncached ones as
   * `input_tokens`, so this is `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`.
   */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache. */
  cacheReadTokens: number;
  /** Input tokens written to the provider's prompt cache. */
  cacheCreationTokens: number;
}

/** How a summarizer reads its own answer and failures for {@link LlmCalls.send}. */
export interface LlmCallReport<T> {
  /** The answer of a request that succeeded. Must not throw. */
  answer(result: T): LlmAnswer;
  /**
   * A low-cardinality class of a failure: the provider's error type (`overloaded_error`), an HTTP
   * status, `timeout`, or the error's class name. Must not throw.
   */
  errorType(error: unknown): string;
}

/** Sends a summarizer's LLM requests. */
export interface LlmCalls {
  /**
   * Sends one request: calls `request` with the headers to add to it (trace context, when a tracer
   * propagates one; else none) and returns what it returns.
   * @throws what `request` throws, unchanged.
   */
  send<T>(
    call: LlmCall,
    request: (headers: Record<string, string>) => Promise<T>,
    report: LlmCallReport<T>,
  ): Promise<T>;
}

/** Sends each request as it is, watching nothing: the default of a summarizer built without a watcher. */
export const directCalls: LlmCalls = {
  send: (_call, request) => request({}),
};

/**
 * Waits for `reply` (an LLM call already sent) and meanwhile runs `meanwhile`, pure CPU work the
 * caller needs only once the answer is in (the guard's reading of the leaving messages): after one
 * turn of the event loop, so that the request is on the wire first. The work then overlaps the
 * wait for the model instead of following the answer, when a worker's jobs answered together all
 * queue for its one thread.
 * @returns the answer and the work's result.
 * @throws what `reply` rejects with (the work's result is dropped), or what `meanwhile` throws.
 */
export async function whileAnswering<A, B>(reply: Promise<A>, meanwhile: () => B): Promise<[A, B]> {
  // Handled by the await below; without this, a reply failing while the work runs would be reported
  // as unhandled.
  reply.catch(() => {});
  await new Promise((resolve) => setImmediate(resolve));
  const done = meanwhile();
  return [await reply, done];
}
