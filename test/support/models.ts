/**
 * The model ids the tests send to the fake Messages API, in one place so that the next deprecation
 * is one edit. test/unit/models.test.ts checks each against the deprecated list of the installed
 * @anthropic-ai/sdk, whose `messages.create` warns on stderr for a deprecated model, and for
 * `thinking: { type: 'enabled' }` on the models it lists for that.
 */

/** The current Sonnet (Anthropic's models overview, November 2026): adaptive thinking. */
export const SONNET = 'claude-sonnet-5-5';

/**
 * A current model whose thinking is manual (`{ type: 'enabled', budget_tokens }`, the only form it
 * takes): Claude Haiku 4.5. The tests of sessions recorded with manual thinking use it, since a
 * stored session's thinking blocks are data that a later request replays as they were.
 */
export const MANUAL_THINKING_MODEL = 'claude-haiku-4-5';

/** Manual extended thinking, as {@link MANUAL_THINKING_MODEL} takes it. */
export const MANUAL_THINKING = { type: 'enabled', budget_tokens: 1024 } as const;

/** Adaptive thinking, the form the SDK and the docs recommend for current models. */
export const ADAPTIVE_THINKING = { type: 'adaptive' } as const;
