/**
 * The floor the benchmark compares against: the least a sliding-window compaction can cost on this
 * stack. A bare BullMQ worker whose processor runs one hand-written SQL transaction with the same
 * row work as compactor's apply: lock the session, check the idempotency key, move the leaving rows
 * to the archive, insert the ledger row, update the counters. No validation, no lease, no snapshot,
 * no planner: what compactor adds on top is what the ratio measures.
 */
import { randomUUID } from 'node:crypto';
import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type postgres from 'postgres';

/** Job data of the floor: the session and how many newest messages stay. */
export interface FloorJob {
  tenantId: string;
  sessionId: string;
  eventId: string;
  keep: number;
}

/** Starts the floor worker on `queueName`. */
export function startFloorWorker(options: {
  sql: postgres.Sql;
  connection: Redis;
  prefix: string;
  queueName: string;
  concurrency: number;
}): Worker<FloorJob> {
  const { sql } = options;
  return new Worker<FloorJob>(
    options.queueName,
    async (job: Job<FloorJob>) => {
      const { tenantId, sessionId, eventId, keep } = job.data;
      const key = `floor:${tenantId}:${eventId}`;
      await sql.begin(async (tx) => {
        const [session] = await tx`
          select last_seq, message_count, token_count, compaction_version from sessions
          where tenant_id = ${tenantId} and id = ${sessionId} for update`;
        if (!session) throw new Error(`no session ${sessionId}`);
        const [seen] = await tx`select 1 from compactions where idempotency_key = ${key}`;
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
        const tokens = Number(moved?.tokens ?? 0);
        await tx`
          insert into compactions (id, tenant_id, session_id, idempotency_key, event_id, trigger, strategy, status,
            messages_before, messages_after, tokens_before, tokens_after, messages_archived)
          values (${id}, ${tenantId}, ${sessionId}, ${key}, ${eventId}, 'event', 'slidingWindow', 'applied',
            ${session.message_count}, ${Number(session.message_count) - n}, ${session.token_count},
            ${Number(session.token_count) - tokens}, ${n})`;
        await tx`
          update sessions set message_count = message_count - ${n}, token_count = token_count - ${tokens},
            compaction_version = compaction_version + 1, compaction_count = compaction_count + 1,
            last_compacted_at = now(), updated_at = now()
          where tenant_id = ${tenantId} and id = ${sessionId}`;
      });
    },
    { connection: options.connection, prefix: options.prefix, concurrency: options.concurrency },
  );
}
