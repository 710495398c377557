/**
 * "Context out" for an `ai-sdk` session: its live history as the `prompt` of the next language
 * model call (`doGenerate`/`doStream`'s `LanguageModelV*Prompt`), in the JSON form of ./encoding.ts
 * (the client decodes it with `decodeAiSdkPrompt`). Pure: no I/O; every stored message it sends
 * unchanged is the stored object itself.
 *
 * The AI SDK hands the prompt to whichever provider the agent uses, so the context keeps what each
 * of them requires (their converters in the AI SDK's provider packages, `@ai-sdk/anthropic`'s
 * `convertToAnthropicMessagesPrompt`, `@ai-sdk/openai`'s `convertToOpenAIResponsesInput` and
 * Chat Completions converter, `@ai-sdk/google`'s `convertToGoogleGenerativeAIMessages`, and the
 * APIs behind them):
 * - **System messages first.** Anthropic's converter refuses "Multiple system messages that are
 *   separated by user/assistant messages" and Google's takes "system messages … only at the
 *   beginning of the conversation", so every system message comes first, in order: the leading
 *   ones, the text of system messages a compaction archived (restated, each distinct text once:
 *   shared/context/restated-system.ts), then any later one. None is lost; none moves below another.
 * - **Every client call answered, next.** The tool results answering an assistant message's
 *   `tool-call`s are in the `tool` message(s) directly after it (Anthropic: "tool_use ids were found
 *   without tool_result blocks immediately after"; OpenAI: "An assistant message with 'tool_calls'
 *   must be followed by tool messages responding to each 'tool_call_id'"). A client call left
 *   without its result where the session moved on gets a synthetic one (`error-text`,
 *   {@link NO_RESULT}) in a tool message after the stored ones; the calls of the newest assistant
 *   message, with nothing but their results after it, are left open (the agent is running them).
 *   A provider-executed call is the provider's: answered in its own message or by a later result,
 *   never made up.
 * - **No result without its call.** A `tool-result` whose call is not in the assistant message just
 *   before becomes a user message saying what it was (the APIs refuse "tool_result block(s) that
 *   reference non-existent tool_use ids" and "messages with role 'tool' must be a response to a
 *   preceeding message with 'tool_calls'"); a `tool-approval-response` stays in its tool message.
 * - **Reasoning stays in its assistant message**, with its `providerOptions` (Anthropic's signature
 *   or redacted data, OpenAI's encrypted content and item id), as stored. As for the `anthropic`
 *   format (shared/context/render.ts, "Preserved thinking": a signature is bound to everything
 *   before it), reasoning signed before a compaction that changed the history is left out of the
 *   context (never out of storage): the rows with seq ≤ `compactedThroughSeq`, or whose
 *   `contextVersion` is outside [`thinkingSinceVersion`, `version`]. The newest assistant message(s)
 *   of an open tool loop keep theirs (Anthropic requires that turn's thinking back intact) with a
 *   `thinking_prefix_changed` notice. `thinking: 'strip'` leaves all reasoning out. A message left
 *   with no part is left out.
 * - **A user message first.** A history that would begin otherwise (after a window cut) gets
 *   {@link LEAD_IN} first, as the `anthropic` format does.
 * - The summary of the compacted part is a user message (its text {@link summaryRowText}, the body
 *   framed in `<session-record>`), where the archived messages were, then the pinned messages kept
 *   from before it: a user turn, never a system message, so the session text it quotes never gains
 *   a system message's rank (as for the OpenAI formats).
 */
import type { ContextNotice, ContextRow, RenderContextInput } from '../../context/render.ts';
import { LEAD_IN, NO_RESULT, summaryFirst, summaryRowText } from '../../context/render.ts';
import { restatedSystem } from '../../context/restated-system.ts';
import { asAnthropicContent, renderText } from '../../contract/blocks.ts';
import { aiSdkFacts, isClientCall, outputText } from './facts.ts';
import {
  type AiSdkMessage,
  type AiSdkPart,
  isAiSdkMessage,
  partsOf,
  REASONING_PART_TYPES,
} from './message.ts';

/** The next call's `prompt`, encoded, with its estimated size. */
export interface RenderedAiSdkContext {
  /** The prompt's messages in the JSON form of ./encoding.ts (decode with `decodeAiSdkPrompt`). */
  prompt: AiSdkMessage[];
  /** Estimated input tokens of `prompt`. */
  tokens: number;
  notices: ContextNotice[];
}

/** What the renderer reads. */
export type AiSdkContextInput = Pick<
  RenderContextInput,
  | 'rows'
  | 'checkpoint'
  | 'archivedSystem'
  | 'compactedThroughSeq'
  | 'version'
  | 'thinkingSinceVersion'
  | 'thinking'
  | 'pdfPages'
>;

/** One body message and the row it came from (null for one made here). */
interface Piece {
  row: ContextRow;
  message: AiSdkMessage;
}

/** Renders an `ai-sdk` session's live history (see the file comment for the rules). */
export function renderAiSdkContext(input: AiSdkContextInput): RenderedAiSdkContext {
  const { rows } = input;
  const isSystem = (r: ContextRow) => r.kind !== 'summary' && r.role === 'system';
  let lead = 0;
  while (lead < rows.length && isSystem(rows[lead] as ContextRow)) lead++;
  const leading = rows.slice(0, lead).map(systemOf);
  const later = rows.slice(lead).filter(isSystem).map(systemOf);
  const restated = restatedSystem(
    input.archivedSystem ?? [],
    [...leading, ...later].map((m) => String(m.content)),
  ).map((content): AiSdkMessage => ({ role: 'system', content }));

  const body = summaryFirst(rows.slice(lead).filter((r) => !isSystem(r))).map(
    (row): Piece => ({ row, message: messageOf(row, rows, input) }),
  );
  const { pieces, notices } = withReasoningKept(body, input);
  const paired = pairToolCalls(pieces.map((p) => p.message).filter((m) => partsOf(m).length > 0));
  if (paired.length > 0 && paired[0]?.role !== 'user') {
    paired.unshift({ role: 'user', content: [{ type: 'text', text: LEAD_IN }] });
  }
  const prompt = [...leading, ...restated, ...later, ...paired];
  const tokens = prompt.reduce((sum, m) => sum + aiSdkFacts(m, input.pdfPages).tokenCount, 0);
  return { prompt, tokens, notices };
}

/** A system row as a system message: the stored one, or (never expected) its text. */
function systemOf(row: ContextRow): AiSdkMessage {
  if (isAiSdkMessage(row.content) && typeof row.content.content === 'string') return row.content;
  return { role: 'system', content: renderText(asAnthropicContent(row.content)) };
}

function messageOf(row: ContextRow, all: readonly ContextRow[], input: AiSdkContextInput): AiSdkMessage {
  if (row.kind === 'summary') {
    return { role: 'user', content: [{ type: 'text', text: summaryRowText(row, all, input.checkpoint) }] };
  }
  if (isAiSdkMessage(row.content)) return row.content;
  // Not written by an AI SDK client (never expected): its text, as a message of its role.
  const text = renderText(asAnthropicContent(row.content));
  return { role: row.role === 'assistant' ? 'assistant' : 'user', content: [{ type: 'text', text }] };
}

/**
 * The pieces with the reasoning left out where it may no longer verify (see the file comment), and
 * the notice for an open tool loop that keeps reasoning signed before a compaction.
 */
function withReasoningKept(
  pieces: readonly Piece[],
  input: AiSdkContextInput,
): { pieces: Piece[]; notices: ContextNotice[] } {
  const thinking = input.thinking ?? 'keep';
  const since = input.thinkingSinceVersion ?? input.version;
  const compacted = ({ row }: Piece) => {
    const made = row.contextVersion ?? null;
    return made !== null && input.version !== undefined && since !== undefined
      ? made < since || made > input.version
      : input.compactedThroughSeq !== null && row.seq <= input.compactedThroughSeq;
  };
  const loop = openToolLoop(pieces);
  const cut = loop.map((i) => pieces[i] as Piece).find((p) => compacted(p) && hasReasoning(p.message));
  const keepLoop = thinking === 'keep' && cut !== undefined;
  const notices = keepLoop && cut ? [prefixChangedNotice(cut.row.seq)] : [];
  const kept = pieces.map((piece, i): Piece => {
    const keep = thinking === 'keep' && (!compacted(piece) || (keepLoop && loop.includes(i)));
    return keep || !hasReasoning(piece.message)
      ? piece
      : { ...piece, message: withoutReasoning(piece.message) };
  });
  return { pieces: kept, notices };
}

/**
 * The indexes of the newest assistant messages when they are an open tool loop: they make client
 * calls and nothing but tool messages answering those calls follows them. Empty otherwise.
 */
function openToolLoop(pieces: readonly Piece[]): number[] {
  let i = pieces.length - 1;
  const answered: string[] = [];
  while (i >= 0 && pieces[i]?.message.role === 'tool') {
    for (const p of partsOf((pieces[i] as Piece).message)) {
      if (p.type === 'tool-result') answered.push(String(p.toolCallId));
    }
    i--;
  }
  const run: number[] = [];
  while (i >= 0 && pieces[i]?.message.role === 'assistant') run.unshift(i--);
  const calls = new Set(
    run.flatMap((j) =>
      partsOf((pieces[j] as Piece).message)
        .filter(isClientCall)
        .map((p) => String(p.toolCallId)),
    ),
  );
  return calls.size > 0 && answered.every((id) => calls.has(id)) ? run : [];
}

function hasReasoning(m: AiSdkMessage): boolean {
  return m.role === 'assistant' && partsOf(m).some((p) => REASONING_PART_TYPES.has(p.type));
}

function withoutReasoning(m: AiSdkMessage): AiSdkMessage {
  return { ...m, content: partsOf(m).filter((p) => !REASONING_PART_TYPES.has(p.type)) };
}

function prefixChangedNotice(seq: number): ContextNotice {
  return {
    type: 'thinking_prefix_changed',
    seq,
    message:
      `The assistant message at seq ${seq} is an open tool loop (its tool calls are waiting for their results) and ` +
      'a compaction changed the conversation before it. Its reasoning is sent back intact, as Anthropic requires, ' +
      'but a signature in its providerOptions no longer matches what comes before it and Anthropic may refuse it: ' +
      'finish the tool loop before compacting (compact between runs), or load the context with thinking: "strip".',
  };
}

/** A tool call of an assistant message: its id, its tool, whether the client runs it. */
interface Call {
  id: string;
  name: string;
  client: boolean;
}

function callsOf(m: AiSdkMessage): Call[] {
  if (m.role !== 'assistant') return [];
  const parts = partsOf(m);
  // A provider-executed call answered in its own message asks nothing of the next one.
  const answeredHere = new Set(
    parts.filter((p) => p.type === 'tool-result').map((p) => String(p.toolCallId)),
  );
  return parts
    .filter((p) => p.type === 'tool-call' && !answeredHere.has(String(p.toolCallId)))
    .map((p) => ({ id: String(p.toolCallId), name: String(p.toolName), client: isClientCall(p) }));
}

/**
 * Puts the results of each assistant message's calls in the tool messages directly after it: a
 * synthetic result for a client call left unanswered where the session moved on, an orphan result
 * as a user message (see the file comment).
 */
export function pairToolCalls(messages: readonly AiSdkMessage[]): AiSdkMessage[] {
  const out: AiSdkMessage[] = [];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i] as AiSdkMessage;
    i++;
    if (m.role === 'tool') {
      out.push(...answering(m, new Set(), new Set()));
      continue;
    }
    out.push(m);
    const calls = callsOf(m);
    if (calls.length === 0) continue;
    const asked = new Set(calls.map((c) => c.id));
    const answered = new Set<string>();
    const orphans: AiSdkMessage[] = [];
    while (i < messages.length && messages[i]?.role === 'tool') {
      const [kept, ...rest] = answering(messages[i] as AiSdkMessage, asked, answered);
      i++;
      if (kept?.role === 'tool') out.push(kept);
      else if (kept) orphans.push(kept);
      orphans.push(...rest);
    }
    const open = i >= messages.length;
    const missing = calls.filter((c) => c.client && !answered.has(c.id));
    if (missing.length > 0 && !open) out.push({ role: 'tool', content: missing.map(syntheticResult) });
    out.push(...orphans);
  }
  return out;
}

/**
 * A tool message split into what answers `asked` (each id once, noted in `answered`) with its
 * approvals, as a tool message (the stored one when nothing is taken out), then its other results as
 * a user message; either left out when empty.
 */
function answering(m: AiSdkMessage, asked: ReadonlySet<string>, answered: Set<string>): AiSdkMessage[] {
  const kept: AiSdkPart[] = [];
  const orphaned: AiSdkPart[] = [];
  for (const part of partsOf(m)) {
    const id = String(part.toolCallId);
    if (part.type !== 'tool-result') kept.push(part);
    else if (asked.has(id) && !answered.has(id)) {
      answered.add(id);
      kept.push(part);
    } else orphaned.push(part);
  }
  if (orphaned.length === 0) return [m];
  const out: AiSdkMessage[] = kept.length > 0 ? [{ ...m, content: kept }] : [];
  out.push({ role: 'user', content: orphaned.map(orphanText) });
  return out;
}

function syntheticResult(call: Call): AiSdkPart {
  return {
    type: 'tool-result',
    toolCallId: call.id,
    toolName: call.name,
    output: { type: 'error-text', value: NO_RESULT },
  };
}

function orphanText(part: AiSdkPart): AiSdkPart {
  const body = outputText(part.output);
  return {
    type: 'text',
    text:
      `[A tool result whose tool call is not in this conversation (toolCallId ${String(part.toolCallId)})]` +
      (body.trim() === '' ? '' : `\n${body}`),
  };
}
