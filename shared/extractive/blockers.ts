/**
 * Blockers: errors of failed tool results, expired when the same call later succeeds; an expired
 * blocker becomes an `errorsAndFixes` item naming what succeeded and the edits made in between.
 */
import type { Message } from '../contract/message.ts';
import type { CheckpointEntry, ErrorFix } from '../summary/checkpoint.ts';
import { renderErrorFix } from '../summary/checkpoint.ts';
import { detectError, type Outcome } from '../text/error-lines.ts';
import { commandKey, shellSummary, writtenFile } from '../text/shell.ts';
import { cleanItem, clipWords, collapse, normalizeKey } from '../text/text.ts';
import { callSource, describeCall } from './describe-call.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS, LIST_CAPS } from './limits.ts';
import { pathArgument, stringArgument, type ToolRun } from './tool-runs.ts';

/** What {@link mergeBlockers} found. */
export interface BlockerResult {
  blockers: Item[];
  /** Blockers that expired in these messages, with their fix. */
  fixed: Item[];
}

/**
 * Blockers: the previous ones, then each failed result's error. A later success of the call clears
 * it: the same shell command in normal form ({@link commandKey}: `python3 x.py 2>&1 | tail` is
 * `python x.py`; a script written again under a version of its name, `fix2.py` or `fix_v2.py`, is
 * `fix.py`), or the same tool on the same file. So does a later failure of the same call whose
 * output no longer holds the error: the call got past it (a missing module installed, the next
 * error shows). So does a later successful change that names what the error names ({@link
 * errorSubjects}): `sed -i 's/np.Inf/np.inf/'` after "`np.Inf` was removed", `pip install pytz`
 * after "No module named 'pytz'".
 */
export function mergeBlockers(
  previous: CheckpointEntry[],
  messages: Message[],
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
): BlockerResult {
  const written = writtenNames(runs);
  let items: Item[] = previous.map((e) => ({
    text: e.text,
    seq: e.seq,
    prev: true,
    source: sourceOfPrevious(e.text, written),
  }));
  const fixed: Item[] = [];
  const byResult = new Map<number, ToolRun>();
  for (const run of runs.values()) if (run.result) byResult.set(run.resultIndex, run);
  const edits: Array<{ seq: number; text: string }> = [];
  messages.forEach((m, index) => {
    if (m.kind !== 'tool_result') return;
    const run = byResult.get(index);
    const summary = run ? describeCall(run) : null;
    const command = run ? stringArgument(run.args, ['command', 'cmd', 'script']) : null;
    // A call the user rejected or interrupted did not fail: it neither blocks nor clears anything.
    if (
      run &&
      ended.get(run.index) !== undefined &&
      ended.get(run.index) !== 'ok' &&
      ended.get(run.index) !== 'failed'
    )
      return;
    const error = detectError(m.content, summary?.inspect ?? false, command);
    const source = run ? sourceKey(run, written) : undefined;
    const resolve = (gone: Item[], how: string) => {
      for (const b of gone) {
        const between = edits
          .filter((e) => b.seq !== null && e.seq > b.seq && e.seq < m.seq)
          .map((e) => e.text);
        const after =
          between.length > 0 ? ` after ${clipWords([...new Set(between)].slice(-3).join(', '), 160)}` : '';
        const fix: ErrorFix = {
          error: cleanItem(stripFrom(b.text), ITEM_CHARS),
          fix: cleanItem(`${summary?.text ?? source} ${how}${after} (seq ${m.seq})`, ITEM_CHARS),
          seq: b.seq,
        };
        fixed.push({ text: renderErrorFix(fix), seq: m.seq, fix });
      }
      items = items.filter((b) => !gone.includes(b));
    };
    if (error === null) {
      if (summary && !summary.inspect) edits.push({ seq: m.seq, text: summary.text });
      if (run && summary && changesByName(run, summary.text)) {
        const text = callText(run);
        resolve(
          items.filter(
            (b) => b.source !== source && errorSubjects(stripFrom(b.text)).some((n) => text.includes(n)),
          ),
          'changed what the error names',
        );
      }
      if (source === undefined) return;
      resolve(
        items.filter((b) => b.source === source),
        'succeeded',
      );
      return;
    }
    // The same call failing again without the old error in its output got past that error: the
    // latest output of a command is the state of what it checks.
    if (source !== undefined) {
      const output = normalizeKey(m.content);
      resolve(
        items.filter((b) => b.source === source && !output.includes(normalizeKey(errorText(b.text)))),
        'now gets past it, failing differently',
      );
    }
    const line = clipWords(collapse(error), 220);
    const shown = run ? callSource(run) : undefined;
    const text = shown ? `${line} (from: ${shown})` : line;
    items = items.filter((b) => blockerKey(b.text) !== blockerKey(text));
    items.push({ text: cleanItem(text, ITEM_CHARS), seq: m.seq, source });
  });
  return { blockers: items.filter((b) => b.text.length > 0).slice(-LIST_CAPS.blockers), fixed };
}

/**
 * The key a call clears blockers under: what {@link callSource} shows (the shell command, else the
 * tool and its file) in normal form, so a retry written differently still matches.
 */
function sourceKey(run: ToolRun, written: ReadonlySet<string>): string {
  return unversioned(commandKey(callSource(run)), written);
}

function sourceOfPrevious(text: string, written: ReadonlySet<string>): string | undefined {
  const shown = / \(from: (.+)\)$/.exec(text)?.[1];
  return shown === undefined ? undefined : unversioned(commandKey(shown), written);
}

/** A file name with a version mark: `fix2.py`, `fix_v2.py`, `fix-new.py`, `fix_fixed.py`. */
const VERSIONED = /^([a-z][\w-]*?)(?:[_-]?v?\d+|[_-](?:new|fixed|final|simple|updated))(\.[a-z]+)$/;

/** Longest file name looked at for a version mark, characters. */
const NAME_CHARS = 120;

/**
 * `key` (lower case) with the version mark removed from each file name the agent wrote in these
 * messages (`written`, base names in lower case): `python fix_v2.py` is `python fix.py` when the
 * agent wrote fix_v2.py. Agents write a script again under such a name when the first one failed;
 * the new one running clean is the old one's fix. A name the agent did not write keeps its mark:
 * `./step2.sh` run after `./step1.sh` is another step, not a retry.
 */
export function unversioned(key: string, written: ReadonlySet<string>): string {
  if (written.size === 0) return key;
  return key.replace(/[^\s/]+/g, (name) => {
    if (name.length > NAME_CHARS || !written.has(name)) return name;
    const match = VERSIONED.exec(name);
    return match ? `${match[1]}${match[2]}` : name;
  });
}

/** Base names (lower case) of the files the calls of `runs` wrote whole: scripts, new files. */
export function writtenNames(runs: Map<number, ToolRun>): Set<string> {
  const names = new Set<string>();
  for (const run of runs.values()) {
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    const path =
      (command ? writtenFile(shellSummary(command)) : null) ??
      (/^(?:wrote|created)\b/.test(describeCall(run).text) ? pathArgument(run.args) : null);
    if (path) names.add((path.split('/').pop() ?? path).toLowerCase());
  }
  return names;
}

/**
 * What an error line names: the quoted or backticked words in it (`'pytz'`, `` `np.Inf` ``,
 * `"foo"`) of four characters or more with a letter, as a later call would write them.
 */
export function errorSubjects(error: string): string[] {
  const found = new Set<string>();
  for (const match of error.matchAll(/[`'"]([^`'"\s]{4,80})[`'"]/g)) {
    const name = match[1] ?? '';
    if (/[a-z]/i.test(name)) found.add(name);
  }
  return [...found];
}

/**
 * Whether a call that ended ok changes what it names: an edit of an existing file (an editor's
 * replacement, `sed -i`, `perl -pi`, a patch) or an install, not a read, and not a new file written
 * whole (a new script that imports a missing module fixes nothing).
 */
function changesByName(run: ToolRun, described: string): boolean {
  if (/^(?:wrote|created)\b/.test(described)) return false;
  if (/^edited\b/.test(described)) return true;
  const command = stringArgument(run.args, ['command', 'cmd', 'script']) ?? '';
  return /\b(?:sed|perl)\s+(?:-\w+\s+)*-\w*i|\b(?:patch|git apply)\b|\b(?:pip3?|conda|uv|npm|pnpm|yarn|apt(?:-get)?|brew|cargo|gem|go)\s+(?:install|add|get)\b/.test(
    command,
  );
}

/** A call's arguments as text, escapes removed (`np\.Inf` in a sed expression is `np.Inf`). */
function callText(run: ToolRun): string {
  return JSON.stringify(run.args).replace(/\\+/g, '');
}

/**
 * The head of a blocker's error, to look for in a later output: its first 60 characters, without its
 * source, a clipped line's `…` or a label the error line was given (`[error]`, tags).
 */
function errorText(text: string): string {
  return stripFrom(text)
    .replace(/…$/, '')
    .replace(/^\[?error\]?:?\s*/i, '')
    .slice(0, 60);
}

function stripFrom(text: string): string {
  return text.replace(/ \(from: .+\)$/, '');
}

function blockerKey(text: string): string {
  return normalizeKey(stripFrom(text));
}
