/**
 * A SpecStory export of an agent chat (`.specstory/history/<date>_<title>.md`: Cursor's agent, or
 * in SpecStory's Markdown v2 an agent of VS Code such as GitHub Copilot's, or a terminal agent
 * such as Claude Code) as a corpus session
 * (`corpus/README.md` "Format"). SpecStory writes the chat as Markdown: a turn starts with a
 * `_**User**_`, `_**Assistant**_` or `_**Agent**_` line (in v2 with a time or the model in
 * parentheses), and the parts of a turn are separated by `---` lines. A user turn becomes one user
 * message (its parts joined back with their `---` separators). Each part of an assistant turn
 * becomes one message:
 * - a part that opens with a ```` ```bash ```` fence is a terminal command: a `run_terminal_cmd`
 *   `tool_call` (`{"command"}`) and, as its `tool_result`, the fences that follow (the command's
 *   output as SpecStory printed it);
 * - a part that opens with a ```` ```diff ```` fence is an edit: an `edit_file` `tool_call`
 *   (`{"diff"}`, SpecStory names no file) with the result text {@link NOT_RECORDED};
 * - `Read file: PATH` is a `read_file` `tool_call` (`{"target_file"}`) with the result text
 *   {@link NOT_RECORDED} (SpecStory keeps no file content);
 * - a `<details>` block is a `tool_call` named after its summary (`Listed directory` → `list_dir`,
 *   `Searched codebase` → `codebase_search`, `Grep search` → `grep_search`, `Searched files` →
 *   `file_search`, `Searched web` → `web_search`, else `tool`) with the summary as its `query`,
 *   and the block's body as its `tool_result`;
 * - a v2 `<tool-use data-tool-name="N">` block (kept whole even when its content holds a `---`
 *   line) is a `tool_call` named N whose arguments are the block's `Parameters:` JSON, else
 *   `{"query"}` from its summary, else what its text shows (a Claude Code shell call's `description`
 *   and `command`, a read's or a write's `file_path`), and for an edit `content`, the patch
 *   SpecStory shows; its `tool_result` is the `content` of the block's `Result:` JSON, else that JSON's
 *   `pastTenseMessage`, else the block's text; {@link NOT_RECORDED} when none holds anything (an
 *   edit's result, and VS Code's terminal output, which v2 does not keep);
 * - any other part is assistant text.
 * Calls get the ids `specstory-N` (SpecStory keeps none); nothing has a time (Cursor exports give
 * only the chat's start). A home folder given without its leading slash (`Users/<name>/…`, as VS
 * Code's tool arguments hold it) is written as `~` like any other. Text over 20,000 characters is
 * cut and marked, as `pi-to-corpus.ts` does.
 *
 *     tsx scripts/corpus/specstory-to-corpus.ts CHAT.md OUT.jsonl
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CorpusMessage, corpusLines, cut } from './pi-to-corpus.ts';

/** The result text of a call whose output SpecStory did not keep (file reads, edits, VS Code's terminal). */
export const NOT_RECORDED = '[output not recorded in the SpecStory export]';

/** Tool names of `<details>` summaries, by how the summary begins. */
const DETAIL_TOOLS: Array<[RegExp, string]> = [
  [/^Listed (?:current )?directory/, 'list_dir'],
  [/^Searched codebase/, 'codebase_search'],
  [/^Grep search/, 'grep_search'],
  [/^Searched files/, 'file_search'],
  [/^Searched web/, 'web_search'],
];

/**
 * The parts of a Markdown text between `---` lines, trimmed of blank lines at both ends; a
 * `<tool-use>` block stays one part even when its content holds a `---` line.
 */
function parts(text: string): string[] {
  const out: string[] = [];
  let open = '';
  for (const piece of text.split(/\n---\n/)) {
    open = open ? `${open}\n---\n${piece}` : piece;
    if (open.includes('<tool-use') && !open.includes('</tool-use>')) continue;
    out.push(open.replace(/^\s*\n/, '').replace(/\n\s*$/, ''));
    open = '';
  }
  if (open) out.push(open.replace(/^\s*\n/, '').replace(/\n\s*$/, ''));
  return out;
}

/** The fenced blocks' bodies of `text`, in order (```` ```lang ```` openers dropped). */
function fenceBodies(text: string): string[] {
  return [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```\s*$/gm)].map((m) => (m[1] ?? '').replace(/\n$/, ''));
}

/**
 * The corpus messages of a SpecStory chat's Markdown text (see the file comment).
 * @throws {Error} when the text holds no `_**User**_` turn (not a SpecStory chat export).
 */
export function specstoryToCorpus(text: string): CorpusMessage[] {
  const out: CorpusMessage[] = [];
  let calls = 0;
  const push = (m: Omit<CorpusMessage, 'seq' | 'createdAt'>) =>
    out.push({ seq: out.length, ...m, content: cut(rootedHomes(m.content)), createdAt: null });
  const pair = (name: string, args: Record<string, unknown>, result: string) => {
    const id = `specstory-${++calls}`;
    push({
      role: 'assistant',
      kind: 'tool_call',
      content: JSON.stringify({ name, arguments: args }),
      toolCallId: id,
      toolName: name,
    });
    push({ role: 'tool', kind: 'tool_result', content: result, toolCallId: id, toolName: name });
  };

  const turns: Array<{ role: 'user' | 'assistant'; parts: string[] }> = [];
  // The text before the first turn heading is SpecStory's banner and the chat's title.
  const pieces = text.split(/^_\*\*(User|Assistant|Agent)(?: \([^\n]*\))?\*\*_[ \t]*$/m);
  for (let i = 1; i + 1 < pieces.length; i += 2) {
    const body = (pieces[i + 1] ?? '').replace(/\n---\s*$/, '');
    turns.push({ role: pieces[i] === 'User' ? 'user' : 'assistant', parts: parts(body) });
  }
  if (!turns.some((t) => t.role === 'user'))
    throw new Error('no _**User**_ turn: not a SpecStory chat export');

  for (const turn of turns) {
    if (turn.role === 'user') {
      const content = turn.parts.join('\n---\n').trim();
      if (content) push({ role: 'user', kind: 'message', content, toolCallId: null, toolName: null });
      continue;
    }
    for (const part of turn.parts) assistantPart(part, push, pair);
  }
  return out;
}

/** One part of an assistant turn as a message or a call and its result. */
function assistantPart(
  part: string,
  push: (m: Omit<CorpusMessage, 'seq' | 'createdAt'>) => void,
  pair: (name: string, args: Record<string, unknown>, result: string) => void,
): void {
  if (!part.trim()) return;
  if (part.startsWith('<tool-use')) {
    const call = toolUse(part);
    pair(call.name, call.args, call.result);
  } else if (part.startsWith('```bash')) {
    const [command = '', ...output] = fenceBodies(part);
    pair('run_terminal_cmd', { command }, output.join('\n'));
  } else if (part.startsWith('```diff')) {
    pair('edit_file', { diff: fenceBodies(part)[0] ?? part }, NOT_RECORDED);
  } else if (/^Read file: \S/.test(part) && !part.includes('\n')) {
    pair('read_file', { target_file: part.slice('Read file: '.length).trim() }, NOT_RECORDED);
  } else if (part.startsWith('<details>')) {
    const summary = /<summary>([\s\S]*?)<\/summary>/.exec(part)?.[1]?.trim() ?? '';
    const body = part
      .replace(/^<details>\s*<summary>[\s\S]*?<\/summary>/, '')
      .replace(/<\/details>\s*$/, '')
      .trim();
    const name = DETAIL_TOOLS.find(([re]) => re.test(summary))?.[1] ?? 'tool';
    pair(name, { query: summary }, body);
  } else {
    push({ role: 'assistant', kind: 'message', content: part, toolCallId: null, toolName: null });
  }
}

/**
 * `text` with a home folder written without its leading slash (`Users/<name>/…`, as VS Code's
 * tool arguments hold it) given one, so that {@link corpusLines} writes it as `~` too.
 */
function rootedHomes(text: string): string {
  return text.replace(/(^|[\s"'(])Users\/(?=[^/\s"'\\]+\/)/g, '$1/Users/');
}

/** The JSON of the fence after `label` in a tool-use block (`Parameters:`, `Result:`), if any. */
function labelledJson(block: string, label: string): unknown {
  const match = new RegExp(`^${label}:\\s*\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``, 'm').exec(block);
  if (!match) return undefined;
  try {
    return JSON.parse(match[1] as string);
  } catch {
    return match[1];
  }
}

/**
 * The arguments a tool-use block without `Parameters:` and without a summary shows in its text, as
 * SpecStory writes Claude Code's tools: a shell call's description line and its command as a
 * `` `…` `` line or a `bash` fence (`{"description", "command"}`), a read's file as a `` `…` `` line and a write's
 * file in Claude Code's answer ("The file X has been updated", "File created successfully at: X")
 * (`{"file_path"}`). Empty when the text shows none.
 */
function shownArguments(type: string, body: string): Record<string, string> {
  const span = /^\s*`([^`\n]+)`\s*$/m.exec(body);
  const script = /^```(?:bash|sh|zsh)\n([\s\S]*?)\n```/m.exec(body);
  const shown = span && (!script || span.index < script.index) ? span : script;
  if (type === 'shell' && shown?.[1]) {
    const before = body.slice(0, shown.index).trim();
    return before && !before.includes('\n')
      ? { description: before, command: shown[1] }
      : { command: shown[1] };
  }
  if (type === 'read' && span?.[1]) return { file_path: span[1] };
  const written = /(?:The file (\S+) has been updated|File created successfully at: (\S+))/.exec(body);
  if (type === 'write' && written) return { file_path: (written[1] ?? written[2]) as string };
  return {};
}

/**
 * A `<tool-use data-tool-name="N">` block of SpecStory's Markdown v2 (see the file comment): the
 * call's name, its arguments and its result text.
 */
function toolUse(part: string): { name: string; args: Record<string, unknown>; result: string } {
  const name = /data-tool-name="([^"]*)"/.exec(part)?.[1] || 'tool';
  const type = /data-tool-type="([^"]*)"/.exec(part)?.[1] ?? '';
  const summary = (/<summary>([\s\S]*?)<\/summary>/.exec(part)?.[1] ?? '').trim();
  const query = summary.replace(/^Tool use: \*\*[^*]*\*\*(?: • )?/, '').trim();
  const body = part
    .replace(/^<tool-use[^>]*>\s*<details>\s*<summary>[\s\S]*?<\/summary>/, '')
    .replace(/<\/details>\s*<\/tool-use>\s*$/, '')
    .trim();
  const params = labelledJson(part, 'Parameters');
  const args: Record<string, unknown> =
    params !== null && typeof params === 'object' ? { ...(params as object) } : query ? { query } : {};
  if (params === undefined && type === 'write' && body) args.content = body;
  if (params === undefined && !query) Object.assign(args, shownArguments(type, body));
  const result = labelledJson(part, 'Result');
  if (result === undefined) return { name, args, result: type === 'write' || !body ? NOT_RECORDED : body };
  const r = (result ?? {}) as { content?: unknown; pastTenseMessage?: unknown };
  const text =
    typeof r.content === 'string' && r.content.trim()
      ? r.content
      : typeof r.pastTenseMessage === 'string' && r.pastTenseMessage.trim()
        ? r.pastTenseMessage
        : NOT_RECORDED;
  return { name, args, result: text };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [source, out] = process.argv.slice(2);
  if (!source || !out) {
    console.error('usage: tsx scripts/corpus/specstory-to-corpus.ts CHAT.md OUT.jsonl');
    process.exit(2);
  }
  const messages = specstoryToCorpus(readFileSync(source, 'utf8'));
  writeFileSync(out, corpusLines(messages));
  console.log(`${out}: ${messages.length} messages`);
}
