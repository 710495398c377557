/**
 * compactor for Mastra agents (`@agent-compactor/compactor/mastra`): a processor that keeps an
 * agent's conversation in a compactor session and has the model read the session's context at
 * every step, and the recall tools of compactor's MCP server with the session filled in.
 *
 * ```ts
 * const compactor = await createMastraCompactor({ tenantId: 'acme', recall: { apiUrl, apiKey } });
 * const agent = new Agent({
 *   ...,
 *   tools: { ...tools, ...compactor.tools },
 *   inputProcessors: [compactor.processor],
 *   outputProcessors: [compactor.processor],
 * });
 * ```
 *
 * Needs `@mastra/core` (1.x) beside this package, and `@mastra/mcp` (2.x) for the recall tools
 * (`MCPClient` on compactor's `/v1/mcp`). The pieces are exported too: {@link CompactorProcessor}
 * on a database and producer of your own, {@link recallTools} on an `MCPClient` of your own.
 * docs/guide/mastra.md says what is stored and how.
 */

export { anthropicCodec } from './anthropic.ts';
export type { AnyLoadedContext, SessionCodec } from './codec.ts';
export {
  createMastraCompactor,
  type MastraCompactor,
  type MastraCompactorOptions,
} from './compactor.ts';
export { openaiChatCodec } from './openai-chat.ts';
export {
  CompactorProcessor,
  type CompactorProcessorOptions,
  type MastraRun,
  type RunCompletedInfo,
} from './processor.ts';
export type {
  ConversationMessage,
  FilePart,
  PromptMessage,
  PromptPart,
  PromptVersion,
  ProviderOptions,
  ReasoningPart,
  TextPart,
  ToolCallPart,
  ToolResultOutput,
  ToolResultPart,
} from './prompt.ts';
export { type McpTool, RECALL_TOOL_NAMES, type RecallToolName, recallTools } from './recall.ts';
export { CODECS, codecFor, defaultFormatFor, type MastraSessionFormat } from './registry.ts';
