/**
 * A Claude Code session file (`~/.claude/projects/<project>/<session>.jsonl`) as a corpus session
 * (`corpus/README.md` "Format"). Only lines of type `user` and `assistant` are conversation; the
 * others (`file-history-snapshot`, `queue-operation`, `progress`, `summary`, …) are left out, and a
 * line whose `uuid` was seen before is skipped. A line's `message.content` is a string or a list of
 * Anthropic blocks; each block becomes one message in order: `text` as a plain message (role
 * `system` when the line is `isMeta`, text the harness injected), `thinking` as assistant text
 * starting `[thinking]`, `tool_use` as a `tool_call` whose content is `{"name", "arguments"}`,
 * `tool_result` as the `tool_result` of its `tool_use_id` (its text blocks joined), `image` as the
 * text `[image <media type>]`. `createdAt` is the line's `timestamp`. Text over 20,000 characters is
 * cut and marked, as `pi-to-corpus.ts` does.
 *
 *     tsx scripts/corpus/claude-code-to-corpus.ts SESSION.jsonl OUT.jsonl
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CorpusMessage, corpusLines, cut } from './pi-to-corpus.ts';

interface Block {
  type?: unknown;
  text?: unknown;
  thinking?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
  source?: { media_type?: unknown };
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Block[])
    .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : `[${String(b.type)}]`))
    .join('\n');
}

/**
 * The corpus messages of a Claude Code session's text (see the file comment).
 * @throws {Error} naming the line when a line is not JSON, or a block has an unknown type.
 */
export function claudeCodeToCorpus(text: string): CorpusMessage[] {
  const out: CorpusMessage[] = [];
  const seen = new Set<string>();
  const names = new Map<string, string>();
  const push = (m: Omit<CorpusMessage, 'seq'>) =>
    out.push({ seq: out.length, ...m, content: cut(m.content) });
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    const where = `line ${i + 1}`;
    let line: {
      type?: unknown;
      uuid?: unknown;
      isMeta?: unknown;
      timestamp?: unknown;
      message?: { content?: unknown };
    };
    try {
      line = JSON.parse(raw);
    } catch (error) {
      throw new Error(`${where}: not JSON (${(error as Error).message})`);
    }
    if (line.type !== 'user' && line.type !== 'assistant') return;
    if (typeof line.uuid === 'string') {
      if (seen.has(line.uuid)) return;
      seen.add(line.uuid);
    }
    const createdAt = typeof line.timestamp === 'string' ? line.timestamp : null;
    const role = line.type === 'assistant' ? 'assistant' : line.isMeta === true ? 'system' : 'user';
    const content = line.message?.content;
    const blocks: Block[] =
      typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Block[]);
    if (!Array.isArray(blocks))
      throw new Error(`${where}: message.content: expected a string or a list of blocks`);
    for (const b of blocks) {
      const plain = { kind: 'message' as const, toolCallId: null, toolName: null, createdAt };
      if (b.type === 'text' && typeof b.text === 'string') {
        if (b.text.trim() !== '') push({ role, content: b.text, ...plain });
      } else if (b.type === 'thinking' && typeof b.thinking === 'string') {
        push({ role: 'assistant', content: `[thinking] ${b.thinking}`, ...plain });
      } else if (b.type === 'image') {
        push({ role, content: `[image ${String(b.source?.media_type ?? 'unknown')}]`, ...plain });
      } else if (b.type === 'tool_use') {
        const id = typeof b.id === 'string' ? b.id : null;
        const name = typeof b.name === 'string' ? b.name : null;
        if (id && name) names.set(id, name);
        push({
          role: 'assistant',
          kind: 'tool_call',
          content: JSON.stringify({ name: b.name, arguments: b.input }),
          toolCallId: id,
          toolName: name,
          createdAt,
        });
      } else if (b.type === 'tool_result') {
        const id = typeof b.tool_use_id === 'string' ? b.tool_use_id : null;
        push({
          role: 'tool',
          kind: 'tool_result',
          content: resultText(b.content),
          toolCallId: id,
          toolName: id ? (names.get(id) ?? null) : null,
          createdAt,
        });
      } else {
        throw new Error(`${where}: block of unknown type ${JSON.stringify(b.type)}`);
      }
    }
  });
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [source, out] = process.argv.slice(2);
  if (!source || !out) {
    console.error('usage: tsx scripts/corpus/claude-code-to-corpus.ts SESSION.jsonl OUT.jsonl');
    process.exit(2);
  }
  const messages = claudeCodeToCorpus(readFileSync(source, 'utf8'));
  writeFileSync(out, corpusLines(messages));
  console.log(`${out}: ${messages.length} messages`);
}
