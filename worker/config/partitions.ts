/**
 * The hash partitioning of the history: `messages` and `archived_messages` are each
 * `PARTITION BY HASH (tenant_id)` into the same number of partitions (`messages_p0` ..
 * `messages_p{n-1}`, likewise `archived_messages_p*`), fixed when migration 0015 ran. A statement
 * that names one tenant reads one partition of each.
 */
import { InvalidInputError } from '../../shared/contract/errors.ts';

/** Partitions per history table unless `COMPACTOR_HISTORY_PARTITIONS` says otherwise. */
export const DEFAULT_HISTORY_PARTITIONS = 16;

/** The most partitions the migration creates per table (planning cost grows with the count). */
export const MAX_HISTORY_PARTITIONS = 1024;

/**
 * The custom Postgres setting the migration reads the partition count from (the migration runner
 * sets it on its connection; unset, the migration uses {@link DEFAULT_HISTORY_PARTITIONS}).
 */
export const PARTITIONS_SETTING = 'compactor.history_partitions';

/**
 * Checks a partition count: a whole number from 1 to {@link MAX_HISTORY_PARTITIONS}.
 * @throws {InvalidInputError} naming the value and the rule.
 */
export function assertPartitionCount(count: number): number {
  if (!Number.isInteger(count) || count < 1 || count > MAX_HISTORY_PARTITIONS)
    throw new InvalidInputError(
      `invalid history partition count ${count}: use a whole number from 1 to ${MAX_HISTORY_PARTITIONS}`,
    );
  return count;
}
