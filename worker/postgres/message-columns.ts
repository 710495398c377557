/**
 * The columns a message row carries, shared by `messages` and `archived_messages`, in one order:
 * every statement that moves rows between the two (archive, restore, the child copy) lists them
 * from here, so a column added to the schema cannot be dropped by one of them.
 */

/** Every column but the session id, comma-separated, for `insert … select` between the tables. */
export const MESSAGE_FIELDS = `seq, role, kind, content, content_blocks, tool_call_id, tool_name, tool_use_ids,
  tool_result_ids, has_thinking, token_count, pinned, created_at`;
