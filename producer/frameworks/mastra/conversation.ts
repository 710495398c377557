/**
 * The conversation a Mastra agent's model would receive, as AI SDK prompt messages: Mastra's own
 * conversion of its `MessageList` (`messageList.get.all.aiV5/aiV6/aiV7.llmPrompt`, the one its agent
 * loop calls before every model request, by the model's `specificationVersion`), without the
 * leading system messages. Reads only what it is given (and, like Mastra, fetches the files of URLs
 * the model does not take itself).
 */
import { type MastraDBMessage, MessageList } from '@mastra/core/agent';
import { type PromptMessage, type PromptVersion, promptVersionOf, splitPrompt } from './prompt.ts';

/** What converting a message list for a model needs of the model: what Mastra's loop passes. */
export interface PromptTarget {
  version: PromptVersion;
  /** The URLs the model fetches itself, by media type (`model.supportedUrls`); other URLs are downloaded. */
  supportedUrls: Record<string, RegExp[]> | undefined;
  /** The model's provider id, so that Mastra drops provider-executed results of another provider. */
  targetProvider: string | undefined;
}

/** The model fields read (a Mastra `MastraLanguageModel`: the AI SDK model it wraps). */
export interface PromptModel {
  specificationVersion?: unknown;
  provider?: unknown;
  modelId?: unknown;
  supportedUrls?: unknown;
}

/** The {@link PromptTarget} of a model, as Mastra's loop builds it (`buildLlmPromptArgs`). */
export async function promptTargetOf(model: PromptModel): Promise<PromptTarget> {
  const supported = (await model.supportedUrls) as Record<string, RegExp[]> | undefined;
  return {
    version: promptVersionOf(model.specificationVersion),
    supportedUrls: supported ?? undefined,
    targetProvider: typeof model.provider === 'string' ? model.provider : undefined,
  };
}

/** The conversation (prompt messages after the leading system ones) of `list` for `target`. */
export async function conversationOf(list: MessageList, target: PromptTarget): Promise<PromptMessage[]> {
  const all = list.get.all;
  const build =
    target.version === 'v4'
      ? all.aiV7.llmPrompt
      : target.version === 'v3'
        ? all.aiV6.llmPrompt
        : all.aiV5.llmPrompt;
  const prompt = await build({
    ...(target.supportedUrls ? { supportedUrls: target.supportedUrls } : {}),
    ...(target.targetProvider ? { targetProvider: target.targetProvider } : {}),
  });
  return splitPrompt(prompt as unknown as PromptMessage[]).conversation;
}

/**
 * The messages `list` begins with that Mastra's memory loaded (source `memory`: a thread's history
 * from an earlier run), and their conversation for `target`: a prefix of the whole list's.
 */
export async function rememberedConversation(
  list: MessageList,
  target: PromptTarget,
): Promise<{ messages: MastraDBMessage[]; conversation: PromptMessage[] }> {
  const source = list.makeMessageSourceChecker();
  const messages: MastraDBMessage[] = [];
  for (const message of list.get.all.db()) {
    if (source.getSource(message) !== 'memory') break;
    messages.push(message);
  }
  if (messages.length === 0) return { messages, conversation: [] };
  const remembered = new MessageList().add(messages, 'memory');
  return { messages, conversation: await conversationOf(remembered, target) };
}
