/**
 * The state of the session's commands and tests at the cut, from their threads (threads.ts): the
 * errors still open (a command or a test whose last run failed) as blockers, errors that a later
 * run of the same command or test passed removed from the blockers, and one `commands` item per
 * command with its last outcome.
 */
import { type CheckpointEntry, type ErrorFix, renderErrorFix } from '../summary/checkpoint.ts';
import { cleanItem, clipWords, collapse } from '../text/text.ts';
import { unversioned } from './blockers.ts';
import { ageOf, type Item } from './items.ts';
import { ITEM_CHARS, LIST_CAPS } from './limits.ts';
import { isOpen, lastRun, type Thread, threadKey } from './threads.ts';

/** The text after which a blocker names the call it comes from (blockers.ts writes it so too). */
const FROM = / \(from: (.+)\)$/;

/** The words an open-error item starts with. */
export const STILL_FAILING = 'still failing at its last run';

/**
 * The blockers reconciled with the threads:
 * - a blocker whose command's thread (same {@link threadKey}) last ran without failing is dropped,
 *   and so is one naming a test id whose last report passed;
 * - each command thread whose last run failed and that no blocker of the same command already
 *   states gets one: its first error line, `still failing at its last run`, its command; each failing
 *   test id that no blocker names gets one too. An error the caller knows fixed since that run
 *   (`fixedSeqs`: seqs of the failures other rules resolved, such as an edit naming what the error
 *   names) is not added again. `written`: the base names of the files the agent wrote, whose
 *   versioned names (`check2.py`) are retries of the same command (blockers.ts's `unversioned`).
 * The blockers dropped for a later pass come back as `resolved` (`errorsAndFixes` items). Open
 * items are flagged {@link Item.open}, so the budget keeps them first; past
 * `LIST_CAPS.blockers` items, the oldest that are not open are dropped first.
 */
export function reconcileBlockers(
  blockers: Item[],
  commands: Thread[],
  tests: Thread[],
  fixedSeqs: ReadonlySet<number>,
  written: ReadonlySet<string> = new Set(),
): { blockers: Item[]; resolved: Item[] } {
  const closedCommands = new Set(commands.filter((t) => !isOpen(t)).map((t) => t.key));
  const openCommands = new Map(commands.filter(isOpen).map((t) => [t.key, t]));
  const passedTests = tests.filter((t) => !isOpen(t)).map((t) => t.key);
  const passedSince = (b: Item) => {
    const key = keyOf(b);
    if (key !== undefined && closedCommands.has(key)) return true;
    return passedTests.some((id) => b.text.includes(id));
  };
  const keyOf = (b: Item) => {
    const shown = FROM.exec(b.text)?.[1];
    return shown === undefined ? undefined : unversioned(threadKey(shown), written);
  };
  const kept = blockers.filter((b) => !passedSince(b));
  const resolved = blockers.filter(passedSince).map(resolvedItem);
  for (const b of kept) {
    const key = keyOf(b);
    const thread = key === undefined ? undefined : openCommands.get(key);
    const last = thread ? lastFailure(thread) : undefined;
    if (thread && last && b.seq !== null && b.seq >= last.seq) b.open = true;
  }
  const added: Item[] = [];
  for (const thread of openCommands.values()) {
    const last = lastFailure(thread);
    if (!last || fixedSeqs.has(last.seq)) continue;
    if (kept.some((b) => keyOf(b) === thread.key && b.seq !== null && b.seq >= last.seq)) continue;
    const error = last.error ?? (last.exit !== null ? `exit code ${last.exit}` : 'failed');
    added.push(openItem(`${clipWords(collapse(error), 220)} — ${STILL_FAILING}`, thread.shown, last.seq));
  }
  for (const thread of tests.filter(isOpen)) {
    const last = lastFailure(thread);
    if (!last || kept.some((b) => b.text.includes(thread.key))) continue;
    const error = clipWords(collapse(last.error ?? 'failed'), 200);
    added.push({
      text: cleanItem(`test ${thread.key} ${STILL_FAILING}: ${error}`, ITEM_CHARS),
      seq: last.seq,
      open: true,
    });
  }
  const stillOpen = added.filter((b) => !passedTests.some((id) => b.text.includes(id)));
  const all = [...kept, ...stillOpen].sort((a, b) => ageOf(a) - ageOf(b));
  return { blockers: capped(all, LIST_CAPS.blockers), resolved };
}

/** A blocker a later passing run resolved, as an `errorsAndFixes` item. */
function resolvedItem(b: Item): Item {
  const fix: ErrorFix = {
    error: cleanItem(b.text.replace(FROM, ''), ITEM_CHARS),
    fix: 'a later run of the same command or test passed',
    seq: b.seq,
  };
  return { text: renderErrorFix(fix), seq: b.seq, fix };
}

/** At most `cap` items in their order (oldest first): the oldest that are not open go first, then the oldest open ones. */
function capped(items: Item[], cap: number): Item[] {
  const out = [...items];
  while (out.length > cap) {
    const drop = out.findIndex((b) => !b.open);
    out.splice(Math.max(drop, 0), 1);
  }
  return out;
}

function openItem(error: string, shown: string, seq: number): Item {
  const from = ` (from: ${clipWords(shown, 120)})`;
  return { text: `${clipWords(error, ITEM_CHARS - from.length)}${from}`, seq, open: true };
}

function lastFailure(thread: Thread): Thread['runs'][number] | undefined {
  return [...thread.runs].reverse().find((r) => r.outcome === 'failed');
}

/**
 * The `commands` items: one per failing thread (`` `cmd` (test) → failed (exit 2) ``), and one per
 * family of passing threads, at the seq of its last run, with `N runs` when it ran more than once.
 * A family is the threads of one program and subcommand that differ only by their targets (the
 * same test runner over ten test files): its passing threads make one item naming the last one run
 * and how many other targets passed, so a session that runs one command per file does not list
 * each file again (the completed work already names them). The previous checkpoint's items stay
 * unless a thread of these messages is the same command; at most `LIST_CAPS.commands`, the most
 * recently run kept.
 */
export function commandItems(
  previous: CheckpointEntry[],
  threads: Thread[],
  written: ReadonlySet<string> = new Set(),
): Item[] {
  const fresh = [
    ...threads.filter((t) => lastRun(t)?.outcome !== 'ok').flatMap((t) => commandItem(t, 0)),
    ...[...passingFamilies(threads).values()].flatMap((family) => {
      const latest = family.reduce((a, b) => ((lastRun(b)?.seq ?? -1) > (lastRun(a)?.seq ?? -1) ? b : a));
      return commandItem(latest, family.length - 1);
    }),
  ];
  const freshKeys = new Set(threads.map((t) => t.key));
  const kept = previous
    .filter((e) => {
      const shown = /^`([^`]+)`/.exec(e.text)?.[1];
      return shown === undefined || !freshKeys.has(unversioned(threadKey(shown), written));
    })
    .map((e) => ({ text: e.text, seq: e.seq, prev: true }));
  return [...kept, ...fresh.sort((a, b) => (a.seq ?? -1) - (b.seq ?? -1))].slice(-LIST_CAPS.commands);
}

/** One thread's item; `others` passing targets of its family are counted, not listed. */
function commandItem(thread: Thread, others: number): Item[] {
  const last = lastRun(thread);
  if (!last) return [];
  const exit = last.exit !== null && last.exit !== 0 ? ` (exit ${last.exit})` : '';
  // The error itself is a blocker's while open: here it would outlive its fix by another route.
  const how = last.outcome === 'ok' ? 'passed' : `failed${exit}`;
  const times = thread.runs.length > 1 ? `, ${thread.runs.length} runs` : '';
  const also = others > 0 ? `; ${others} other target${others === 1 ? '' : 's'} passed too` : '';
  const text = `\`${thread.shown}\` (${thread.kind}) → ${how}${times}${also}`;
  return [{ text: cleanItem(text, ITEM_CHARS), seq: last.seq }];
}

/**
 * The passing threads grouped by family: their key without its targets (the words that name a
 * file, a directory or a test id: a `/`, a `::` or a file extension). A thread whose key names no
 * target is a family of its own.
 */
function passingFamilies(threads: Thread[]): Map<string, Thread[]> {
  const families = new Map<string, Thread[]>();
  for (const thread of threads) {
    if (lastRun(thread)?.outcome !== 'ok') continue;
    const words = thread.key.split(' ');
    const program = words.filter((w) => !TARGET.test(w)).join(' ');
    const family = program === thread.key || !program ? `=${thread.key}` : `${thread.kind} ${program}`;
    families.set(family, [...(families.get(family) ?? []), thread]);
  }
  return families;
}

/** A word of a command that names a target: a path, a test id, a file name with an extension. */
const TARGET = /\/|::|^[\w-]+\.[A-Za-z]\w{0,5}$/;
