/**
 * Blockers: errors of failed tool results, expired when the same call later succeeds; an expired
 * blocker becomes an `errorsAndFixes` item naming what succeeded and the edits made in between.
 */
import type { Message } from '../contract/message.ts';
import type { CheckpointEntry, ErrorFix } from '../summary/checkpoint.ts';
import { renderErrorFix } from '../summary/checkpoint.ts';
import { callSource, describeCall } from './describe-call.ts';
import { detectError, type Outcome } from './error-lines.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS, LIST_CAPS } from './limits.ts';
import { commandKey } from './shell.ts';
import { cleanItem, clipWords, collapse, normalizeKey } from './text.ts';
import { stringArgument, type ToolRun } from './tool-runs.ts';

/** What {@link mergeBlockers} found. */
export interface BlockerResult {
  blockers: Item[];
  /** Blockers that expired in these messages, with their fix. */
  fixed: Item[];
}

/**
 * Blockers: the previous ones, then each failed result's error. A later success of the call clears
 * it: the same shell command in normal form ({@link commandKey}: `python3 x.py 2>&1 | tail` is
 * `python x.py`), or the same tool on the same file. So does a later failure of the same call whose
 * output no longer holds the error: the call got past it (a missing module installed, the next
 * error shows).
 */
export function mergeBlockers(
  previous: CheckpointEntry[],
  messages: Message[],
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
): BlockerResult {
  let items: Item[] = previous.map((e) => ({
    text: e.text,
    seq: e.seq,
    prev: true,
    source: sourceOfPrevious(e.text),
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
    const source = run ? sourceKey(run) : undefined;
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
function sourceKey(run: ToolRun): string {
  return commandKey(callSource(run));
}

function sourceOfPrevious(text: string): string | undefined {
  const shown = / \(from: (.+)\)$/.exec(text)?.[1];
  return shown === undefined ? undefined : commandKey(shown);
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
