/**
 * Which session format a LangChain agent's messages are stored in, and the two directions of each:
 * LangChain messages → stored messages (refusing what the format cannot hold), a loaded context →
 * the LangChain messages the model is called with. Pure but for {@link formatOfModel}, which may
 * build a configurable model's instance.
 *
 * The choice (see docs/guide/langchain.md):
 * - `anthropic` for `ChatAnthropic` (`_llmType()` is `anthropic`): its replies hold the Messages
 *   API's own blocks (thinking with its signature, `tool_use`, server tool results), which only the
 *   `anthropic` format keeps byte for byte;
 * - `openai-chat` for every other chat model: LangChain's message types map one to one onto Chat
 *   Completions messages (human → user, ai → assistant with `tool_calls`, tool → tool,
 *   system → system), which any OpenAI-compatible server takes.
 * The middleware's `format` option overrides it; a session keeps the format it was created with.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatCompletionsMessage, LoadedChatContext, LoadedContext } from '../../index.ts';
import { fromAnthropicContext, toAnthropicMessage } from './anthropic-messages.ts';
import { placeOf } from './blocks.ts';
import { fromChatMessage, toChatMessage } from './chat-messages.ts';

/** The session formats a LangChain agent's messages are stored in. */
export const LANGCHAIN_FORMATS = ['openai-chat', 'anthropic'] as const;
/** One of {@link LANGCHAIN_FORMATS}. */
export type LangChainFormat = (typeof LANGCHAIN_FORMATS)[number];

/** What {@link formatOfModel} reads off a model: LangChain's provider name, or how to build one. */
interface ModelLike {
  _llmType?: () => string;
  _getModelInstance?: () => Promise<unknown>;
}

/**
 * The format for `model` (see the file comment): `anthropic` when it is (or, a configurable model
 * from `initChatModel`, builds) a model whose `_llmType()` is `anthropic`, or the string id of one
 * (`anthropic:claude-…`); else `openai-chat`.
 */
export async function formatOfModel(model: unknown): Promise<LangChainFormat> {
  if (typeof model === 'string') return model.startsWith('anthropic:') ? 'anthropic' : 'openai-chat';
  let instance = model as ModelLike | null;
  if (instance && typeof instance._getModelInstance === 'function') {
    instance = (await instance._getModelInstance()) as ModelLike | null;
  }
  const type = instance && typeof instance._llmType === 'function' ? instance._llmType() : '';
  return type === 'anthropic' ? 'anthropic' : 'openai-chat';
}

/**
 * `messages` as the stored messages of `format`, in order; `first` is the place of the first one in
 * the list the agent holds (for errors: `messages[7] (ai)`).
 * @throws {InvalidInputError} naming the message and the field, for the first message the format
 *   cannot hold; nothing is returned, so nothing is stored.
 */
export function storedMessages(
  messages: readonly BaseMessage[],
  format: LangChainFormat,
  first: number,
): Array<ChatCompletionsMessage | MessageParam> {
  return messages.map((m, i) =>
    format === 'anthropic'
      ? toAnthropicMessage(m, placeOf(m, first + i))
      : toChatMessage(m, placeOf(m, first + i)),
  );
}

/**
 * The messages the model is called with, from a loaded context of `format`: an `openai-chat`
 * context's messages one by one; an `anthropic` context's `system` (a `SystemMessage`) and turns.
 * @throws {InvalidInputError} for a message this adapter never stores (see chat-messages.ts).
 */
export function contextMessages(context: LoadedContext | LoadedChatContext): BaseMessage[] {
  if ('format' in context) {
    return context.messages.map((m, i) => fromChatMessage(m, `context.messages[${i}]`));
  }
  return fromAnthropicContext(context.system, context.messages);
}
