/**
 * compactor for agents on the Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, an optional peer
 * dependency): one call gives the `query()` options that keep the agent's sessions in compactor.
 *
 * ```ts
 * const compactor = compactorOptions({ db, producer, tenantId: 'acme', recall: { apiUrl, apiKey } });
 * for await (const message of query({ prompt, options: { ...compactor, resume: sessionId } })) { … }
 * ```
 *
 * - `sessionStore` (store.ts): every transcript line in compactor, the conversation as an
 *   `anthropic` session compacted by the workers; a resume starts from compactor's compacted history;
 * - `hooks` (hooks.ts): `SessionStart` adds compactor's checkpoint after Claude Code compacts on its
 *   own (or resumes), `PreCompact` gives Claude Code's compaction the policy's summary instructions,
 *   `Stop` enqueues `session.run.completed` at the end of each run;
 * - `mcpServers` (recall.ts): the recall tools of `compactor api`'s MCP server, allowed to run.
 */
import type { Options } from '@anthropic-ai/claude-agent-sdk';
import type { RunCompletedInput } from '../../../shared/protocol/events.ts';
import type { Db } from '../../postgres/db.ts';
import { compactorHooks, type RunCompletedEvent } from './hooks.ts';
import { type RecallServer, recallNote, recallServer } from './recall.ts';
import { CompactorSessionStore } from './store.ts';

export { BOUNDARY_TEXT, type ChainInput, compactionChain } from './chain.ts';
export {
  type CompactorHooksOptions,
  checkpointText,
  compactorHooks,
  type RunCompletedEvent,
} from './hooks.ts';
export { isMessageLine, type Line, type LineMessage, lastUsageOf, messagesOf } from './lines.ts';
export { policyInstructions, summaryInstructionsOf } from './policy.ts';
export { RECALL_SERVER_NAME, type RecallServer, recallNote, recallServer } from './recall.ts';
export { CompactorSessionStore, type CompactorSessionStoreOptions, type RunEnd } from './store.ts';

/** What {@link compactorOptions} works with. */
export interface CompactorOptionsInput {
  /** compactor's database (`openDatabase(url).db`). */
  db: Db;
  /** Enqueues `session.run.completed`: a compactor `Producer` (`createProducer({ db })`). */
  producer: { runCompleted(event: RunCompletedInput): Promise<unknown> };
  /** The tenant every session belongs to. */
  tenantId: string;
  /** The agent the sessions are created for (its policy, when set, wins over the tenant's). */
  agentId?: string | null;
  /** The model's context window in tokens, recorded on new sessions. */
  contextWindow?: number | null;
  /**
   * `compactor api`'s base URL and a key of the tenant with scope `context:read`: the agent gets the
   * recall tools of its MCP server (`/v1/mcp`). Absent: no recall tools.
   */
  recall?: RecallServer;
  /** Told of each `session.run.completed` enqueued at the end of a run. */
  onRunCompleted?: (event: RunCompletedEvent) => void;
  /** Told when a resume is served the transcript as written (see `CompactorSessionStore`). Default `console.warn`. */
  onWarning?: (message: string) => void;
}

/** The `query()` options {@link compactorOptions} sets: spread them into yours. */
export type CompactorAgentOptions = Required<Pick<Options, 'sessionStore' | 'sessionStoreFlush' | 'hooks'>> &
  Pick<Options, 'mcpServers' | 'allowedTools'>;

/**
 * The options that keep an agent's sessions in compactor, to spread into `query()`'s: `sessionStore`
 * (a {@link CompactorSessionStore}), `sessionStoreFlush: 'eager'` (each line reaches the store as it
 * is written, so the `Stop` hook finds the run whole), `hooks` (`SessionStart`, `PreCompact`,
 * `Stop`), and with `recall` the MCP server (`mcpServers.compactor`) and `allowedTools` for its two
 * tools. Options of your own with the same names replace these: merge them instead (your `hooks`
 * beside these, your tools beside `allowedTools`).
 * @throws {InvalidInputError} when the tenant id is not a valid id, or `recall.apiUrl` not an http(s) URL.
 */
export function compactorOptions(input: CompactorOptionsInput): CompactorAgentOptions {
  const note = input.recall ? (sessionId: string) => recallNote(sessionId) : () => null;
  const store = new CompactorSessionStore({
    db: input.db,
    tenantId: input.tenantId,
    agentId: input.agentId ?? null,
    contextWindow: input.contextWindow ?? null,
    compactedNote: note,
    ...(input.onWarning ? { onWarning: input.onWarning } : {}),
  });
  const hooks = compactorHooks({
    db: input.db,
    producer: input.producer,
    tenantId: input.tenantId,
    agentId: input.agentId ?? null,
    store,
    recallNote: note,
    ...(input.onRunCompleted ? { onRunCompleted: input.onRunCompleted } : {}),
  });
  return {
    sessionStore: store,
    sessionStoreFlush: 'eager',
    hooks,
    ...(input.recall ? recallServer(input.recall) : {}),
  };
}
