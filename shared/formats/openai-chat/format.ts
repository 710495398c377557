/**
 * The `openai-chat` session format's row rules (format.ts): a row holds a whole Chat Completions
 * message; clearing as clearing.ts says. A Chat Completions message carries no thinking to drop.
 * Pure.
 */
import { MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import type { SessionFormat } from '../format.ts';
import {
  chatResultStartsWith,
  chatRewriteOf,
  chatToolNames,
  clearedChatInputs,
  clearedChatResult,
} from './clearing.ts';
import { chatFacts, isChatMessage } from './message.ts';

export const openaiChatFormat: SessionFormat = {
  name: 'openai-chat',
  toolNames: chatToolNames,
  clearToolResults(content, clearing) {
    // A tool message answers one call (its `tool_call_id`).
    if (!isChatMessage(content) || content.role !== 'tool')
      return { content: null, answered: [], cleared: [] };
    const id = content.tool_call_id;
    if (!clearing.clearable.has(id)) return { content: null, answered: [], cleared: [] };
    if (chatResultStartsWith(content, clearing.clearedPrefix))
      return { content: null, answered: [id], cleared: [] };
    const tokens = chatFacts(content).tokenCount - MESSAGE_OVERHEAD_TOKENS;
    const cleared = clearedChatResult(content, clearing.placeholder(id, tokens));
    return cleared === null
      ? { content: null, answered: [id], cleared: [] }
      : { content: cleared, answered: [id], cleared: [id] };
  },
  clearToolInputs(content, ids) {
    const cleared = clearedChatInputs(content, ids);
    if (cleared === null || !isChatMessage(content)) return null;
    const calls = content.role === 'assistant' ? (content.tool_calls ?? []) : [];
    return { content: cleared, cleared: calls.map((call) => call.id).filter((id) => ids.has(id)) };
  },
  clearThinking: () => null,
  rewriteOf(meta, content) {
    if (!isChatMessage(content))
      throw new Error(`openai-chat: seq ${meta.seq} holds no Chat Completions message`);
    return chatRewriteOf(meta, content);
  },
};
