/**
 * The wait a rate-limited LLM API asks for, read from its answer's headers: both the Anthropic and
 * the OpenAI summarizers map a 429 to a {@link RateLimitedError} carrying it. Pure.
 */
/**
 * The wait a 429 asks for, in ms: `retry-after-ms` (milliseconds, what the SDK itself honours first),
 * else `retry-after` as delay-seconds (decimals allowed) or an HTTP date. A date in the past gives 0.
 * @param nowMs the current time, ms since the epoch (for an HTTP date).
 * @returns null when neither header is present or parseable.
 */
export function parseRetryAfterMs(headers: Headers | null | undefined, nowMs: number): number | null {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && /^\d+(?:\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(?:\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
