/**
 * Failures the project's own checks moved past.
 *
 * - A one-off call: a blocker whose call is not a command of the project (threads.ts `commandKind`
 *   is null: a script written and run in one call, an inline program written into a file, an
 *   editor call, a tool of the harness, a package runner's one-time tool) is never run again as it
 *   was, so no later run of "the same command" can ever close it. Such a call tried something once;
 *   when, after it, a test or build command of the project ran and passed, whatever that one call
 *   met did not stop the project's checks, and the agent's work went on past it.
 * - A build that was not run again: the last failure of a build or type-check command (`npx tsc`,
 *   `cargo check`) after which the agent never ran that command again, but another build command of
 *   the project ran and passed (`npm run build` after `npx tsc --noEmit` failed). Both check that
 *   the project builds; the later one passing is the latest state of that check.
 *
 * The last failures of test and run threads are left alone: their own later runs decide
 * (run-state.ts), since another test or another script passing says nothing of them.
 */
import { type ErrorFix, renderErrorFix } from '../summary/checkpoint.ts';
import { cleanItem, clipWords } from '../text/text.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';
import { commandKind, type Thread, threadKey } from './threads.ts';

/** The text after which a blocker names the call it comes from (blockers.ts writes it so). */
const FROM = / \(from: (.+)\)$/;

/** A passing run of a check: where, which thread, as shown. */
interface Check {
  seq: number;
  key: string;
  kind: Thread['kind'];
  shown: string;
}

/**
 * The blockers left once each failure moved past is moved to `resolved`, naming the passing run:
 * a one-off failure (its `(from: …)` call is no command of the project) that a later passing run of
 * a test or build thread of `commands` followed; a build command's failure that a later passing run
 * of another build thread followed, its own thread not run after that failure. A blocker without a
 * seq or without a named call stays, and so does one of a test or run thread.
 */
export function withoutMovedPast(
  blockers: Item[],
  commands: Thread[],
): { blockers: Item[]; resolved: Item[] } {
  const checks: Check[] = commands
    .filter((t) => t.kind === 'test' || t.kind === 'build')
    .flatMap((t) =>
      t.runs
        .filter((r) => r.outcome === 'ok')
        .map((r) => ({ seq: r.seq, key: t.key, kind: t.kind, shown: t.shown })),
    );
  if (checks.length === 0) return { blockers, resolved: [] };
  const lastRunOf = new Map(commands.map((t) => [t.key, Math.max(...t.runs.map((r) => r.seq))]));
  const kept: Item[] = [];
  const resolved: Item[] = [];
  for (const b of blockers) {
    const check = movedPastBy(b, checks, lastRunOf);
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

/** The passing check that moved `b` past, if any (rules in {@link withoutMovedPast}). */
function movedPastBy(b: Item, checks: Check[], lastRunOf: ReadonlyMap<string, number>): Check | undefined {
  const call = FROM.exec(b.text)?.[1];
  if (b.seq === null || call === undefined) return undefined;
  const after = (c: Check) => b.prev || c.seq > (b.seq ?? Infinity);
  const kind = commandKind(call);
  if (kind === null) return b.open ? undefined : checks.find(after);
  if (kind !== 'build') return undefined;
  const key = threadKey(call);
  // Its own thread's last run in these messages, else (a blocker of these messages) its seq.
  const since = Math.max(
    b.prev ? Number.NEGATIVE_INFINITY : b.seq,
    lastRunOf.get(key) ?? Number.NEGATIVE_INFINITY,
  );
  return checks.find((c) => c.kind === 'build' && c.key !== key && c.seq > since);
}
