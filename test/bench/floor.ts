/**
 * The floor the benchmark compares against: the least a sliding-window compaction can cost on this
 * stack. A bare BullMQ worker whose processor runs one hand-written SQL transaction with the same
 * row work as compactor's apply: lock the session, check the idempotency key, move the leaving rows
 * to the archive, insert the ledger row, update the counters. No validation, no lease, no snapshot,
 * no planner: what compactor adds on top is what the ratio measures.
 */
import { randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import type { Job, Worker } from 'bullmq';
import type postgres from 'postgres';
import type { QueueBackend } from '../../producer/queue/backend.ts';
import type { Message } from '../../shared/contract/message.ts';
import { estimateTextTokens } from '../../shared/contract/tokens.ts';
import { buildSummaryPrompt, SUMMARY_TOOL_NAME } from '../../shared/summary/prompt.ts';

/** Job data of the floor: the session and how many newest messages stay. */
export interface FloorJob {
  tenantId: string;
  sessionId: string;
  eventId: string;
  keep: number;
}

/**
 * Where a floor worker runs: its pool, the queue backend whose Worker class and connection it
 * takes (the same backend as the compactor run it is compared with), its queue, its concurrency.
 */
export interface FloorWorkerOptions {
  sql: postgres.Sql;
  queues: QueueBackend;
  queueName: string;
  concurrency: number;
}

/** A started floor worker and how to close it with the connection it opened. */
export interface FloorWorker {
  worker: Worker<FloorJob>;
  close(): Promise<void>;
}

/**
 * Opens a link on `options.queues` (on Postgres a pool as large as compactor's worker takes at that
 * concurrency: concurrency + 1, at most 10) and starts a `Worker` of that backend on it.
 */
function startOn(options: FloorWorkerOptions, processor: (job: Job<FloorJob>) => Promise<void>): FloorWorker {
  const link = options.queues.link({ poolSize: Math.min(options.concurrency + 1, 10) });
  const worker = new options.queues.Worker<FloorJob>(options.queueName, processor, {
    ...link.options,
    concurrency: options.concurrency,
  });
  worker.on('error', () => {});
  return {
    worker,
    close: async () => {
      await worker.close();
      await link.close();
    },
  };
}

/** Starts the floor worker on `queueName`. */
export function startFloorWorker(options: FloorWorkerOptions): FloorWorker {
  const { sql } = options;
  return startOn(options, async (job: Job<FloorJob>) => {
    await applyFloor(sql, job.data, null);
  });
}

/**
 * The floor of an LLM-bound summary (bench part 2): the least a summary compaction can cost on this
 * stack. Per job: one read of the session's messages, one Messages API call through the Anthropic
 * SDK (its own default `fetch`) with compactor's summary prompt of the leaving messages (so the
 * fake API does the same work for both) and a forced tool, and the floor's transaction writing the
 * tool's input as the summary. No validation, no lease, no pruning, no fidelity check, no event:
 * what compactor adds on top is what the ratio measures.
 */
export function startLlmFloorWorker(options: FloorWorkerOptions & { llmUrl: string }): FloorWorker {
  const { sql } = options;
  const client = new Anthropic({ apiKey: 'bench', baseURL: options.llmUrl, maxRetries: 0 });
  return startOn(options, async (job: Job<FloorJob>) => {
    const { tenantId, sessionId, keep } = job.data;
    const rows = await sql<Array<Message & { seq: string }>>`
        select seq, role, kind, content, tool_call_id as "toolCallId", tool_name as "toolName",
          tool_use_ids as "toolUseIds", tool_result_ids as "toolResultIds", has_thinking as thinking,
          token_count as "tokenCount", pinned
        from messages where tenant_id = ${tenantId} and session_id = ${sessionId}
        order by seq`;
    const leaving = rows.slice(0, Math.max(0, rows.length - keep)).map((r) => ({ ...r, seq: Number(r.seq) }));
    // compactor's own prompt (a pure function), so that the fake API does the same work for both.
    const prompt = buildSummaryPrompt({ previous: null, leaving, maxSummaryTokens: 2_000 });
    const answer = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 2_048,
      system: prompt.system,
      tools: [{ name: SUMMARY_TOOL_NAME, input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: SUMMARY_TOOL_NAME },
      messages: [{ role: 'user', content: prompt.user }],
    });
    const call = answer.content.find((block) => block.type === 'tool_use');
    await applyFloor(sql, job.data, JSON.stringify(call?.input ?? {}));
  });
}

/**
 * The floor's transaction: lock the session, check the idempotency key, move the leaving rows
 * (all but the newest `keep`, pinned ones stay) to the archive, write `summary` as a message at the
 * next seq when there is one, insert the ledger row, update the counters.
 */
async function applyFloor(sql: postgres.Sql, data: FloorJob, summary: string | null): Promise<void> {
  const { tenantId, sessionId, eventId, keep } = data;
  const key = `floor:${tenantId}:${eventId}`;
  await sql.begin(async (tx) => {
    const [session] = await tx`
      select last_seq, message_count, token_count, compaction_version from sessions
      where tenant_id = ${tenantId} and id = ${sessionId} for update`;
    if (!session) throw new Error(`no session ${sessionId}`);
    const [seen] =
      await tx`select 1 from compactions where tenant_id = ${tenantId} and idempotency_key = ${key}`;
    if (seen) return;
    const id = randomUUID();
    const [moved] = await tx`
      with moved as (
        delete from messages
        where tenant_id = ${tenantId} and session_id = ${sessionId} and seq <= ${Number(session.last_seq) - keep}
          and not pinned
        returning *
      ), archived as (
        insert into archived_messages (tenant_id, session_id, seq, role, kind, content, content_blocks,
          tool_call_id, tool_name, tool_use_ids, tool_result_ids, has_thinking, token_count, pinned, created_at,
          compaction_id)
        select tenant_id, session_id, seq, role, kind, content, content_blocks, tool_call_id, tool_name,
          tool_use_ids, tool_result_ids, has_thinking, token_count, pinned, created_at, ${id}::uuid
        from moved returning token_count
      )
      select count(*)::int as n, coalesce(sum(token_count), 0)::bigint as tokens from archived`;
    const n = Number(moved?.n ?? 0);
    const added = summary === null ? 0 : 1;
    const summaryTokens = summary === null ? 0 : estimateTextTokens(summary);
    const tokens = Number(moved?.tokens ?? 0) - summaryTokens;
    if (summary !== null) {
      await tx`
        insert into messages (tenant_id, session_id, seq, role, kind, content, content_blocks, token_count, pinned)
        values (${tenantId}, ${sessionId}, ${Number(session.last_seq) + 1}, 'user', 'message', ${summary},
          to_json(${summary}::text), ${summaryTokens}, false)`;
    }
    await tx`
      insert into compactions (id, tenant_id, session_id, idempotency_key, event_id, trigger, strategy, status,
        messages_before, messages_after, tokens_before, tokens_after, messages_archived, summary)
      values (${id}, ${tenantId}, ${sessionId}, ${key}, ${eventId}, 'event',
        ${summary === null ? 'slidingWindow' : 'summarize'}, 'applied',
        ${session.message_count}, ${Number(session.message_count) - n + added}, ${session.token_count},
        ${Number(session.token_count) - tokens}, ${n}, ${summary})`;
    await tx`
      update sessions set message_count = message_count - ${n - added}, token_count = token_count - ${tokens},
        last_seq = last_seq + ${added}, compaction_version = compaction_version + 1,
        compaction_count = compaction_count + 1, last_compacted_at = now(), updated_at = now()
      where tenant_id = ${tenantId} and id = ${sessionId}`;
  });
}
