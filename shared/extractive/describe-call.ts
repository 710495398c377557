/**
 * What a tool call did, in a few words (`edited src/a.py`, `ran: pytest`), and the call as the source
 * of a blocker.
 */
import { isInspectionCommand, shellSummary, writtenFile } from '../text/shell.ts';
import { clipWords, escapeRegExp, firstLine } from '../text/text.ts';
import { extractPaths } from '../working-set/working-set.ts';
import { pathArgument, stringArgument, type ToolRun } from './tool-runs.ts';

const EDITOR_SUBCOMMANDS: Record<string, string> = {
  view: 'viewed',
  create: 'created',
  str_replace: 'edited',
  insert: 'edited',
  undo_edit: 'undid an edit of',
};
const INSPECT_TOOL = new RegExp(
  `^(?:${[
    'read|view|open|cat|ls|list|glob|grep|search|find|fetch|scroll|goto|think|get',
    'web_?search|web_?fetch|todo_?read|task_?output|bash_?output',
  ].join('|')})(?:_?\\w+)?$`,
  'i',
);
const EDIT_TOOL = /edit|write|create|patch|replace|insert|append|delete|remove|rename|move|mkdir|touch/i;
const SHELL_TOOL = /bash|shell|terminal|command|exec|powershell|^run$|^sh$|^cmd$/i;

/** What a call did, in a few words, and whether it only looked at things (reads, listings, searches). */
export interface CallSummary {
  text: string;
  inspect: boolean;
}

/**
 * What a call did: `edited x`, `viewed x`, `wrote x`, `ran: cmd`, `tool: detail`, and whether it only
 * inspected (a read tool, the todo list, or a shell command that only reads).
 */
export function describeCall(run: ToolRun): CallSummary {
  const path = pathArgument(run.args);
  const command = stringArgument(run.args, ['command', 'cmd', 'script']);
  if (Array.isArray(run.args.todos)) return { text: 'updated the todo list', inspect: true };
  const editorVerb = command ? EDITOR_SUBCOMMANDS[command] : undefined;
  if (editorVerb && path) return { text: `${editorVerb} ${path}`, inspect: command === 'view' };
  if (EDIT_TOOL.test(run.name) && !SHELL_TOOL.test(run.name))
    return { text: describeEdit(run, path), inspect: false };
  if (INSPECT_TOOL.test(run.name))
    return { text: clipWords(`${run.name} ${path ?? command ?? ''}`, 150), inspect: true };
  if (command && SHELL_TOOL.test(run.name)) {
    const written = writtenFile(shellSummary(command));
    if (written) return { text: clipWords(`wrote ${written}`, 200), inspect: false };
    return { text: `ran: ${clipWords(shellSummary(command), 150)}`, inspect: isInspectionCommand(command) };
  }
  const detail =
    stringArgument(run.args, ['description', 'command', 'query', 'prompt', 'url', 'skill']) ??
    Object.values(run.args).find((v): v is string => typeof v === 'string' && v.trim().length > 0);
  const shown = detail ? firstLine(detail).replace(new RegExp(`^${escapeRegExp(run.name)}\\s+`), '') : '';
  return { text: clipWords(shown ? `${run.name}: ${shown}` : `called ${run.name}`, 150), inspect: false };
}

/** `edited x` / `created x` / `wrote x`. */
function describeEdit(run: ToolRun, path: string | null): string {
  const verb = /create/i.test(run.name) ? 'created' : /write/i.test(run.name) ? 'wrote' : 'edited';
  return clipWords(`${verb} ${editTarget(run, path) ?? 'a file'}`, 200);
}

/** The file of an edit: from the arguments, else the first path of the result or of the arguments' text. */
function editTarget(run: ToolRun, path: string | null): string | null {
  return (
    path ?? extractPaths(run.result?.content ?? '')[0] ?? extractPaths(JSON.stringify(run.args))[0] ?? null
  );
}

/**
 * The call as the source of a blocker, stable across retries so a later success can clear it: the
 * shell command, else the tool name and its file (`edit src/a.py`).
 */
export function callSource(run: ToolRun): string {
  const command = stringArgument(run.args, ['command', 'cmd', 'script']);
  if (command && SHELL_TOOL.test(run.name)) return clipWords(shellSummary(command), 120);
  const path = pathArgument(run.args);
  const target = EDIT_TOOL.test(run.name) ? editTarget(run, path) : path;
  return clipWords(target ? `${run.name} ${target}` : run.name, 120);
}
