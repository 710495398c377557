/**
 * A pi coding agent session file (`~/.pi/agent/sessions/…/*.jsonl`) as a corpus session
 * (`corpus/README.md` "Format"). A pi line is `{type, timestamp, …}`; lines of type `message` hold
 * `message: {role, content}` with `role` `user`, `assistant` or `toolResult` and `content` a list of
 * blocks (`text`, `thinking`, `toolCall` with `id`/`name`/`arguments`). Each block becomes one
 * message in order: text as a plain message, thinking as assistant text starting `[thinking]`, a
 * tool call as a `tool_call` whose content is `{"name", "arguments"}`, a `toolResult` as the
 * `tool_result` of its `toolCallId`. An assistant message with no blocks (an aborted reply) gives
 * nothing. Other line types (`session`, `model_change`, `thinking_level_change`) are settings, not
 * conversation, and are left out. Text over 20,000 characters is cut and marked.
 *
 *     tsx scripts/corpus/pi-to-corpus.ts SESSION.jsonl OUT.jsonl
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One message of the corpus format. */
export interface CorpusMessage {
  seq: number;
  role: 'system' | 'user' | 'assistant' | 'tool';
  kind: 'message' | 'tool_call' | 'tool_result';
  content: string;
  toolCallId: string | null;
  toolName: string | null;
  createdAt: string | null;
}

/** Longest content kept whole, in characters; longer is cut and marked `[truncated N chars]`. */
export const MAX_CONTENT = 20_000;

/** `text` cut to {@link MAX_CONTENT} characters with the marker the corpus uses. */
export function cut(text: string): string {
  return text.length <= MAX_CONTENT
    ? text
    : `${text.slice(0, MAX_CONTENT)}[truncated ${text.length - MAX_CONTENT} chars]`;
}

/**
 * `text` with each macOS home folder (`/Users/<name>`), and each Linux one (`/home/<name>` where a
 * path starts: after a space, a quote, `(`, `=` or `:`, not inside a URL), written as `~`: the
 * recorded machine's paths stay readable (`~/project/src/x.ts`) without naming its user folder.
 */
export function homeRelative(text: string): string {
  return text.replace(/\/Users\/[^/\s"'\\]+/g, '~').replace(/(^|[\s"'`(=:])\/home\/[^/\s"'\\]+/g, '$1~');
}

/**
 * `text` with every run of three or more `../` written as `../../`: a transcript quotes its own
 * project's relative paths (`import … from '../../../../agents/registry.js'`), and such a path,
 * read from the corpus folder a transcript is stored in, would reach outside the repository; two
 * levels keep what the quote says without leaving it.
 */
export function shallowParents(text: string): string {
  return text.replace(/(?:\.\.\/){3,}/g, '../../');
}

/** `text` as the corpus stores it: home folders as `~` ({@link homeRelative}), {@link shallowParents}. */
export function corpusText(text: string): string {
  return shallowParents(homeRelative(text));
}

/** `value` (parsed JSON) with every string in it, keys aside, {@link corpusText}. */
export function corpusValue<T>(value: T): T {
  if (typeof value === 'string') return corpusText(value) as T;
  if (Array.isArray(value)) return value.map((v) => corpusValue(v)) as T;
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, corpusValue(v)])) as T;
  return value;
}

/** The corpus JSONL of `messages`, one a line, content {@link corpusText}. */
export function corpusLines(messages: CorpusMessage[]): string {
  return `${messages.map((m) => JSON.stringify({ ...m, content: corpusText(m.content) })).join('\n')}\n`;
}

interface Block {
  type?: unknown;
  text?: unknown;
  thinking?: unknown;
  id?: unknown;
  name?: unknown;
  arguments?: unknown;
}

function blocksOf(content: unknown, where: string): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new Error(`${where}: content: expected a string or a list of blocks`);
  return content as Block[];
}

function textOf(blocks: Block[]): string {
  return blocks
    .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : `[${String(b.type)}]`))
    .join('\n');
}

/**
 * The corpus messages of a pi session's text (see the file comment).
 * @throws {Error} naming the line when a line is not JSON, a message has no known role, or a
 *   block of an assistant message has an unknown type.
 */
export function piToCorpus(text: string): CorpusMessage[] {
  const out: CorpusMessage[] = [];
  const push = (m: Omit<CorpusMessage, 'seq'>) =>
    out.push({ seq: out.length, ...m, content: cut(m.content) });
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    const where = `line ${i + 1}`;
    let line: { type?: unknown; timestamp?: unknown; message?: Record<string, unknown> };
    try {
      line = JSON.parse(raw);
    } catch (error) {
      throw new Error(`${where}: not JSON (${(error as Error).message})`);
    }
    if (line.type !== 'message') return;
    const m = line.message ?? {};
    const createdAt = typeof line.timestamp === 'string' ? line.timestamp : null;
    const blocks = blocksOf(m.content, where);
    if (m.role === 'user') {
      push({
        role: 'user',
        kind: 'message',
        content: textOf(blocks),
        toolCallId: null,
        toolName: null,
        createdAt,
      });
    } else if (m.role === 'toolResult') {
      push({
        role: 'tool',
        kind: 'tool_result',
        content: textOf(blocks),
        toolCallId: typeof m.toolCallId === 'string' ? m.toolCallId : null,
        toolName: typeof m.toolName === 'string' ? m.toolName : null,
        createdAt,
      });
    } else if (m.role === 'assistant') {
      for (const b of blocks) {
        if (b.type === 'text' && typeof b.text === 'string') {
          if (b.text.trim() !== '')
            push({
              role: 'assistant',
              kind: 'message',
              content: b.text,
              toolCallId: null,
              toolName: null,
              createdAt,
            });
        } else if (b.type === 'thinking' && typeof b.thinking === 'string') {
          push({
            role: 'assistant',
            kind: 'message',
            content: `[thinking] ${b.thinking}`,
            toolCallId: null,
            toolName: null,
            createdAt,
          });
        } else if (b.type === 'toolCall') {
          push({
            role: 'assistant',
            kind: 'tool_call',
            content: JSON.stringify({ name: b.name, arguments: b.arguments }),
            toolCallId: typeof b.id === 'string' ? b.id : null,
            toolName: typeof b.name === 'string' ? b.name : null,
            createdAt,
          });
        } else {
          throw new Error(`${where}: assistant block of unknown type ${JSON.stringify(b.type)}`);
        }
      }
    } else {
      throw new Error(
        `${where}: message role ${JSON.stringify(m.role)}: expected user, assistant or toolResult`,
      );
    }
  });
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [source, out] = process.argv.slice(2);
  if (!source || !out) {
    console.error('usage: tsx scripts/corpus/pi-to-corpus.ts SESSION.jsonl OUT.jsonl');
    process.exit(2);
  }
  const messages = piToCorpus(readFileSync(source, 'utf8'));
  writeFileSync(out, corpusLines(messages));
  console.log(`${out}: ${messages.length} messages`);
}
