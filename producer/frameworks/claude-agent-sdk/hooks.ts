/**
 * The Agent SDK hooks that tie Claude Code's own session life to compactor's:
 * - `SessionStart` (source `compact` or `resume`): compactor's checkpoint, the summary of the
 *   session's compacted history as `loadContext` renders it, as `additionalContext`, so an agent
 *   that has just compacted on its own (or resumed) also has compactor's record, with the session
 *   id its recall tools take;
 * - `PreCompact`: the summary instructions of the policy in force (policy.ts), which Claude Code adds
 *   to its own compaction's prompt (it takes a callback's `systemMessage` as the custom instructions);
 * - `Stop`: the end of a run: the store takes the transcript's last lines (store.ts `endRun`), then
 *   `session.run.completed` is enqueued with the size of the run's last request.
 */
import { randomUUID } from 'node:crypto';
import type {
  HookCallbackMatcher,
  HookEvent,
  HookInput,
  HookJSONOutput,
} from '@anthropic-ai/claude-agent-sdk';
import { SUMMARY_INTRO } from '../../../shared/context/render.ts';
import { SessionNotFoundError } from '../../../shared/contract/errors.ts';
import type { RunCompletedInput } from '../../../shared/protocol/events.ts';
import { loadContext } from '../../context.ts';
import type { Db } from '../../postgres/db.ts';
import { policyInstructions } from './policy.ts';
import type { CompactorSessionStore } from './store.ts';

/** What a run's end enqueued (the `session.run.completed` event, as given to the producer). */
export interface RunCompletedEvent {
  eventId: string;
  tenantId: string;
  /** The live compactor session (the SDK's session id, or the child it continued in). */
  sessionId: string;
  inputTokens?: number;
  cacheReadTokens?: number;
}

/** What {@link compactorHooks} works with. */
export interface CompactorHooksOptions {
  db: Db;
  /** Enqueues `session.run.completed` (a compactor `Producer`). */
  producer: { runCompleted(event: RunCompletedInput): Promise<unknown> };
  tenantId: string;
  agentId?: string | null;
  store: CompactorSessionStore;
  /** A sentence telling the model how to call recall in this session, added to the checkpoint. */
  recallNote?: (sessionId: string) => string | null;
  /** Told of each `session.run.completed` enqueued. */
  onRunCompleted?: (event: RunCompletedEvent) => void;
}

/**
 * The checkpoint of the session as the agent should read it: the text of the summary that stands
 * first in its compacted context, or null when compactor has not compacted it (or has no such
 * session). Reads the database.
 */
export async function checkpointText(db: Db, tenantId: string, sessionId: string): Promise<string | null> {
  let context: Awaited<ReturnType<typeof loadContext>>;
  try {
    context = await loadContext(db, { tenantId, sessionId, compactionBlock: 'text', thinking: 'strip' });
  } catch (error) {
    if (error instanceof SessionNotFoundError) return null;
    throw error;
  }
  const first = context.messages[0];
  if (first?.role !== 'user') return null;
  const blocks = typeof first.content === 'string' ? [{ type: 'text', text: first.content }] : first.content;
  for (const block of blocks) {
    if (block.type === 'text' && block.text.startsWith(SUMMARY_INTRO)) return block.text;
  }
  return null;
}

/**
 * The hooks, as `query()`'s `hooks` option takes them. Each throws what the database throws; the SDK
 * reports a failed hook and goes on (a failed `Stop` leaves the run's event unsent, which the next
 * run's end makes up for: it enqueues for the whole session).
 */
export function compactorHooks(
  options: CompactorHooksOptions,
): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const { db, tenantId } = options;
  const agentId = options.agentId ?? null;
  const sessionStart = async (input: HookInput): Promise<HookJSONOutput> => {
    if (input.hook_event_name !== 'SessionStart') return {};
    if (input.source !== 'compact' && input.source !== 'resume') return {};
    const summary = await checkpointText(db, tenantId, input.session_id);
    if (summary === null) return {};
    const note = options.recallNote?.(input.session_id) ?? null;
    return {
      hookSpecificOutput: {
        hookEventName: 'SessionStart',
        additionalContext: note === null ? summary : `${summary}\n\n${note}`,
      },
    };
  };
  const preCompact = async (input: HookInput): Promise<HookJSONOutput> => {
    if (input.hook_event_name !== 'PreCompact') return {};
    const instructions = await policyInstructions(db, tenantId, agentId);
    return instructions === null ? {} : { systemMessage: instructions };
  };
  const stop = async (input: HookInput): Promise<HookJSONOutput> => {
    if (input.hook_event_name !== 'Stop') return {};
    const end = await options.store.endRun(input.session_id, input.transcript_path);
    if (end.liveSessionId === null) return {};
    const event: RunCompletedEvent = {
      eventId: randomUUID(),
      tenantId,
      sessionId: end.liveSessionId,
      ...(end.usage ?? {}),
    };
    await options.producer.runCompleted(event);
    options.onRunCompleted?.(event);
    return {};
  };
  return {
    SessionStart: [{ hooks: [sessionStart] }],
    PreCompact: [{ hooks: [preCompact] }],
    Stop: [{ hooks: [stop] }],
  };
}
