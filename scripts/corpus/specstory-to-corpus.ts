/**
 * A SpecStory export of a Cursor agent chat (`.specstory/history/<date>_<title>.md`) as a corpus
 * session (`corpus/README.md` "Format"). SpecStory writes the chat as Markdown: a turn starts with a
 * `_**User**_` or `_**Assistant**_` line, and the parts of a turn are separated by `---` lines. A
 * user turn becomes one user message (its parts joined back with their `---` separators). Each part
 * of an assistant turn becomes one message:
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
 * - any other part is assistant text.
 * Calls get the ids `specstory-N` (SpecStory keeps none); nothing has a time (SpecStory writes only
 * the chat's start, in its title). Text over 20,000 characters is cut and marked, as
 * `pi-to-corpus.ts` does.
 *
 *     tsx scripts/corpus/specstory-to-corpus.ts CHAT.md OUT.jsonl
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CorpusMessage, corpusLines, cut } from './pi-to-corpus.ts';

/** The result text of a call whose output SpecStory did not keep (file reads and edits). */
export const NOT_RECORDED = '[output not recorded in the SpecStory export]';

/** Tool names of `<details>` summaries, by how the summary begins. */
const DETAIL_TOOLS: Array<[RegExp, string]> = [
  [/^Listed (?:current )?directory/, 'list_dir'],
  [/^Searched codebase/, 'codebase_search'],
  [/^Grep search/, 'grep_search'],
  [/^Searched files/, 'file_search'],
  [/^Searched web/, 'web_search'],
];

/** The parts of a Markdown text between `---` lines, trimmed of blank lines at both ends. */
function parts(text: string): string[] {
  return text.split(/\n---\n/).map((p) => p.replace(/^\s*\n/, '').replace(/\n\s*$/, ''));
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
    out.push({ seq: out.length, ...m, content: cut(m.content), createdAt: null });
  const pair = (name: string, args: Record<string, string>, result: string) => {
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
  const pieces = text.split(/^_\*\*(User|Assistant)\*\*_[ \t]*$/m);
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
  pair: (name: string, args: Record<string, string>, result: string) => void,
): void {
  if (!part.trim()) return;
  if (part.startsWith('```bash')) {
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
