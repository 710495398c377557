/** `compactor sessions list`: a tenant's sessions with their size and compactions. */

import { assertSchema, openDatabase } from '../../../producer/postgres/db.ts';
import { listSessions, type SessionListItem } from '../../postgres/queries/dashboard.ts';
import { type CommandContext, flag, type ParsedArgs, positiveInt, text } from '../command.ts';
import { type Column, formatCount, formatUtc, jsonLine, renderTable, terminalText } from '../format.ts';
import { DEFAULT_SESSIONS_LIMIT } from '../spec-values.ts';

/** Sessions listed when `--limit` is not given. */

const COLUMNS: Column[] = [
  { header: 'session' },
  { header: 'agent' },
  { header: 'messages', align: 'right' },
  { header: 'tokens', align: 'right' },
  { header: 'compactions', align: 'right' },
  { header: 'last compacted (UTC)' },
  { header: 'continued in' },
];

/**
 * Sessions as table lines. Nothing is cut to fit a terminal: every long cell is an id a user copies
 * into the next command.
 */
export function sessionsTable(items: readonly SessionListItem[]): string[] {
  return renderTable(
    COLUMNS,
    items.map((s) => [
      s.id,
      s.agentId ?? '-',
      formatCount(s.messageCount),
      formatCount(s.tokenCount),
      formatCount(s.compactionCount),
      formatUtc(s.lastCompactedAt),
      s.childSessionId ?? '-',
    ]),
    Number.POSITIVE_INFINITY,
  );
}

/** Runs `compactor sessions list` (its spec, flags and help: specs/sessions.ts); resolves with the exit code. */
export async function runSessionsList(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const limit = positiveInt(args, 'limit', DEFAULT_SESSIONS_LIMIT);
  const database = openDatabase(context.config().databaseUrl, {
    max: 1,
    schema: context.config().databaseSchema,
  });
  try {
    await assertSchema(database);
    const page = await listSessions(database.db, tenantId, { limit });
    if (flag(args, 'json')) {
      for (const item of page.items) context.stdout.write(`${jsonLine(item)}\n`);
      return 0;
    }
    if (page.items.length === 0) {
      context.stderr.write(`tenant "${terminalText(tenantId)}" has no sessions\n`);
      return 0;
    }
    context.stdout.write(`${sessionsTable(page.items).join('\n')}\n`);
    if (page.nextCursor !== null)
      context.stderr.write(`the first ${limit} sessions; more with --limit ${limit * 10}\n`);
    return 0;
  } finally {
    await database.close();
  }
}
