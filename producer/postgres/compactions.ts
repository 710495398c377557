/** The client's read of the ledger (`compactions`): one row by id, within its tenant. */

import type { Db } from './db.ts';
import { and, eq } from './orm.ts';
import { type CompactionRow, compactions } from './schema.ts';

/** The tenant's ledger row with this id; null when there is none. */
export async function ledgerRow(db: Db, tenantId: string, id: string): Promise<CompactionRow | null> {
  const [row] = await db
    .select()
    .from(compactions)
    .where(and(eq(compactions.tenantId, tenantId), eq(compactions.id, id)));
  return row ?? null;
}
