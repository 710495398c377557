/**
 * Claude Code transcript lines (the entries the Agent SDK hands its `SessionStore`) read as
 * compactor's `claude-code` import reads a session file (`parseClaudeCode`,
 * shared/contract/native-transcripts.ts): `user` and `assistant` lines are messages, their content
 * exactly as written; the lines of one streamed reply (one `message.id`) are one message, blocks in
 * order; every other line (attachments, summaries, system lines, metadata) is no message. Pure.
 *
 * The store reads lines as they arrive, a batch at a time, so two rules of the import read
 * differently here: lines already stored as messages are never read again (a rewound session's
 * abandoned turns stay in compactor's history: the stored lines keep the branch as Claude Code wrote
 * it, and a resume follows it), and subagent (sidechain) lines are stored as lines only.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { TranscriptError } from '../../../shared/contract/errors.ts';
import { parseClaudeCode } from '../../../shared/contract/native-transcripts.ts';

/** A stored line: its place in the transcript and the line as appended. */
export interface Line {
  seq: number;
  entry: Record<string, unknown>;
}

/** A message read from lines, with the seqs of the lines it was read from. */
export interface LineMessage {
  message: MessageParam;
  /** When its first line was written, where the line says. */
  createdAt: Date | null;
  seqs: number[];
}

/** Whether a line is a message of the main conversation: a `user` or `assistant` line, not a subagent's. */
export function isMessageLine(entry: Record<string, unknown>): boolean {
  return (entry.type === 'user' || entry.type === 'assistant') && entry.isSidechain !== true;
}

/**
 * The messages of `lines`, message lines of one transcript in order that are not stored as messages
 * yet. A reply still streaming may gain blocks in later lines, so the last message is left out when
 * it is an assistant reply and `closed` is false (the run has not ended).
 * @param source names the transcript in errors, e.g. `session "s-1"`.
 * @throws {TranscriptError} naming the line (by seq) and the field of a line that is no valid message
 *   (a `user` line whose `message.role` is not `user`, content that is neither a string nor blocks).
 */
export function messagesOf(lines: readonly Line[], source: string, closed: boolean): LineMessage[] {
  if (lines.length === 0) return [];
  // Without uuids the parser reads the text whole, in order: the branch is the store's to keep.
  const text = lines
    .map(({ entry }) => {
      const { uuid: _uuid, ...rest } = entry;
      return JSON.stringify(rest);
    })
    .join('\n');
  let parsed: ReturnType<typeof parseClaudeCode>;
  try {
    parsed = parseClaudeCode(text, source);
  } catch (error) {
    if (!(error instanceof TranscriptError)) throw error;
    throw new TranscriptError(
      error.message
        .replace(`${source}:`, `${source}, line seq `)
        .replace(/line seq (\d+)/, (_m, n: string) => {
          const line = lines[Number(n) - 1];
          return `line seq ${line ? line.seq : n}`;
        }),
    );
  }
  const out: LineMessage[] = parsed.map((m, i) => {
    const next = parsed[i + 1]?.line ?? lines.length + 1;
    return {
      message: m.message,
      createdAt: m.createdAt,
      seqs: lines.slice(m.line - 1, next - 1).map((l) => l.seq),
    };
  });
  if (!closed && out.at(-1)?.message.role === 'assistant') out.pop();
  return out;
}

/**
 * The prompt size of the newest reply among `entries`, as `session.run.completed` reports it:
 * `input_tokens` plus the cache's reads and writes (the context the model read), and the reads
 * alone; null when no assistant line carries usage.
 */
export function lastUsageOf(
  entries: readonly Record<string, unknown>[],
): { inputTokens: number; cacheReadTokens: number } | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry?.type !== 'assistant' || entry.isSidechain === true) continue;
    const usage = (entry.message as { usage?: Record<string, unknown> } | undefined)?.usage;
    if (!usage || typeof usage.input_tokens !== 'number') continue;
    const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
    const cacheRead = count(usage.cache_read_input_tokens);
    return {
      inputTokens: count(usage.input_tokens) + cacheRead + count(usage.cache_creation_input_tokens),
      cacheReadTokens: cacheRead,
    };
  }
  return null;
}
