/**
 * Token estimation without a tokenizer: about 4 characters of English or code per token, the rule
 * of thumb Anthropic and OpenAI both document, plus a small per-message overhead for role and
 * framing. Deterministic and pure; good to ±20% on prose, which is enough for triggers and ratios.
 */

/** Tokens of framing each message costs beyond its text (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Estimated tokens of a text: `ceil(chars / 4)`. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Estimated tokens of one message of `content`, framing included. */
export function estimateMessageTokens(content: string): number {
  return estimateTextTokens(content) + MESSAGE_OVERHEAD_TOKENS;
}
