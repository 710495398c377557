/**
 * Which messages of the prompt the AI SDK hands the model are new to the session, and the prompt
 * the model is sent instead. Pure.
 *
 * The rule ("what is new"): the AI SDK builds each step's prompt from the application's messages
 * and the steps so far: leading `system` messages (the instructions), then the conversation. Every
 * assistant message in it was the answer of a model call, which the middleware stored when it was
 * made (through this middleware, in this process or an earlier one). So the new messages are the
 * ones after the prompt's last assistant message (all of the conversation when it has none): the
 * user's next turn, or the tool results of the previous step. Of those, the ones the session
 * already holds after its own last assistant message are skipped, compared by value (the JSON of
 * their stored form, key order ignored), as a leading run (the middleware reads that tail on its
 * first call and then keeps it as it appends, so a call costs one context read): a retried call (the AI SDK retries
 * `doGenerate` through the middleware) or a call repeated after a failure stores its messages once.
 * Consequences, documented in docs/guide/ai-sdk.md: an assistant message the application wrote
 * itself (not a model's answer made through the middleware) is not stored; a message the
 * application edited after it was stored is stored again, as a new message (a session only grows).
 */
import type { AnyMessage } from './reply.ts';

/** A prompt's leading system messages and the rest. */
export interface SplitPrompt<M extends AnyMessage> {
  /** The leading `system` messages: the instructions of this call. */
  system: M[];
  /** Everything after them. */
  conversation: M[];
}

/** Splits a prompt into its leading system messages and the conversation. */
export function splitPrompt<M extends AnyMessage>(prompt: readonly M[]): SplitPrompt<M> {
  let i = 0;
  while (i < prompt.length && prompt[i]?.role === 'system') i++;
  return { system: prompt.slice(0, i), conversation: prompt.slice(i) };
}

/** The messages after the last assistant message (all of them when there is none). */
export function afterLastAssistant<M extends AnyMessage>(messages: readonly M[]): M[] {
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i]?.role === 'assistant') return messages.slice(i + 1);
  return messages.slice();
}

/**
 * The candidates the session does not hold yet: `candidates` less a leading run whose keys are
 * `stored` (the keys of the session's messages after its last assistant message), message by
 * message. When `stored` is not such a run (the application changed a message the session holds),
 * nothing is skipped.
 */
export function unstored<M>(candidates: readonly M[], stored: readonly string[], key: (m: M) => string): M[] {
  if (stored.length === 0 || stored.length > candidates.length) return candidates.slice();
  for (let i = 0; i < stored.length; i++)
    if (stored[i] !== key(candidates[i] as M)) return candidates.slice();
  return candidates.slice(stored.length);
}

/**
 * The prompt the model is sent: this call's own system messages (the application's current
 * instructions) first, then the session's system messages that are not among them (the context
 * puts every system message first: the ones pinned when the session was created, the text of
 * archived ones, a later one the application sent; those equal by `key` to one of this call's are
 * sent once), then the session's conversation.
 */
export function requestPrompt<M extends AnyMessage>(
  system: readonly M[],
  context: readonly M[],
  key: (m: unknown) => string,
): M[] {
  const sent = new Set(system.map(key));
  const stored = splitPrompt(context);
  return [...system, ...stored.system.filter((m) => !sent.has(key(m))), ...stored.conversation];
}

/**
 * A canonical JSON text of a JSON value: object keys sorted, so two messages equal by value give
 * the same text whatever their key order.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
