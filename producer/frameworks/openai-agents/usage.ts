/**
 * The size of a run's last model request, read off the OpenAI Agents SDK's run usage, for the
 * `inputTokens` and `cacheReadTokens` of `session.run.completed`. Pure.
 */

/** The part of the SDK's `Usage` (its `requestUsageEntries`, one per model request) read here. */
export interface RunUsage {
  requestUsageEntries?:
    | ReadonlyArray<{
        inputTokens: number;
        inputTokensDetails?: Record<string, number> | undefined;
        endpoint?: string | undefined;
      }>
    | undefined;
}

/**
 * The prompt tokens of the run's last model request (`input_tokens`; Chat Completions'
 * `prompt_tokens`, which the SDK reports the same way) and, of those, the ones read from the prompt
 * cache (`input_tokens_details.cached_tokens`), when the SDK recorded them. A request of the SDK's
 * own compaction (`responses.compact`) is not the agent's context and is skipped. Empty when no
 * request was recorded, or its figures are not whole numbers (an event carries none then).
 */
export function lastRequestTokens(usage: RunUsage | undefined): {
  inputTokens?: number;
  cacheReadTokens?: number;
} {
  const entries = usage?.requestUsageEntries ?? [];
  const last = entries.findLast((e) => e.endpoint === undefined || e.endpoint === 'responses.create');
  if (!last || !Number.isSafeInteger(last.inputTokens) || last.inputTokens <= 0) return {};
  const cached = last.inputTokensDetails?.cached_tokens;
  return {
    inputTokens: last.inputTokens,
    ...(Number.isSafeInteger(cached) && (cached as number) >= 0 && (cached as number) <= last.inputTokens
      ? { cacheReadTokens: cached as number }
      : {}),
  };
}
