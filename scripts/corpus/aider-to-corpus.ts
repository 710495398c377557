/**
 * An Aider chat history (`.aider.chat.history.md`, the Markdown log Aider appends to in a
 * repository) as a corpus session (`corpus/README.md` "Format"). Aider writes each launch as a
 * `# aider chat started at <local time>` heading, the user's input as lines starting `#### `, its own
 * output (settings, token costs, "Applied edit to …", commits, shell commands it ran and their
 * output) as lines starting `> `, and the model's replies as plain Markdown. Each run of lines of
 * one kind becomes one message (blank lines stay with the run they are in, the prefixes and
 * Markdown's trailing two spaces are dropped): user input a user message, a reply an assistant
 * message (with its SEARCH/REPLACE edit blocks, which are how Aider's models edit files), and
 * Aider's output, with the launch heading, a message of role `tool` (Aider has no tool calls: its
 * output answers no call, and is neither the user nor the model). Aider writes no time but the
 * launch's, without a zone, so `createdAt` is null. Text over 20,000 characters is cut and marked,
 * as `pi-to-corpus.ts` does.
 *
 *     tsx scripts/corpus/aider-to-corpus.ts .aider.chat.history.md OUT.jsonl [FIRST[-LAST]]
 *
 * FIRST-LAST (1-based, inclusive) keeps only those launches; default all.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CorpusMessage, corpusLines, cut } from './pi-to-corpus.ts';

const LAUNCH = /^# aider chat started at /;

type Run = { role: 'user' | 'assistant' | 'tool'; lines: string[] };

/** Which run a line belongs to, and its text without the prefix; null for a blank line. */
function classify(line: string): { role: Run['role']; text: string } | null {
  if (line.trim() === '') return null;
  const text = line.replace(/ {2}$/, '');
  if (LAUNCH.test(line)) return { role: 'tool', text };
  if (/^####( |$)/.test(line)) return { role: 'user', text: text.replace(/^#### ?/, '') };
  if (/^>( |$)/.test(line)) return { role: 'tool', text: text.replace(/^> ?/, '') };
  return { role: 'assistant', text: line };
}

/**
 * The launches of an Aider history text, each as the text from its heading to the next; text
 * before the first heading (none in a history Aider wrote) is left out.
 */
export function aiderLaunches(text: string): string[] {
  const starts = [...text.matchAll(/^# aider chat started at .*$/gm)].map((m) => m.index);
  return starts.map((start, i) => text.slice(start, starts[i + 1] ?? text.length));
}

/**
 * The corpus messages of an Aider chat history text (see the file comment).
 * @throws {Error} when the text holds no `# aider chat started at` heading.
 */
export function aiderToCorpus(text: string): CorpusMessage[] {
  if (aiderLaunches(text).length === 0) {
    throw new Error('no "# aider chat started at" heading: not an Aider chat history');
  }
  const runs: Run[] = [];
  for (const line of text.split('\n')) {
    const kind = classify(line);
    const last = runs[runs.length - 1];
    if (kind === null) last?.lines.push('');
    else if (last && last.role === kind.role && !LAUNCH.test(line)) last.lines.push(kind.text);
    else runs.push({ role: kind.role, lines: [kind.text] });
  }
  return runs
    .map((run) => ({ role: run.role, content: run.lines.join('\n').trim() }))
    .filter((run) => run.content !== '')
    .map((run, seq) => ({
      seq,
      role: run.role,
      kind: 'message' as const,
      content: cut(run.content),
      toolCallId: null,
      toolName: null,
      createdAt: null,
    }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [source, out, range] = process.argv.slice(2);
  if (!source || !out) {
    console.error(
      'usage: tsx scripts/corpus/aider-to-corpus.ts .aider.chat.history.md OUT.jsonl [FIRST[-LAST]]',
    );
    process.exit(2);
  }
  const text = readFileSync(source, 'utf8');
  let kept = text;
  if (range) {
    const [first, last = first] = range.split('-').map(Number);
    kept = aiderLaunches(text)
      .slice((first as number) - 1, last)
      .join('');
  }
  const messages = aiderToCorpus(kept);
  writeFileSync(out, corpusLines(messages));
  console.log(`${out}: ${messages.length} messages`);
}
