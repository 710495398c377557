/**
 * What `clearToolResults` does to Chat Completions messages: a tool message's `content` becomes the
 * placeholder (its `tool_call_id` stays, so the pair stays valid: the API requires each call's
 * answer, not its text), and with `clearToolInputs` a cleared call's `function.arguments` becomes
 * `"{}"` (a custom call's `input`, `""`). Every other field is kept. Pure.
 */
import type { MessageMeta } from '../../contract/message.ts';
import type { Rewrite } from '../../planning/types.ts';
import { type ChatMessage, chatFacts, isChatMessage, toolNameOf } from './message.ts';

/** The tool message with its content replaced by `placeholder`; null when it is not a tool message. */
export function clearedChatResult(m: unknown, placeholder: string): ChatMessage | null {
  if (!isChatMessage(m) || m.role !== 'tool') return null;
  return { ...m, content: placeholder };
}

/** Whether a tool message's content begins with `prefix` (cleared already). */
export function chatResultStartsWith(m: ChatMessage, prefix: string): boolean {
  return m.role === 'tool' && typeof m.content === 'string' && m.content.startsWith(prefix);
}

/**
 * The assistant message with the inputs of the calls in `ids` emptied; null when none changed.
 */
export function clearedChatInputs(m: unknown, ids: ReadonlySet<string>): ChatMessage | null {
  if (!isChatMessage(m) || m.role !== 'assistant' || !m.tool_calls) return null;
  let changed = false;
  const calls = m.tool_calls.map((call) => {
    if (!ids.has(call.id)) return call;
    if (call.type === 'custom') {
      if (call.custom.input === '') return call;
      changed = true;
      return { ...call, custom: { ...call.custom, input: '' } };
    }
    if (call.function.arguments === '{}' || call.function.arguments === '') return call;
    changed = true;
    return { ...call, function: { ...call.function, arguments: '{}' } };
  });
  return changed ? { ...m, tool_calls: calls } : null;
}

/** The tool name of each call an assistant message makes, by id. */
export function chatToolNames(m: unknown): Array<[string, string]> {
  if (!isChatMessage(m) || m.role !== 'assistant') return [];
  return (m.tool_calls ?? []).map((c) => [c.id, toolNameOf(c)]);
}

/**
 * The rewrite of `meta` into the Chat Completions message `m` (its rendering and token estimate
 * recomputed), as `rewriteOf` of shared/planning/clearing.ts makes for Anthropic content.
 */
export function chatRewriteOf(meta: MessageMeta, m: ChatMessage): Rewrite {
  const facts = chatFacts(m);
  return {
    seq: meta.seq,
    content: m,
    text: facts.text,
    tokenCount: facts.tokenCount,
    tokensBefore: meta.tokenCount,
    thinking: false,
  };
}
