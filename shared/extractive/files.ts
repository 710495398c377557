/**
 * The files of a session: each path with what the agent did with it (created, edited, deleted,
 * moved, ran, read) and what changed, edited files ranked first. Only calls that succeeded count as
 * changes; a failed or rejected edit leaves the file as it was.
 */
import type { CheckpointFile } from '../summary/checkpoint.ts';
import { renderFile } from '../summary/checkpoint.ts';
import type { Outcome } from '../text/error-lines.ts';
import { heredocs, parseShell, scriptWrites, shellSummary, writtenFile } from '../text/shell.ts';
import { clipWords, collapse } from '../text/text.ts';
import { extractPaths, isThrowawayPath, sanitizePath } from '../working-set/working-set.ts';
import { describeCall } from './describe-call.ts';
import type { Item } from './items.ts';
import { LIST_CAPS } from './limits.ts';
import { pathArgument, stringArgument, type ToolRun } from './tool-runs.ts';

type Role = CheckpointFile['role'];

/** Roles by rank: a file edited and read is "edited". */
const RANK: Record<Role, number> = {
  created: 6,
  edited: 5,
  deleted: 4,
  moved: 3,
  ran: 2,
  read: 1,
  mentioned: 0,
};

/**
 * One file per path, the strongest role and the latest change. Ranked: files changed (edited,
 * created, deleted, moved) first, then files run, then scripts the agent wrote and ran (scaffolding
 * of the work: a reproduction, a debug script), then files read; newest first within a rank.
 */
export function fileItems(
  previous: CheckpointFile[],
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
): Item[] {
  const files = new Map<string, CheckpointFile & { edits: number; order: number; ran: boolean }>();
  let order = 0;
  const note = (file: CheckpointFile, edits: number) => {
    const path = sanitizePath(file.path);
    if (!path || isThrowawayPath(path)) return;
    const old = files.get(path);
    const role = old && RANK[old.role] > RANK[file.role] ? old.role : file.role;
    const change = file.change ?? old?.change ?? null;
    files.set(path, {
      path,
      role,
      change,
      seq: file.seq ?? old?.seq ?? null,
      edits: (old?.edits ?? 0) + edits,
      order: order++,
      ran: (old?.ran ?? false) || file.role === 'ran',
    });
  };
  for (const f of previous) note(f, 0);
  for (const [index, run] of runs) {
    const outcome = ended.get(index);
    if (!run.result || outcome === undefined) continue;
    const found = fileOf(run);
    if (!found) continue;
    const changes = found.role !== 'read' && found.role !== 'ran' && found.role !== 'mentioned';
    // A failed or rejected change leaves the file as it was: it was at most looked at.
    if (outcome !== 'ok' && changes) {
      note({ ...found, role: 'mentioned', change: null, seq: run.result.seq }, 0);
      continue;
    }
    note({ ...found, seq: run.result.seq }, changes ? 1 : 0);
  }
  // A script the agent wrote and ran rewrote the files its text writes.
  for (const rewrite of scriptRewrites(runs, ended)) {
    const known = files.get(sanitizePath(rewrite.path) ?? '');
    const role: Role = known && RANK[known.role] > RANK.edited ? known.role : 'edited';
    note({ ...rewrite, role }, 1);
  }
  // A diff the agent printed (`git diff`, `cat fix.patch`) says what changed, whoever changed it.
  for (const [index, run] of runs) {
    if (!run.result || ended.get(index) !== 'ok') continue;
    for (const [path, change] of diffChanges(run.result.content)) {
      const known = files.get(sanitizePath(path) ?? '');
      const role: Role = known && RANK[known.role] > RANK.edited ? known.role : 'edited';
      note({ path, role, change, seq: run.result.seq }, 0);
    }
  }
  // A script written and run in one command (`cat > t.py << EOF … EOF; python t.py`) ran too.
  const run = scriptsRun(runs);
  for (const file of files.values()) if (run.has(baseName(file.path))) file.ran = true;
  return [...files.values()]
    .sort((a, b) => rank(b) - rank(a) || b.order - a.order)
    .slice(0, LIST_CAPS.files)
    .map(({ edits, order: _order, ran: _ran, ...file }) => {
      const change =
        edits > 1 && file.change ? clipWords(`${edits} edits; last: ${file.change}`, 500) : file.change;
      const entry: CheckpointFile = { ...file, change };
      return { text: renderFile(entry), seq: entry.seq, file: entry };
    });
}

/** Programs that run a script: `python3 fix.py`, `node fix.js`, `python -c '...'`, `python - <<EOF`. */
const INTERPRETER = /^(?:python\d?(?:\.\d+)?|node|deno|bun|tsx|ts-node)$/;

/** A path's last part, lower case: how a script run is matched to the script written. */
const baseName = (path: string) => (path.split('/').pop() ?? path).toLowerCase();

/**
 * The files scripts rewrote: for each call that ended ok and runs a script (`python fix.py`, the
 * script written earlier by a here-document or an editor's create; `python -c '...'`; `python -
 * <<EOF`), each literal path the script's text writes ({@link scriptWrites}), but not the script
 * itself, with `rewritten by \`python fix.py\`` and the seq of the result. In call order.
 */
export function scriptRewrites(
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
): Array<{ path: string; change: string; seq: number }> {
  const scripts = new Map<string, string>();
  const out: Array<{ path: string; change: string; seq: number }> = [];
  for (const [index, run] of runs) {
    const path = pathArgument(run.args);
    const body = stringArgument(run.args, ['file_text', 'content']);
    if (path && body !== null) scripts.set(baseName(path), body);
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    if (!command) continue;
    let outside = command;
    const stdin: string[] = [];
    for (const doc of heredocs(command)) {
      outside = outside.replace(doc.body, '');
      const target = writtenFile(shellSummary(doc.head));
      if (target) scripts.set(baseName(target), doc.body);
      else stdin.push(doc.body);
    }
    if (!run.result || ended.get(index) !== 'ok') continue;
    for (const [word, arg] of parseShell(outside).steps) {
      if (!INTERPRETER.test(word) || arg === undefined) continue;
      const text =
        arg === '-c' || arg === '-e' ? outside : arg === '-' ? stdin.join('\n') : scripts.get(baseName(arg));
      if (!text) continue;
      const self = arg.startsWith('-') ? null : baseName(arg);
      const change = `rewritten by \`${word} ${arg === '-c' || arg === '-e' ? `${arg} …` : arg}\``;
      for (const written of scriptWrites(text)) {
        if (baseName(written) !== self) out.push({ path: written, change, seq: run.result.seq });
      }
    }
  }
  return out;
}

/** Base names (lower case) of the scripts the calls' commands run with an interpreter. */
function scriptsRun(runs: Map<number, ToolRun>): Set<string> {
  const names = new Set<string>();
  for (const run of runs.values()) {
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    if (!command) continue;
    const outside = heredocs(command).reduce((text, doc) => text.replace(doc.body, ''), command);
    for (const [word, arg] of parseShell(outside).steps) {
      if (INTERPRETER.test(word) && arg !== undefined && !arg.startsWith('-')) names.add(baseName(arg));
    }
  }
  return names;
}

/**
 * Changed files first (created, edited, deleted, moved), then files run, then files the agent
 * created and ran (its own scripts), then files read.
 */
function rank(file: { role: Role; ran: boolean }): number {
  if (file.role === 'created' && file.ran) return (RANK.ran + RANK.read) / 2;
  return RANK[file.role] >= RANK.moved ? 10 : RANK[file.role];
}

/** The file a call worked on and what it did, or null. */
function fileOf(run: ToolRun): CheckpointFile | null {
  const summary = describeCall(run);
  const command = stringArgument(run.args, ['command', 'cmd', 'script']);
  const path = pathArgument(run.args);
  const verb = /^(\w+(?: an edit of)?) (.+)$/.exec(summary.text);
  // An edit tool without a path argument (SWE-agent's `edit 12:14`, on the open file): the file its
  // description names, taken from its result.
  if (
    !path &&
    verb &&
    !summary.inspect &&
    /^(?:edited|created|wrote)$/.test(verb[1] ?? '') &&
    verb[2] !== 'a file'
  ) {
    const role: Role = verb[1] === 'edited' ? 'edited' : 'created';
    return { path: verb[2] ?? '', role, change: changeOf(run, role), seq: null };
  }
  if (path && verb) {
    const role: Role = /^(?:created|wrote)$/.test(verb[1] ?? '')
      ? 'created'
      : /^(?:viewed|read|open|cat|view|get)/i.test(verb[1] ?? '') || summary.inspect
        ? 'read'
        : 'edited';
    return { path, role, change: changeOf(run, role), seq: null };
  }
  if (path)
    return { path, role: summary.inspect ? 'read' : 'edited', change: changeOf(run, 'edited'), seq: null };
  if (!command) return null;
  const first = shellSummary(command);
  const written = writtenFile(first);
  if (written) return { path: written, role: 'created', change: null, seq: null };
  const [step] = parseShell(first).steps;
  const word = step?.[0] ?? '';
  const target = extractPaths(first.replace(/^\S+\s*/, ''))[0];
  if (!target) return null;
  if (/^(?:rm|unlink|rmdir)$/.test(word) || (word === 'git' && step?.[1] === 'rm'))
    return { path: target, role: 'deleted', change: null, seq: null };
  if (/^(?:mv)$/.test(word) || (word === 'git' && step?.[1] === 'mv'))
    return { path: target, role: 'moved', change: clipWords(collapse(first), 200), seq: null };
  if (/^(?:sed|perl)$/.test(word) && /\s-\w*i/.test(first))
    return {
      path: extractPaths(first).at(-1) ?? target,
      role: 'edited',
      change: clipWords(collapse(first), 200),
      seq: null,
    };
  if (/^(?:python\d?(?:\.\d+)?|node|bash|sh|ruby|perl|php|go|deno|bun|tsx|ts-node|pytest)$/.test(word))
    return { path: target, role: 'ran', change: null, seq: null };
  if (summary.inspect) return { path: target, role: 'read', change: null, seq: null };
  return null;
}

/** What an edit changed, in a few words: `"old…" → "new…"`, `inserted at line 12`, `12 lines`. */
function changeOf(run: ToolRun, role: Role): string | null {
  if (role === 'read') return null;
  const a = run.args;
  const text = (key: string) => (typeof a[key] === 'string' ? collapse(a[key] as string) : null);
  const raw = (key: string) => (typeof a[key] === 'string' ? (a[key] as string) : null);
  const oldText = raw('old_str') ?? raw('old_string') ?? raw('search');
  const newText = raw('new_str') ?? raw('new_string') ?? raw('replace');
  if (oldText !== null && newText !== null) return replacementChange(oldText, newText);
  const inserted = text('insert_line');
  if (inserted !== null || typeof a.insert_line === 'number')
    return `inserted at line ${String(a.insert_line)}`;
  // SWE-agent: `edit 12:14\n<new lines>\nend_of_edit` replaces lines 12 to 14 of the open file.
  const ranged =
    typeof a.command === 'string'
      ? /^edit (\d+):(\d+)\n([\s\S]*?)(?:\nend_of_edit\s*)?$/.exec(a.command)
      : null;
  if (ranged) {
    const lines = (ranged[3] ?? '').split('\n').filter((l) => l.trim());
    return `lines ${ranged[1]}-${ranged[2]} now: "${clipWords(collapse(lines.slice(0, 3).join(' ')), 140)}"`;
  }
  const body =
    typeof a.file_text === 'string' ? a.file_text : typeof a.content === 'string' ? a.content : null;
  if (body !== null) return `${body.split('\n').length} lines`;
  return null;
}

/** Characters of the removed and of the added text a replacement's change shows. */
const REMOVED_CHARS = 100;
const ADDED_CHARS = 180;

/**
 * What a replacement changed: the lines of `oldText` and `newText` between the lines they share at
 * both ends, `"removed" → "added"`, or `added "…" after "<the last shared line>"` when it only
 * inserts. An editor's old and new strings usually repeat the lines around the change (to anchor
 * it), so their beginnings say nothing of it. Whitespace collapsed; each side clipped.
 */
export function replacementChange(oldText: string, newText: string): string {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  const same = (x: string | undefined, y: string | undefined) => collapse(x ?? '') === collapse(y ?? '');
  let head = 0;
  while (head < a.length && head < b.length && same(a[head], b[head])) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    same(a[a.length - 1 - tail], b[b.length - 1 - tail])
  )
    tail++;
  const removed = collapse(a.slice(head, a.length - tail).join('\n'));
  const added = collapse(b.slice(head, b.length - tail).join('\n'));
  if (!removed && !added)
    return `"${clipWords(collapse(oldText), 70)}" → "${clipWords(collapse(newText), 70)}"`;
  if (!removed) {
    const anchor = collapse(a[head - 1] ?? '');
    const after = anchor ? ` after "${clipWords(anchor, 60)}"` : '';
    return `added "${clipWords(added, ADDED_CHARS)}"${after}`;
  }
  return `"${clipWords(removed, REMOVED_CHARS)}" → "${clipWords(added, ADDED_CHARS)}"`;
}

/** Changed lines of each side a diff summary shows, and the length of each. */
const DIFF_LINES = 2;
const DIFF_LINE_CHARS = 90;

/**
 * The files of a unified diff in a text (`diff --git a/x b/x` or `+++ b/x` headers) with what
 * changed in each: its first removed and added lines, `diff: -old | +new`. A file the diff deletes
 * (`+++ /dev/null`) is left out. Empty when the text holds no diff.
 */
export function diffChanges(text: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!/^(?:diff --git |\+\+\+ )/m.test(text)) return out;
  let path: string | null = null;
  let removed: string[] = [];
  let added: string[] = [];
  const flush = () => {
    if (path && removed.length + added.length > 0) {
      const shown = [
        ...removed.slice(0, DIFF_LINES).map((l) => `-${clipWords(collapse(l), DIFF_LINE_CHARS)}`),
        ...added.slice(0, DIFF_LINES).map((l) => `+${clipWords(collapse(l), DIFF_LINE_CHARS)}`),
      ];
      out.set(path, clipWords(`diff: ${shown.join(' | ')}`, 400));
    }
    removed = [];
    added = [];
  };
  for (const line of text.slice(0, 200_000).split('\n')) {
    const header = /^diff --git a\/(\S+) b\/(\S+)/.exec(line);
    const plus = /^\+\+\+ (?:b\/)?(\S+)/.exec(line);
    if (header || plus) {
      const next = header?.[2] ?? plus?.[1] ?? null;
      if (header || next !== path) {
        flush();
        path = next === '/dev/null' ? null : next;
      }
      continue;
    }
    if (path === null || /^(?:---|\\ No newline)/.test(line)) continue;
    if (line.startsWith('-') && line.slice(1).trim()) removed.push(line.slice(1));
    else if (line.startsWith('+') && line.slice(1).trim()) added.push(line.slice(1));
  }
  flush();
  return out;
}
