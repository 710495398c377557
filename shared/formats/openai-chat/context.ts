/**
 * "Context out" for an `openai-chat` session: its live history as the `messages` of the next
 * `client.chat.completions.create` request. Pure: no I/O; every stored message it keeps is the
 * stored object itself.
 *
 * The rules, from the Chat Completions API (openai-python `src/openai/types/chat/*_message_param.py`;
 * the API's 400s as quoted in LiteLLM's and other agent frameworks' bug reports; OpenAI publishes
 * no list of its error messages):
 * - "An assistant message with 'tool_calls' must be followed by tool messages responding to each
 *   'tool_call_id'": the tool messages answering an assistant message's calls come directly after it,
 *   one per id, in call order (the API pairs by id; call order keeps the prompt bytes stable for
 *   prefix caching). A call whose answer is missing where the session moved on gets a synthetic tool
 *   message ({@link NO_RESULT}); the calls of the newest assistant message, with nothing but their
 *   answers after it, are left open (the agent is still running them and appends the answers).
 * - "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'": a
 *   tool message whose call is not in the assistant message just before becomes a user message
 *   saying what it was. A system or developer message between a call and its answers moves after them.
 * - Leading system/developer messages stay first; system text a compaction archived is restated
 *   after them as `system` messages, so no instruction is lost: each distinct text once, none that a
 *   leading message already holds (shared/context/restated-system.ts says why that is safe).
 * - The summary of the compacted part is a `user` message ({@link summaryRowText}, the body framed in
 *   `<session-record>`), where the archived messages were, then the pinned messages kept from before
 *   it. A user turn, not `system`/`developer`: OpenAI's Codex CLI does the same (codex-rs
 *   `core/src/compact.rs` rebuilds the history with the summary as a user message under its
 *   `summary_prefix`), and under OpenAI's instruction hierarchy system/developer text outranks the
 *   user's, while the summary quotes tool output and web pages that must never gain that rank.
 * - Chat Completions has no reasoning to keep (the API returns none to send back), so nothing here
 *   is about thinking.
 */
import type { ContextNotice, ContextRow, RenderContextInput } from '../../context/render.ts';
import { NO_RESULT, summaryFirst, summaryRowText } from '../../context/render.ts';
import { restatedSystem } from '../../context/restated-system.ts';
import { asAnthropicContent, renderText } from '../../contract/blocks.ts';
import { type ChatMessage, chatFacts, chatText, isChatMessage } from './message.ts';

/** The next request's `messages` for `client.chat.completions.create`, with their estimated size. */
export interface RenderedChatContext {
  messages: ChatMessage[];
  /** Estimated input tokens of `messages`. */
  tokens: number;
  notices: ContextNotice[];
}

/** Renders an `openai-chat` session's live history (see the file comment for the rules). */
export function renderChatContext(
  input: Pick<RenderContextInput, 'rows' | 'checkpoint' | 'archivedSystem'>,
): RenderedChatContext {
  const { rows } = input;
  let lead = 0;
  while (lead < rows.length && rows[lead]?.role === 'system' && isChatMessage(rows[lead]?.content)) lead++;
  const leading = rows.slice(0, lead).flatMap((r) => (isChatMessage(r.content) ? [r.content] : []));
  const restated = restatedSystem(input.archivedSystem ?? [], leading.map(chatText)).map(
    (content): ChatMessage => ({ role: 'system', content }),
  );
  const body = summaryFirst(rows.slice(lead)).map((r) => messageOf(r, rows, input));
  const messages = [...leading, ...restated, ...pairToolCalls(body)];
  const tokens = messages.reduce((sum, m) => sum + chatFacts(m).tokenCount, 0);
  return { messages, tokens, notices: [] };
}

function messageOf(
  row: ContextRow,
  all: readonly ContextRow[],
  input: Pick<RenderContextInput, 'checkpoint'>,
): ChatMessage {
  if (row.kind === 'summary') {
    return {
      role: 'user',
      content: summaryRowText(row, all, input.checkpoint),
    };
  }
  if (isChatMessage(row.content)) return row.content;
  // Not written by an openai-chat agent (never expected): its text, as the role it was stored with.
  const text = renderText(asAnthropicContent(row.content));
  return row.role === 'tool'
    ? { role: 'user', content: text }
    : ({ role: row.role, content: text } as ChatMessage);
}

/** The ids an assistant message calls, in order. */
function callIds(m: ChatMessage | undefined): string[] {
  return m?.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [];
}

/**
 * Puts the answers of each assistant message's calls directly after it, in call order: a synthetic
 * answer for a call left unanswered where the session moved on, an orphan tool message as a user
 * message, a system/developer message between a call and its answers moved after them.
 */
export function pairToolCalls(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i] as ChatMessage;
    i++;
    const ids = callIds(m);
    if (m.role === 'tool') {
      out.push(orphan(m));
      continue;
    }
    out.push(m);
    if (ids.length === 0) continue;
    // The run after the call: its answers, and system messages that must wait until after them.
    const answers = new Map<string, ChatMessage>();
    const moved: ChatMessage[] = [];
    const extra: ChatMessage[] = [];
    while (i < messages.length) {
      const next = messages[i] as ChatMessage;
      if (next.role === 'tool') {
        if (ids.includes(next.tool_call_id) && !answers.has(next.tool_call_id))
          answers.set(next.tool_call_id, next);
        else extra.push(orphan(next));
      } else if (next.role === 'system' || next.role === 'developer') {
        moved.push(next);
      } else break;
      i++;
    }
    const open = i >= messages.length && moved.length === 0;
    for (const id of ids) {
      const answer = answers.get(id);
      if (answer) out.push(answer);
      else if (!open) out.push({ role: 'tool', tool_call_id: id, content: NO_RESULT });
    }
    out.push(...extra, ...moved);
  }
  return out;
}

function orphan(m: ChatMessage & { role: 'tool' }): ChatMessage {
  const body = chatText(m);
  return {
    role: 'user',
    content:
      `[A tool result whose tool call is not in this conversation (tool_call_id ${m.tool_call_id})]` +
      (body.trim() === '' ? '' : `\n${body}`),
  };
}
