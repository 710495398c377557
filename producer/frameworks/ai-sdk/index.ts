/**
 * compactor for the Vercel AI SDK (`ai` 5, 6 and 7): a language-model middleware that keeps an
 * agent's conversation in a compactor session (format `ai-sdk`: the AI SDK's provider-level prompt
 * messages, one per row) and sends the model the session's context, compacted when a worker has
 * compacted it. docs/guide/ai-sdk.md says what is stored and when.
 *
 * ```ts
 * import { generateText, wrapLanguageModel } from 'ai';
 * import { compactorMiddleware } from '@agent-compactor/compactor/ai-sdk';
 *
 * const model = wrapLanguageModel({
 *   model: anthropic('claude-sonnet-5'),
 *   middleware: compactorMiddleware({ db, producer, tenantId: 'acme', sessionId: 'chat-1' }),
 * });
 * ```
 */
export {
  type CompactorMiddleware,
  type CompactorMiddlewareExtras,
  type CompactorMiddlewareOptions,
  type CompactorMiddlewareV2,
  type CompactorMiddlewareV3,
  type CompletedRun,
  compactorMiddleware,
  type PortableMiddlewareFunctions,
} from './middleware.ts';
export { afterLastAssistant, splitPrompt } from './prompt.ts';
export { type AnyContent, type AnyMessage, replyMessage } from './reply.ts';
export { type InputUsage, inputUsageOf, type SpecificationVersion } from './versions.ts';
