/**
 * What the strategies that rewrite in place do to AI SDK messages, each a new message object with
 * every other field (and every other part, `providerOptions` included) kept as it was:
 * - `clearToolResults`: a `tool-result` part of a `tool` message gets the output
 *   `{ type: 'text', value: <placeholder> }`; the part stays (its `toolCallId`, `toolName` and
 *   `providerOptions`), so the pair stays whole: every provider requires each call's answer, not
 *   its text. A provider-executed result (in an assistant message) is the provider's: never touched.
 * - `clearToolInputs`: a client `tool-call` part's `input` becomes `{}`.
 * - `clearThinking`: `reasoning` and `reasoning-file` parts are dropped (their `providerOptions`,
 *   a signature or encrypted reasoning, with them); a message of nothing but reasoning keeps it
 *   (a provider refuses an empty message).
 * A restore puts the original message back. Pure.
 */
import type { StoredContent } from '../../contract/blocks.ts';
import type { MessageMeta } from '../../contract/message.ts';
import { estimateTextTokens } from '../../contract/tokens.ts';
import type { Rewrite } from '../../planning/types.ts';
import type { ClearedResults, ResultClearing } from '../format.ts';
import { aiSdkFacts, isClientCall, outputMediaTokens, outputText } from './facts.ts';
import { type AiSdkMessage, type AiSdkPart, isAiSdkMessage, REASONING_PART_TYPES } from './message.ts';

/** The message's parts when it is an AI SDK message of `role` with a list of parts; else null. */
function partsIn(content: unknown, role: string): readonly AiSdkPart[] | null {
  return isAiSdkMessage(content) && content.role === role && Array.isArray(content.content)
    ? content.content
    : null;
}

/** `[toolCallId, toolName]` of each client call an assistant message makes. */
export function aiSdkToolNames(content: StoredContent): Array<[string, string]> {
  return (partsIn(content, 'assistant') ?? [])
    .filter(isClientCall)
    .map((p) => [String(p.toolCallId), typeof p.toolName === 'string' ? p.toolName : 'tool']);
}

/** A tool message with its clearable results' outputs replaced by their placeholders. */
export function clearedAiSdkResults(content: StoredContent, clearing: ResultClearing): ClearedResults {
  const answered: string[] = [];
  const cleared: string[] = [];
  const parts = partsIn(content, 'tool');
  if (parts === null) return { content: null, answered, cleared };
  const next = parts.map((part) => {
    const id = part.toolCallId;
    if (part.type !== 'tool-result' || typeof id !== 'string' || !clearing.clearable.has(id)) return part;
    answered.push(id);
    const output = part.output as { type?: unknown; value?: unknown } | undefined;
    if (
      output?.type === 'text' &&
      typeof output.value === 'string' &&
      output.value.startsWith(clearing.clearedPrefix)
    ) {
      return part;
    }
    const tokens = estimateTextTokens(outputText(part.output)) + outputMediaTokens(part.output);
    cleared.push(id);
    return { ...part, output: { type: 'text', value: clearing.placeholder(id, tokens) } };
  });
  return {
    content: cleared.length > 0 ? { ...(content as AiSdkMessage), content: next } : null,
    answered,
    cleared,
  };
}

/** An assistant message with the inputs of its client calls in `ids` emptied to `{}`; null when none changed. */
export function clearedAiSdkInputs(
  content: StoredContent,
  ids: ReadonlySet<string>,
): { content: StoredContent; cleared: string[] } | null {
  const parts = partsIn(content, 'assistant');
  if (parts === null) return null;
  const cleared: string[] = [];
  const next = parts.map((part) => {
    if (!isClientCall(part) || !ids.has(String(part.toolCallId)) || isEmptyObject(part.input)) return part;
    cleared.push(String(part.toolCallId));
    return { ...part, input: {} };
  });
  return cleared.length > 0 ? { content: { ...(content as AiSdkMessage), content: next }, cleared } : null;
}

/** An assistant message without its reasoning parts (see the file comment). */
export function clearedAiSdkReasoning(
  content: StoredContent,
): { content: StoredContent; dropped: number } | 'thinking only' | null {
  const parts = partsIn(content, 'assistant');
  if (parts === null) return null;
  const next = parts.filter((p) => !REASONING_PART_TYPES.has(p.type));
  if (next.length === parts.length) return null;
  if (next.length === 0) return 'thinking only';
  return { content: { ...(content as AiSdkMessage), content: next }, dropped: parts.length - next.length };
}

/** The rewrite of `meta` into the AI SDK message `m`: its rendering, token estimate and reasoning flag recomputed. */
export function aiSdkRewriteOf(meta: MessageMeta, m: AiSdkMessage): Rewrite {
  const facts = aiSdkFacts(m);
  return {
    seq: meta.seq,
    content: m,
    text: facts.text,
    tokenCount: facts.tokenCount,
    tokensBefore: meta.tokenCount,
    thinking: facts.thinking,
  };
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
  );
}
