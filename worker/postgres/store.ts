/**
 * The Postgres adapter of the pipeline as one object: its reads ({@link PostgresReads}) and its
 * fenced writes ({@link PostgresWrites}) on one database. The runtime builds one per process and
 * hands it to the pipeline as both ports.
 */
import type { Db } from '../../producer/postgres/db.ts';
import type { CompactionRow } from '../../producer/postgres/schema.ts';
import type {
  Change,
  Decision,
  FencedWrites,
  Gate,
  LockedRead,
  NoChange,
  SessionReads,
  Snapshot,
  WriteResult,
} from '../pipeline/ports.ts';
import type { PolicySource } from './policies.ts';
import { PostgresReads } from './reads.ts';
import { PostgresWrites } from './writes.ts';

/** Reads and fenced writes of compactor's tables, bound to one database. */
export class CompactionStore implements SessionReads, FencedWrites {
  readonly reads: PostgresReads;
  readonly writes: PostgresWrites;

  /**
   * @param options.policies where the gate takes the policies from (a cache kept current by
   *   `LISTEN`); absent, the gate's statement reads them each time.
   */
  constructor(db: Db, options: { policies?: PolicySource } = {}) {
    this.reads = new PostgresReads(db, options.policies ?? null);
    this.writes = new PostgresWrites(db, this.reads);
  }

  loadGate(tenantId: string, sessionId: string, idempotencyKey: string | null = null): Promise<Gate> {
    return this.reads.loadGate(tenantId, sessionId, idempotencyKey);
  }
  loadSnapshot(tenantId: string, sessionId: string): Promise<Snapshot> {
    return this.reads.loadSnapshot(tenantId, sessionId);
  }
  loadMessages(tenantId: string, sessionId: string, seqs: number[]) {
    return this.reads.loadMessages(tenantId, sessionId, seqs);
  }
  loadContents(tenantId: string, sessionId: string, seqs: number[]) {
    return this.reads.loadContents(tenantId, sessionId, seqs);
  }
  loadConversation(tenantId: string, sessionId: string, seqs: number[]) {
    return this.reads.loadConversation(tenantId, sessionId, seqs);
  }
  pagedMessages(tenantId: string, sessionId: string, seqs: number[]) {
    return this.reads.pagedMessages(tenantId, sessionId, seqs);
  }
  findByKey(tenantId: string, idempotencyKey: string): Promise<CompactionRow | undefined> {
    return this.reads.findByKey(tenantId, idempotencyKey);
  }
  /** The session's ledger, oldest first. Tenant-scoped. */
  history(tenantId: string, sessionId: string): Promise<CompactionRow[]> {
    return this.reads.history(tenantId, sessionId);
  }
  /** @throws {SessionNotFoundError} unless the tenant has this session. */
  assertSession(tenantId: string, sessionId: string): Promise<void> {
    return this.reads.assertSession(tenantId, sessionId);
  }
  apply(change: Change): Promise<WriteResult> {
    return this.writes.apply(change);
  }
  applyUnderLock(read: LockedRead, decide: (snapshot: Snapshot) => Decision): Promise<WriteResult> {
    return this.writes.applyUnderLock(read, decide);
  }
  record(noChange: NoChange): Promise<WriteResult> {
    return this.writes.record(noChange);
  }
  reportContextTokens(tenantId: string, sessionId: string, inputTokens: number): Promise<void> {
    return this.writes.reportContextTokens(tenantId, sessionId, inputTokens);
  }
}
