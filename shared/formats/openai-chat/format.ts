/**
 * The `openai-chat` session format's row rules (format.ts): a row holds a whole Chat Completions
 * message; clearing as clearing.ts says. A Chat Completions message carries no thinking to drop.
 * Pure.
 */
import { MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import { clearOneResult, type SessionFormat } from '../format.ts';
import {
  chatResultStartsWith,
  chatRewriteOf,
  chatToolNames,
  clearedChatInputs,
  clearedChatResult,
} from './clearing.ts';
import { chatFacts, isChatMessage } from './message.ts';

/** The `openai-chat` format's row rules, for the registry. */
export const openaiChatFormat: SessionFormat = {
  name: 'openai-chat',
  toolNames: chatToolNames,
  clearToolResults(content, clearing) {
    // A tool message answers one call (its `tool_call_id`).
    const tool = isChatMessage(content) && content.role === 'tool' ? content : null;
    return clearOneResult(
      clearing,
      tool && {
        callId: tool.tool_call_id,
        cleared: (prefix) => chatResultStartsWith(tool, prefix),
        tokens: () => chatFacts(tool).tokenCount - MESSAGE_OVERHEAD_TOKENS,
        replaced: (placeholder) => clearedChatResult(tool, placeholder),
      },
    );
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
