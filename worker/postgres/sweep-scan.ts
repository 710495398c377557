/**
 * The sweep's scan of `sessions`: every live session (not continued in a child), in keyset order
 * (`(tenant_id, id) > (last page's last)`, never OFFSET), through the partial covering index
 * `sessions_sweep_idx`, one page at a time, so memory stays flat however many sessions there are.
 */

import type { Db } from '../../producer/postgres/db.ts';
import { sql } from '../../producer/postgres/orm.ts';

/** One session as the sweep reads it (postgres.js returns int8 as text). */
export type SweepRow = {
  tenant_id: string;
  id: string;
  agent_id: string | null;
  message_count: number;
  token_count: string;
  context_window: number | null;
  last_compacted_at: string | Date | null;
  last_seq: string;
  compaction_version: number;
  storm_guard_seq: string | null;
  reported_input_tokens: number | null;
  reported_token_count: string | null;
};

/** The live sessions, a page of at most `pageSize` rows at a time, in (tenant_id, id) order. */
export async function* liveSessionPages(db: Db, pageSize: number): AsyncGenerator<SweepRow[]> {
  let after: { tenant: string; id: string } | null = null;
  for (;;) {
    const page: SweepRow[] = await db.execute<SweepRow>(sql`
      select tenant_id, id, agent_id, message_count, token_count, context_window, last_compacted_at, last_seq,
        compaction_version, storm_guard_seq, reported_input_tokens, reported_token_count
      from sessions
      where child_session_id is null
        ${after ? sql`and (tenant_id, id) > (${after.tenant}, ${after.id})` : sql``}
      order by tenant_id, id
      limit ${pageSize}`);
    if (page.length === 0) return;
    yield page;
    const last = page[page.length - 1] as SweepRow;
    after = { tenant: last.tenant_id, id: last.id };
    if (page.length < pageSize) return;
  }
}
