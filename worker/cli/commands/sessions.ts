/** `compactor sessions list`: a tenant's sessions with their size and compactions. */

import { assertSchema, openDatabase } from '../../../producer/postgres/db.ts';
import { listSessions, type SessionListItem } from '../../postgres/queries/dashboard.ts';
import {
  type Command,
  type CommandGroup,
  flag,
  JSON_OPTION,
  positiveInt,
  TENANT_OPTION,
  text,
} from '../command.ts';
import { type Column, formatCount, formatUtc, jsonLine, renderTable, terminalText } from '../format.ts';

/** Sessions listed when `--limit` is not given. */
const DEFAULT_LIMIT = 100;

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

const listCommand: Command = {
  name: 'sessions list',
  summary: "list a tenant's sessions: size, compactions, and the child session if one continued it",
  options: {
    tenant: TENANT_OPTION,
    limit: { type: 'string', value: 'N', description: `most sessions to list (default ${DEFAULT_LIMIT})` },
    json: JSON_OPTION,
  },
  notes: [
    'By session id. "continued in" names the child session a newSession compaction wrote the',
    'compacted history to. --json prints each session with its latest ledger row, one per line.',
  ],
  examples: ['compactor sessions list --tenant acme --limit 20'],
  async run(args, context) {
    const tenantId = text(args, 'tenant');
    const limit = positiveInt(args, 'limit', DEFAULT_LIMIT);
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
  },
};

export const sessionsGroup: CommandGroup = {
  name: 'sessions',
  summary: "list a tenant's sessions",
  actions: [listCommand],
};
