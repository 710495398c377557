/**
 * The wire format a session's messages are written in, recorded on the session
 * (`sessions.format`) when it is created and never changed: every message appended to it, and the
 * context read from it, is in that format.
 * - `anthropic`: Anthropic Messages API `MessageParam`s (the default; every session made before
 *   formats existed is one).
 * - `openai-chat`: OpenAI Chat Completions messages (also what vLLM, Ollama, LiteLLM, OpenRouter and
 *   Azure OpenAI take).
 * - `openai-responses`: OpenAI Responses API input items (`message`, `function_call`,
 *   `function_call_output`, `reasoning`, `compaction`, …), one item per message row.
 * - `ai-sdk`: AI SDK provider-level prompt messages (`LanguageModelV2/V3/V4Message` of
 *   `@ai-sdk/provider`), their file data encoded as JSON (shared/formats/ai-sdk/encoding.ts).
 *
 * The names live here, at the bottom of the core, so that a session snapshot can carry its format;
 * what each format is lives in shared/formats/. A new format is one more name here, one more folder
 * beside `anthropic/`, `openai-chat/` and `openai-responses/` with its row rules (its `format.ts`,
 * the interface of shared/formats/format.ts), and one more line in shared/formats/registry.ts.
 */

/** Every session format, the default first. */
export const SESSION_FORMATS = ['anthropic', 'openai-chat', 'openai-responses', 'ai-sdk'] as const;

/** A session's format. */
export type SessionFormat = (typeof SESSION_FORMATS)[number];

/** The format of a session created without one, and of every session made before formats existed. */
export const DEFAULT_SESSION_FORMAT: SessionFormat = 'anthropic';

/** Whether `value` names a session format. */
export function isSessionFormat(value: unknown): value is SessionFormat {
  return typeof value === 'string' && (SESSION_FORMATS as readonly string[]).includes(value);
}

/**
 * The format `value` names, as a session row records it.
 * @throws {Error} when it names none: `sessions.format` is checked by the database, so this is a
 *   row written past the schema (a bug or a hand edit), never input.
 */
export function sessionFormatOf(value: unknown): SessionFormat {
  if (isSessionFormat(value)) return value;
  throw new Error(
    `sessions.format: "${String(value).slice(0, 40)}" is not a session format (${SESSION_FORMATS.join(', ')})`,
  );
}
