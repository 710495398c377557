/**
 * Transcripts of native Anthropic messages, parsed into `MessageParam`s with their content exactly
 * as written (every block, any type, every field kept; nothing rewritten). Two formats:
 * - `anthropic`: one `MessageParam` (`{ role, content }`) per line;
 * - `claude-code`: the session files Claude Code writes (`~/.claude/projects/<project>/<id>.jsonl`):
 *   only `user` and `assistant` lines are messages (`progress`, `summary`, `system`,
 *   `file-history-snapshot`, `queue-operation` and any other type are skipped); the session is the
 *   live branch: the chain of `parentUuid` links from the last message line back to its root, as
 *   Claude Code resumes it (a resumed session re-logs its history under new uuids, and a rewound
 *   one leaves its abandoned turns behind; both stay in the file, off the branch; the results of
 *   parallel tool calls, each the child of its own call's line, all belong to it); the lines of one
 *   streamed reply share `message.id` and become one message, blocks in order; sidechain lines (a
 *   subagent's turns) are left out unless asked for, except in a subagent's own file, where every
 *   message line is a sidechain and the file is the session. A file without uuids is read whole.
 * Pure: bytes in, messages out. Every refusal names the source, the line and the field.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { printable, TranscriptError } from './errors.ts';

/** One message read from a transcript, in order. */
export interface NativeMessage {
  /** As the Messages API takes it: `content` exactly as the file has it. */
  message: MessageParam;
  /** When it was written, where the file says. */
  createdAt: Date | null;
  /** The 1-based line it starts on, for error messages and tracing. */
  line: number;
}

/** The transcript formats `compactor import` reads. */
export const TRANSCRIPT_FORMATS = [
  'corpus',
  'anthropic',
  'claude-code',
  'openai-chat',
  'openai-responses',
] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** Options of {@link parseClaudeCode}. */
export interface ClaudeCodeOptions {
  /** Keep sidechain (subagent) lines of a main session file. Default false. */
  sidechains?: boolean;
}

const CLAUDE_CODE_TYPES = new Set([
  'user',
  'assistant',
  'progress',
  'summary',
  'system',
  'file-history-snapshot',
]);

/**
 * Whether a transcript's first JSON line is a Claude Code session line: a `type` that Claude Code
 * writes, or a `type` with a `uuid` or `sessionId`.
 */
export function isClaudeCodeLine(value: Record<string, unknown>): boolean {
  return (
    typeof value.type === 'string' &&
    (CLAUDE_CODE_TYPES.has(value.type) || 'uuid' in value || 'sessionId' in value)
  );
}

/**
 * Parses a JSONL of `MessageParam`s.
 * @throws {TranscriptError} naming the line and field of the first bad line, or when there is none.
 */
export function parseAnthropicJsonl(text: string, source: string): NativeMessage[] {
  const out: NativeMessage[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    const line = i + 1;
    const value = parseJsonLine(raw, source, line);
    out.push({ message: messageParamOf(value, `${source}:${line}`), createdAt: null, line });
  });
  if (out.length === 0) throw new TranscriptError(`${source}: no messages`);
  return out;
}

/**
 * Parses a Claude Code session file.
 * @throws {TranscriptError} naming the line and field of the first bad message line, or when the
 *   file holds no message.
 */
export function parseClaudeCode(
  text: string,
  source: string,
  options: ClaudeCodeOptions = {},
): NativeMessage[] {
  const lines: Array<{ value: Record<string, unknown>; line: number }> = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() !== '') lines.push({ value: parseJsonLine(raw, source, i + 1), line: i + 1 });
  });
  const turns = lines.filter(({ value }) => value.type === 'user' || value.type === 'assistant');
  // A subagent's own file: every turn is a sidechain, and the file is that subagent's session.
  const subagentFile = turns.length > 0 && turns.every(({ value }) => value.isSidechain === true);
  const keepSidechains = options.sidechains === true || subagentFile;
  const branch = liveBranch(lines, turns, subagentFile);
  const seen = new Set<string>();
  const out: NativeMessage[] = [];
  /**
   * Per chain (the main session, or one subagent's sidechain), the assistant message being
   * assembled from the lines of one streamed reply: a subagent working in the background writes
   * its lines between the lines of a reply of the main session, which stays one message.
   */
  const open = new Map<string, { id: string; entry: NativeMessage; blocks: unknown[] }>();
  for (const { value, line } of turns) {
    const where = `${source}:${line}`;
    const sidechain = value.isSidechain === true && !subagentFile;
    if (sidechain ? !keepSidechains : branch !== null && !branch.has(line)) continue;
    if (typeof value.uuid === 'string') {
      if (seen.has(value.uuid)) continue;
      seen.add(value.uuid);
    }
    const message = messageParamOf(value.message, `${where}: message`);
    if (message.role !== value.type) {
      throw new TranscriptError(
        `${where}: message.role: "${message.role}" on a "${String(value.type)}" line`,
      );
    }
    const createdAt = timestampOf(value.timestamp, where);
    const id = (value.message as { id?: unknown }).id;
    const chain = value.isSidechain === true ? `sidechain ${String(value.agentId ?? '')}` : 'main';
    const reply = open.get(chain);
    if (message.role === 'assistant' && typeof id === 'string' && reply?.id === id) {
      // A later line of the same streamed reply: its blocks follow the ones before, in order.
      reply.blocks.push(...blocksOf(message.content));
      reply.entry.message = { role: 'assistant', content: reply.blocks as MessageParam['content'] };
      continue;
    }
    const entry: NativeMessage = { message, createdAt, line };
    out.push(entry);
    if (message.role === 'assistant' && typeof id === 'string') {
      open.set(chain, { id, entry, blocks: blocksOf(message.content) });
    } else {
      open.delete(chain);
    }
  }
  if (out.length === 0) throw new TranscriptError(`${source}: no user or assistant messages`);
  return out;
}

/**
 * The lines of the live branch: from the last message line that is not a sidechain (in a
 * subagent's file, the last line), its `parentUuid` chain back to the root, through any line that
 * has a uuid. Null when the file carries no uuids (read it whole).
 */
function liveBranch(
  lines: Array<{ value: Record<string, unknown>; line: number }>,
  turns: Array<{ value: Record<string, unknown>; line: number }>,
  subagentFile: boolean,
): Set<number> | null {
  const byUuid = new Map<string, { value: Record<string, unknown>; line: number }>();
  for (const entry of lines) if (typeof entry.value.uuid === 'string') byUuid.set(entry.value.uuid, entry);
  if (byUuid.size === 0) return null;
  const main = turns.filter(({ value }) => subagentFile || value.isSidechain !== true);
  const branch = new Set<number>();
  let current = main[main.length - 1];
  while (current && !branch.has(current.line)) {
    branch.add(current.line);
    const parent = current.value.parentUuid;
    current = typeof parent === 'string' ? byUuid.get(parent) : undefined;
  }
  // Parallel tool calls fork the chain: each call's line is the parent of its own result's line,
  // and only the last result's line leads on. The other results belong to the branch too.
  for (const { value, line } of turns) {
    if (branch.has(line) || value.type !== 'user' || typeof value.parentUuid !== 'string') continue;
    const parent = byUuid.get(value.parentUuid);
    if (parent && branch.has(parent.line) && answersCallOf(value, parent.value)) branch.add(line);
  }
  return branch;
}

/** Whether a user line holds only tool results, each answering a `tool_use` of `parent`'s message. */
function answersCallOf(line: Record<string, unknown>, parent: Record<string, unknown>): boolean {
  const content = (line.message as { content?: unknown } | undefined)?.content;
  const calls = (parent.message as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content) || content.length === 0 || !Array.isArray(calls)) return false;
  const ids = new Set(
    calls.flatMap((b) => (b?.type === 'tool_use' && typeof b.id === 'string' ? [b.id as string] : [])),
  );
  return content.every((b) => b?.type === 'tool_result' && ids.has(b.tool_use_id));
}

/** `{ role, content }` of a parsed line, validated; other fields (a reply's id, usage) are not part of it. */
function messageParamOf(value: unknown, where: string): MessageParam {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TranscriptError(`${where}: expected an object with role and content`);
  }
  const { role, content } = value as { role?: unknown; content?: unknown };
  if (role !== 'user' && role !== 'assistant') {
    throw new TranscriptError(
      `${where}.role: expected "user" or "assistant", got ${printable(JSON.stringify(role) ?? 'nothing')}`,
    );
  }
  if (typeof content === 'string') return { role, content };
  if (!Array.isArray(content)) {
    throw new TranscriptError(`${where}.content: expected a string or a list of content blocks`);
  }
  content.forEach((block, j) => {
    if (typeof block !== 'object' || block === null || Array.isArray(block)) {
      throw new TranscriptError(`${where}.content.${j}: expected a content block object`);
    }
    if (typeof (block as { type?: unknown }).type !== 'string' || (block as { type: string }).type === '') {
      throw new TranscriptError(`${where}.content.${j}.type: expected a block type`);
    }
  });
  return { role, content: content as MessageParam['content'] };
}

function blocksOf(content: MessageParam['content']): unknown[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : [...content];
}

function timestampOf(value: unknown, where: string): Date | null {
  if (value === undefined || value === null) return null;
  const date = typeof value === 'string' ? new Date(value) : null;
  if (date === null || Number.isNaN(date.getTime())) {
    throw new TranscriptError(
      `${where}: timestamp: not an ISO-8601 date: ${printable(JSON.stringify(value), 80)}`,
    );
  }
  return date;
}

/**
 * One line of a JSONL transcript, which must be a JSON object.
 * @param line its 1-based number, for the error.
 * @throws {TranscriptError} naming the file and line when it is not valid JSON or no object.
 */
export function parseJsonLine(raw: string, source: string, line: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new TranscriptError(`${source}:${line}: not valid JSON (${printable((error as Error).message)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TranscriptError(`${source}:${line}: expected a JSON object`);
  }
  return value as Record<string, unknown>;
}
