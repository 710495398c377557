/**
 * compactor for the OpenAI Agents SDK for TypeScript (`@openai/agents`, tested with 0.20.0):
 * {@link CompactorSession}, the SDK's `Session` over a compactor session of format
 * `openai-responses`. Give it to `run()` as `{ session }`: the SDK reads the compacted history
 * through it before each run, appends the run's items after, and its `runCompaction` hook enqueues
 * `session.run.completed` so that a worker compacts between runs. {@link connectRecall} gives the
 * agent compactor's recall tools as an MCP server of the SDK's. See docs/guide/openai-agents.md.
 *
 * ```ts
 * import { CompactorSession, connectRecall } from '@agent-compactor/compactor/openai-agents';
 * const session = new CompactorSession({ db, producer, tenantId: 'acme', sessionId: 'user-42' });
 * const recall = await connectRecall({ session, apiUrl, apiKey });
 * await run(new Agent({ name: 'coder', mcpServers: [recall] }), 'Fix the parser.', { session });
 * ```
 */
export { callsOf, toAgentItem, toAgentItems } from './from-responses.ts';
export { CompactorRecallServer, connectRecall, type RecallServerOptions } from './recall.ts';
export { CompactorSession, type CompactorSessionOptions, type RunCompletedRecord } from './session.ts';
export {
  type CallTool,
  MAPPED_TYPES,
  SDK_PLACEHOLDER_ID,
  toResponsesItem,
  toResponsesItems,
} from './to-responses.ts';
export { lastRequestTokens, type RunUsage } from './usage.ts';
