/**
 * compactor for Mastra agents (`@agent-compactor/compactor/mastra`): a processor that keeps an
 * agent's conversation in a compactor session and has the model read the session's context at
 * every step, and the recall tools of compactor's MCP server with the session filled in.
 *
 * ```ts
 * const compactor = new CompactorProcessor({ db, producer, tenantId: 'acme' });
 * const agent = new Agent({
 *   ...,
 *   tools: { ...tools, ...recallTools(await mcp.listToolsets().then((t) => t.compactor), compactor) },
 *   inputProcessors: [compactor],
 *   outputProcessors: [compactor],
 * });
 * ```
 *
 * Needs `@mastra/core` (1.x) beside this package; the recall tools need `@mastra/mcp`'s
 * `MCPClient` connected to compactor's `/v1/mcp`. docs/guide/mastra.md says what is stored and how.
 */
export type { AnyLoadedContext, SessionCodec } from './codec.ts';
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
