/**
 * One-off failures the project's own checks moved past. A blocker whose call is not a command of
 * the project (threads.ts `commandKind` is null: a script written and run in one call, an inline
 * program written into a file, an editor call, a tool of the harness) is never run again as it was,
 * so no later run of "the same command" can ever close it. Such a call tried something once; when,
 * after it, a test or build command of the project ran and passed, whatever that one call met did
 * not stop the project's checks, and the agent's work went on past it: it is no longer open. The
 * last failures of the project's commands and tests (build, test, run threads) are left alone:
 * their own later runs decide (run-state.ts).
 */
import { type ErrorFix, renderErrorFix } from '../summary/checkpoint.ts';
import { cleanItem, clipWords } from '../text/text.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';
import { commandKind, type Thread } from './threads.ts';

/** The text after which a blocker names the call it comes from (blockers.ts writes it so). */
const FROM = / \(from: (.+)\)$/;

/**
 * The blockers left once every one-off failure (its `(from: …)` call is no command of the project)
 * that a later passing run of a test or build thread of `commands` followed is moved to `resolved`,
 * naming that run. A blocker without a seq or without a named call stays, and so does one flagged
 * open (the last failure of a command thread).
 */
export function withoutMovedPast(
  blockers: Item[],
  commands: Thread[],
): { blockers: Item[]; resolved: Item[] } {
  const checks = commands
    .filter((t) => t.kind === 'test' || t.kind === 'build')
    .flatMap((t) => t.runs.filter((r) => r.outcome === 'ok').map((r) => ({ seq: r.seq, shown: t.shown })));
  if (checks.length === 0) return { blockers, resolved: [] };
  const kept: Item[] = [];
  const resolved: Item[] = [];
  for (const b of blockers) {
    const call = FROM.exec(b.text)?.[1];
    const check =
      b.open || b.seq === null || call === undefined || commandKind(call) !== null
        ? undefined
        : checks.find((c) => b.prev || c.seq > (b.seq ?? Infinity));
    if (!check) {
      kept.push(b);
      continue;
    }
    const fix: ErrorFix = {
      error: cleanItem(b.text.replace(FROM, ''), ITEM_CHARS),
      fix: cleanItem(
        `moved past: \`${clipWords(check.shown, 120)}\` passed later (seq ${check.seq})`,
        ITEM_CHARS,
      ),
      seq: b.seq,
    };
    resolved.push({ text: renderErrorFix(fix), seq: b.seq, fix });
  }
  return { blockers: kept, resolved };
}
