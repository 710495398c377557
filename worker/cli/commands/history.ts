/** `compactor history`: a session's ledger, as a table for people or JSON lines for scripts. */
import { assertSchema } from '../../../producer/postgres/db.ts';
import type { CompactionRow } from '../../../producer/postgres/schema.ts';
import { openStore } from '../../runtime/store.ts';
import { type CommandContext, flag, type ParsedArgs, text } from '../command.ts';
import {
  type Column,
  formatChange,
  formatCount,
  formatUsd,
  formatUtc,
  jsonLine,
  renderTable,
  terminalText,
} from '../format.ts';
import { SHORT_ID } from '../spec-values.ts';
import { outputWidth } from '../terminal.ts';

const COLUMNS: Column[] = [
  { header: 'created (UTC)' },
  { header: 'id' },
  { header: 'status' },
  { header: 'trigger' },
  { header: 'strategy' },
  { header: 'messages', align: 'right' },
  { header: 'tokens', align: 'right' },
  { header: 'cost', align: 'right' },
  { header: 'reason', flex: true, minWidth: 12 },
];

/**
 * The ledger as table lines, oldest first, fitted to `width` characters by cutting the reason
 * (an error when the compaction failed) with `…`. An `expired` row (a retention pass) shows the
 * archived messages and tokens it dropped, and the compactions they came from after its reason.
 */
export function historyTable(rows: readonly CompactionRow[], width: number): string[] {
  return renderTable(
    COLUMNS,
    rows.map((r) => [
      formatUtc(r.createdAt),
      r.id.slice(0, SHORT_ID),
      r.status,
      r.trigger,
      r.strategy,
      r.status === 'expired'
        ? `${formatCount(r.expiredMessages)} dropped`
        : formatChange(r.messagesBefore, r.messagesAfter),
      r.status === 'expired'
        ? `${formatCount(r.expiredTokens)} dropped`
        : formatChange(r.tokensBefore, r.tokensAfter),
      formatUsd(r.costUsd),
      r.status === 'expired' ? expiredReason(r) : (r.reason ?? r.error ?? ''),
    ]),
    width,
  );
}

/** An `expired` row's reason and the short ids of the compactions whose originals went. */
function expiredReason(r: CompactionRow): string {
  const ids = (r.expiredCompactionIds ?? []).map((id) => id.slice(0, SHORT_ID));
  return `${r.reason ?? 'retention'}${ids.length > 0 ? ` (of ${ids.join(', ')})` : ''}`;
}

/** Runs `compactor history` (its spec, flags and help: specs/history.ts); resolves with the exit code. */
export async function runHistory(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const sessionId = text(args, 'session');
  const { database, reads, close } = openStore(context.config());
  try {
    await assertSchema(database);
    const rows = await reads.history(tenantId, sessionId);
    if (rows.length === 0) {
      await reads.assertSession(tenantId, sessionId); // a foreign session: "not found"
      if (!flag(args, 'json'))
        context.stderr.write(`session "${terminalText(sessionId)}" has no compactions yet\n`);
      return 0;
    }
    if (flag(args, 'json')) {
      for (const row of rows) context.stdout.write(`${jsonLine(row)}\n`);
    } else {
      context.stdout.write(
        `${historyTable(rows, outputWidth(context.stdout, context.env.COLUMNS)).join('\n')}\n`,
      );
    }
    return 0;
  } finally {
    await close();
  }
}
