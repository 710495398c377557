/**
 * The columns a message row carries, shared by `messages` and `archived_messages`, in one order:
 * every statement that moves rows between the two (archive, restore, the child copy) lists them
 * from here, so a column added to the schema cannot be dropped by one of them.
 */

const FIELDS = [
  'seq',
  'role',
  'kind',
  'content',
  'content_blocks',
  'tool_call_id',
  'tool_name',
  'tool_use_ids',
  'tool_result_ids',
  'has_thinking',
  'context_version',
  'token_count',
  'pinned',
  'created_at',
] as const;

/** Every column but the tenant and session ids, comma-separated, for `insert … select`. */
export const MESSAGE_FIELDS = FIELDS.join(', ');

/**
 * {@link MESSAGE_FIELDS} as a select list with some columns replaced by expressions, in the same
 * order (e.g. `{ context_version: 'null' }`).
 */
export function messageFieldsWith(replace: Partial<Record<(typeof FIELDS)[number], string>>): string {
  return FIELDS.map((f) => replace[f] ?? f).join(', ');
}
