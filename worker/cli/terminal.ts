/** What the command line needs to know about where its output goes. */
import type { TerminalStream } from './progress.ts';

/**
 * How many characters wide a table written to `stream` may be: the terminal's width when it is
 * one; else `COLUMNS` when that is a positive whole number (a script that wants a fitted table
 * says so); else no limit, since a table piped to a file or another program must not lose text.
 */
export function outputWidth(
  stream: TerminalStream,
  columns: string | undefined = process.env.COLUMNS,
): number {
  if (stream.isTTY === true && stream.columns !== undefined && stream.columns > 0) return stream.columns;
  const n = Number(columns);
  return columns !== undefined && Number.isInteger(n) && n > 0 ? n : Number.POSITIVE_INFINITY;
}
