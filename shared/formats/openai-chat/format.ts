/**
 * The `openai-chat` session format (format.ts): a row holds a whole Chat Completions message,
 * appended as row.ts checks it, rendered as context.ts says, imported from a JSONL of requests
 * (transcript.ts); clearing as clearing.ts says. A Chat Completions message carries no thinking to
 * drop. Pure.
 */
import { MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import { clearOneResult, type FormatVocabulary, type SessionFormat } from '../format.ts';
import { chatApiMessageSchema, chatContextSchema } from './api-schema.ts';
import {
  chatResultStartsWith,
  chatRewriteOf,
  chatToolNames,
  clearedChatInputs,
  clearedChatResult,
} from './clearing.ts';
import { renderChatContext } from './context.ts';
import { chatImages, chatMedia } from './media.ts';
import { CHAT_ROLES, chatFacts, isChatMessage } from './message.ts';
import { chatRow } from './row.ts';
import { parseChatRequestsJsonl } from './transcript.ts';

/**
 * A Chat Completions request message's words (`ChatCompletionMessageParam`, and the assistant
 * message a completion returns: `refusal`, `annotations`, `audio`, `function_call`).
 */
const VOCABULARY: FormatVocabulary = {
  messages: 'OpenAI Chat Completions messages',
  itemTypes: new Set(),
  roles: new Set(CHAT_ROLES),
  fields: new Set([
    'role',
    'content',
    'name',
    'tool_calls',
    'tool_call_id',
    'refusal',
    'annotations',
    'audio',
    'function_call',
  ]),
  partTypes: new Set(['text', 'image_url', 'input_audio', 'file', 'refusal']),
  nullContent: true,
  openItemTypes: false,
  names: {
    item: 'a Chat Completions item',
    role: 'a Chat Completions role',
    field: 'a Chat Completions field',
    part: 'a Chat Completions content part',
    nullContent: "a Chat Completions message's",
  },
};

/** The `openai-chat` format, for the registry. */
export const openaiChatFormat: SessionFormat = {
  name: 'openai-chat',
  vocabulary: VOCABULARY,
  apiSchemas: { message: chatApiMessageSchema, context: chatContextSchema },
  rowOf: chatRow,
  renderContext: (input) => ({ format: 'openai-chat', ...renderChatContext(input) }),
  summaryTokens: (input) => renderChatContext(input).tokens,
  transcripts: {
    'openai-chat': {
      detects: (first) => (Array.isArray(first.messages) ? 'yes' : 'no'),
      looksLike: 'a Chat Completions request (messages)',
      parse: (text, file) =>
        parseChatRequestsJsonl(text, file).map((message) => ({ message, createdAt: null })),
    },
  },
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
  mediaOf: chatMedia,
  imagesOf: chatImages,
  rewriteOf(meta, content) {
    if (!isChatMessage(content))
      throw new Error(`openai-chat: seq ${meta.seq} holds no Chat Completions message`);
    return chatRewriteOf(meta, content);
  },
};
