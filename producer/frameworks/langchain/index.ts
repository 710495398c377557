/**
 * compactor for LangChain.js agents (`createAgent` of `langchain` v1): a middleware that keeps the
 * agent's session in compactor and calls the model with the compacted context, the message mapping
 * of the two session formats it stores in, and compactor's MCP recall tools bound to the run's
 * session. `import { compactorMiddleware } from '@agent-compactor/compactor/langchain'`; see
 * docs/guide/langchain.md.
 */
export { fromAnthropicContext, fromAnthropicMessage, toAnthropicMessage } from './anthropic-messages.ts';
export { fromChatMessage, toChatMessage } from './chat-messages.ts';
export {
  contextMessages,
  formatOfModel,
  LANGCHAIN_FORMATS,
  type LangChainFormat,
  storedMessages,
} from './format.ts';
export { type CompactorMiddlewareOptions, compactorMiddleware } from './middleware.ts';
export { type RecallServer, recallServer, sessionRecallTools } from './recall-tools.ts';
export { type SessionIdOption, type SessionScope, sessionIdOf } from './session-id.ts';
