/** Reads of `sessions` for the HTTP API and the CLI: whether a tenant has a session, how many are live. */

import type { Db } from '../../../producer/postgres/db.ts';
import { and, eq, isNull } from '../../../producer/postgres/orm.ts';
import { sessions } from '../../../producer/postgres/schema.ts';

/** Whether the tenant has this session. */
export async function sessionExists(db: Db, tenantId: string, sessionId: string): Promise<boolean> {
  const [session] = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
  return session !== undefined;
}

/** The sessions of all tenants that did not continue in a child session: those a sweep walks. */
export function countLiveSessions(db: Db): Promise<number> {
  return db.$count(sessions, isNull(sessions.childSessionId));
}
