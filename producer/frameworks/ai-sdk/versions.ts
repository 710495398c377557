/**
 * What differs between the AI SDK's language-model specifications v2 (AI SDK 5), v3 (AI SDK 6) and
 * v4 (AI SDK 7), as far as the middleware reads a model's answer: the usage (v2 flat numbers, v3
 * and v4 `{ total, noCache, cacheRead, cacheWrite }` objects) and the finish reason (v2 a string, v3
 * and v4 `{ unified, raw }`). The prompt messages and content parts the middleware stores have the
 * same shape in all three (a role, a list of typed parts with `providerOptions`), so they pass
 * as they are. Pure; types only from `@ai-sdk/provider` 4.0.38, which carries all three versions.
 */
import type {
  LanguageModelV2FinishReason,
  LanguageModelV2Usage,
  LanguageModelV3FinishReason,
  LanguageModelV3Usage,
  LanguageModelV4FinishReason,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';

/** A language-model specification version the middleware speaks. */
export type SpecificationVersion = 'v2' | 'v3' | 'v4';

/** The input side of a model's usage, as compactor's `session.run.completed` event takes it. */
export interface InputUsage {
  /** The request's input tokens, cache reads and writes included; undefined when not reported. */
  inputTokens: number | undefined;
  /** Of those, the tokens read from the prompt cache; undefined when not reported. */
  cacheReadTokens: number | undefined;
}

/** Any version's usage. */
export type AnyUsage = LanguageModelV2Usage | LanguageModelV3Usage | LanguageModelV4Usage;

/** Any version's finish reason. */
export type AnyFinishReason =
  | LanguageModelV2FinishReason
  | LanguageModelV3FinishReason
  | LanguageModelV4FinishReason;

/**
 * The input tokens of a usage of any version. v3/v4: `inputTokens.total` (the providers count cache
 * reads and writes in it) and `inputTokens.cacheRead`; v2: `inputTokens` and `cachedInputTokens`.
 * Non-integer or negative numbers (a provider's bug) are left out rather than sent in an event
 * the queue would refuse.
 */
export function inputUsageOf(usage: AnyUsage | undefined): InputUsage {
  if (!usage) return { inputTokens: undefined, cacheReadTokens: undefined };
  const count = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined);
  if (typeof usage.inputTokens === 'object' && usage.inputTokens !== null) {
    const input = usage.inputTokens as LanguageModelV4Usage['inputTokens'];
    return { inputTokens: count(input.total), cacheReadTokens: count(input.cacheRead) };
  }
  const v2 = usage as LanguageModelV2Usage;
  return { inputTokens: count(v2.inputTokens), cacheReadTokens: count(v2.cachedInputTokens) };
}

/** The unified finish reason of any version (`stop`, `tool-calls`, `length`, ...). */
export function finishReasonOf(reason: AnyFinishReason | undefined): string {
  if (reason === undefined) return 'other';
  return typeof reason === 'string' ? reason : reason.unified;
}
