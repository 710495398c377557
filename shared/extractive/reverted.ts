/**
 * Work undone later in the session: a change that a later message reverted is no longer completed
 * work. What counts as undoing, in any session:
 * - a shell call that restores files from version control or a backup: `git checkout [--] <paths>`,
 *   `git restore <paths>` (not `--staged` alone), `git checkout .` / `git reset --hard` / `git stash`
 *   (every file), `git revert`, `mv|cp <file>.bak|.orig|.backup <file>`;
 * - an edit that swaps back an earlier edit of the same file (its old text is the earlier edit's
 *   new text and its new text the earlier old text);
 * - a user message asking to undo (revert, undo, roll back, put back; and the same in German,
 *   French, Spanish, Dutch, Portuguese and Italian): the changes of the turn before it, or only of
 *   the files it names.
 * A call that failed, was rejected or interrupted undoes nothing.
 */
import type { Message } from '../contract/message.ts';
import type { Outcome } from '../text/error-lines.ts';
import { parseShell } from '../text/shell.ts';
import { clipWords } from '../text/text.ts';
import { classifyUserMessage } from '../text/user-messages.ts';
import { describeCall } from './describe-call.ts';
import { EARLIER, type Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';
import { pathArgument, stringArgument, type ToolRun } from './tool-runs.ts';

/** A revert: from which seq on, which files (null: every file changed before it), and what undid it. */
export interface Revert {
  seq: number;
  paths: string[] | null;
  /** Only changes at or after this seq are undone (a user's "undo that" undoes the last turn). */
  since: number;
  how: string;
}

/** A user asking to undo, in English, German, French, Spanish, Dutch, Portuguese or Italian. */
const UNDO_REQUEST = new RegExp(
  [
    String.raw`\b(?:revert|undo|roll ?back|back out|put (?:it|them|that|this) back|restore the (?:original|old|previous))\b`,
    String.raw`\br[üu]ckg[äa]ngig\b|\bzur[üu]cksetzen\b|\bzur[üu]ck ?nehmen\b`,
    String.raw`\bannule[rz]?\b|\bdéfai(?:s|tes|re)\b|\breviens? en arrière\b|\bremets? (?:comme|l'ancien)`,
    String.raw`\bdeshaz|\bdeshacer\b|\brevierte\b|\brevertir\b|\bvuelve atrás\b`,
    String.raw`\bongedaan\b|\bdraai (?:dat|het|dit) terug\b|\bterugdraaien\b`,
    String.raw`\bdesfa(?:z|ça|zer)\b|\breverta\b|\breverter\b`,
    String.raw`\bannulla\b|\bripristina\b|\btorna indietro\b`,
  ].join('|'),
  'iu',
);

/** A negation just before an undo word: "don't revert", "nicht rückgängig", "ne pas annuler", "no deshagas". */
const NEGATED =
  /\b(?:don't|do not|never|no need to|without|nicht|kein\w*|pas|ne|no|niet|não|nao|non)\b[^.!?\n]*$/iu;

/** The reverts in `messages` (ascending seq). */
export function findReverts(
  messages: Message[],
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
): Revert[] {
  const reverts: Revert[] = [];
  const edits: Array<{ seq: number; path: string; oldText: string; newText: string }> = [];
  let turnStart = 0;
  messages.forEach((m, index) => {
    if (m.role === 'user' && m.kind === 'message') {
      const undo = userUndo(m, turnStart);
      if (undo) reverts.push(undo);
      turnStart = m.seq;
      return;
    }
    const run = runs.get(index);
    if (!run?.result || ended.get(index) !== 'ok') return;
    const seq = run.result.seq;
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    if (command && /^ran: /.test(describeCall(run).text)) {
      const paths = restoredPaths(command);
      if (paths !== undefined)
        reverts.push({ seq, paths, since: -Infinity, how: `\`${command.split('\n')[0]}\`` });
      return;
    }
    const path = pathArgument(run.args);
    const oldText = stringArgument(run.args, ['old_string', 'old_str', 'oldText', 'search']);
    const newText = stringArgument(run.args, ['new_string', 'new_str', 'newText', 'replace']);
    if (!path || oldText === null || newText === null) return;
    const undone = edits.find((e) => e.path === path && e.oldText === newText && e.newText === oldText);
    if (undone)
      reverts.push({ seq, paths: [path], since: undone.seq, how: `an edit undoing seq ${undone.seq}` });
    edits.push({ seq, path, oldText, newText });
  });
  return reverts;
}

/** A user message asking to undo the turn before it (`since`), or null. */
function userUndo(m: Message, since: number): Revert | null {
  const kind = classifyUserMessage(m.content);
  if ((kind !== 'request' && kind !== 'answer') || m.content.length > 600) return null;
  const text = m.content.replace(/^>.*$/gm, '');
  const match = UNDO_REQUEST.exec(text);
  if (!match || NEGATED.test(text.slice(Math.max(0, match.index - 30), match.index))) return null;
  if (/\?\s*$/.test(text.trim()) && !/^(?:can|could|would|please)\b/i.test(text.trim())) return null;
  const named = [...text.matchAll(/[\w./-]+\.[a-z]{1,5}\b/gi)].map((x) => x[0]);
  return { seq: m.seq, paths: named.length > 0 ? named : null, since, how: 'the user asked to undo it' };
}

/**
 * The files a shell command restores, `null` for every file, or undefined when it restores nothing.
 * `git checkout <branch>` (a word without a path's `/` or `.`) switches branches: undefined.
 */
export function restoredPaths(command: string): string[] | null | undefined {
  for (const step of stepsOf(command)) {
    const words = step.split(/\s+/).filter(Boolean);
    const [program, sub, ...rest] = words;
    if (program === 'git') {
      const args = rest.filter((w) => !w.startsWith('-'));
      if (sub === 'reset' && rest.includes('--hard')) return null;
      if (sub === 'stash' && (args.length === 0 || args[0] === 'push' || args[0] === 'save')) return null;
      if (sub === 'revert') return null;
      if (sub === 'restore' && !(rest.includes('--staged') && !rest.includes('--worktree'))) {
        return args.includes('.') ? null : args.length > 0 ? args : undefined;
      }
      if (sub === 'checkout') {
        const dashes = rest.indexOf('--');
        // Without `--`, only words shaped like files: `feature/x` is a branch, `src/a.py` a file.
        const paths =
          dashes >= 0 ? rest.slice(dashes + 1) : args.filter((w) => w === '.' || /\.[a-z0-9]{1,6}$/i.test(w));
        if (paths.includes('.')) return null;
        if (paths.length > 0) return paths;
      }
    }
    if ((program === 'mv' || program === 'cp') && sub && rest.length >= 1) {
      const target = rest[rest.length - 1] ?? '';
      if (
        /\.(?:bak|orig|backup|old)$/.test(sub) &&
        sub.replace(/\.(?:bak|orig|backup|old)$/, '').endsWith(target.split('/').pop() ?? '')
      )
        return [target];
    }
  }
  return undefined;
}

/** The steps of a command's first line, quotes removed, `cd` steps and env prefixes dropped. */
function stepsOf(command: string): string[] {
  const first = command.split('\n')[0] ?? '';
  return parseShell(first)
    .unquoted.split(/&&|\|\||[;|]/)
    .map((s) => s.trim().replace(/^(?:\w+=\S*\s+)+/, ''))
    .filter((s) => s && !/^cd\b/.test(s))
    .map((s) => s.replace(/["']/g, ''));
}

/**
 * The completed items that no revert undid: an item of a change (`edited`, `wrote`, `created`,
 * `ran: sed -i …`, …) made before a revert (and at or after its `since`) whose text names one of
 * the revert's files, or any such item when the revert restored every file; and the reverting call
 * itself (its item has the revert's seq: it undid work, it completed none; {@link revertItems}
 * records it). Items of the previous checkpoint are older than any revert of these messages.
 */
export function withoutReverted(items: Item[], reverts: Revert[]): Item[] {
  if (reverts.length === 0) return items;
  return items.filter((item) => {
    if (item.text.startsWith(EARLIER)) return true;
    const seq = item.prev ? -Infinity : (item.seq ?? -Infinity);
    return !reverts.some(
      (r) =>
        (seq < r.seq || seq === r.seq) &&
        (item.prev ? r.since === -Infinity : seq >= r.since) &&
        (seq === r.seq ||
          (r.paths === null ? isChange(item.text) : r.paths.some((p) => namesFile(item.text, p)))),
    );
  });
}

/** Whether a completed item is a change to files (not a run of a test or a finished todo). */
function isChange(text: string): boolean {
  return /^(?:edited|wrote|created|deleted|moved|ran: (?:sed|perl|patch|git apply|mv|cp|rm)\b)/.test(text);
}

/** Whether an item's text names a file: its path, or its base name as a word. */
function namesFile(text: string, path: string): boolean {
  const clean = path.replace(/^\.\//, '');
  if (clean.length < 3) return false;
  if (text.includes(clean)) return true;
  const base = clean.split('/').pop() ?? clean;
  return (
    base.length >= 3 &&
    new RegExp(`(?:^|[\\s/])${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:$|[\\s,:;)])`).test(text)
  );
}

/**
 * The reverts as decisions: `undid the changes to a.py, b.py: \`git checkout -- a.py b.py\``, or
 * `undid every uncommitted change: …`, at the revert's seq.
 */
export function revertItems(reverts: Revert[]): Item[] {
  return reverts.map((r) => {
    const what =
      r.paths !== null
        ? `the changes to ${r.paths.join(', ')}`
        : Number.isFinite(r.since)
          ? `the changes made since seq ${r.since}`
          : 'every change made before it';
    return { text: clipWords(`undid ${what}: ${r.how}`, ITEM_CHARS), seq: r.seq };
  });
}
