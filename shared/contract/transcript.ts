/**
 * Parses transcripts in the corpus JSONL format (one message per line; see the corpus README):
 * `{seq, role, kind, content, toolCallId, toolName, createdAt}`, plus an optional `pinned`.
 * Pure: bytes in, validated messages or an error naming the line and field out.
 */
import { z } from 'zod';
import { printable, TranscriptError } from './errors.ts';
import { legacyToolIds } from './message.ts';
import { estimateMessageTokens } from './tokens.ts';

/** Longest message content accepted, in characters. */
export const MAX_CONTENT_CHARS = 1_000_000;

const lineSchema = z
  .object({
    seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    kind: z.enum(['message', 'tool_call', 'tool_result']),
    content: z
      .string()
      .max(MAX_CONTENT_CHARS)
      .refine((s) => !s.includes('\u0000'), 'contains a NUL character, which Postgres text cannot store'),
    toolCallId: z.string().min(1).max(200).nullable().optional(),
    toolName: z.string().min(1).max(200).nullable().optional(),
    // ISO-8601; a time without an offset (as some agents write) is read as UTC.
    createdAt: z.iso.datetime({ offset: true, local: true }).nullable().optional(),
    pinned: z.boolean().optional(),
  })
  .superRefine((m, ctx) => {
    if (m.kind !== 'message' && !m.toolCallId) {
      ctx.addIssue({ code: 'custom', path: ['toolCallId'], message: `is required on a ${m.kind}` });
    }
    if (m.kind === 'tool_call' && m.role !== 'assistant') {
      ctx.addIssue({ code: 'custom', path: ['role'], message: 'a tool_call must have role assistant' });
    }
  });

/** One message ready to insert. `tokenCount` is estimated (shared/contract/tokens.ts). */
export interface TranscriptMessage {
  seq: number;
  role: 'system' | 'user' | 'assistant' | 'tool';
  kind: 'message' | 'tool_call' | 'tool_result';
  content: string;
  toolCallId: string | null;
  toolName: string | null;
  toolUseIds: string[];
  toolResultIds: string[];
  thinking: boolean;
  tokenCount: number;
  /** System instructions are pinned by default, so no compaction archives them; a line may say `pinned`. */
  pinned: boolean;
  createdAt: Date | null;
}

export { TranscriptError };

/**
 * Decodes and parses a whole transcript.
 * @param input the file's bytes, or its text already decoded ({@link decodeTranscript}).
 * @param source a name for error messages (the file path).
 * @throws {TranscriptError} on non-UTF-8 bytes, a line that is not JSON, a bad field, seqs that
 *   are not strictly ascending, a tool result whose call does not come before it, or no messages.
 */
export function parseTranscript(input: Uint8Array | string, source: string): TranscriptMessage[] {
  const text = typeof input === 'string' ? input : decodeTranscript(input, source);
  const out: TranscriptMessage[] = [];
  const calls = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).trim();
    if (raw === '') continue;
    const where = `${source}:${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      throw new TranscriptError(`${where}: not JSON (${printable((error as Error).message)})`);
    }
    const parsed = lineSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TranscriptError(`${where}: ${issue?.path.join('.') || 'line'}: ${issue?.message}`);
    }
    const m = parsed.data;
    const previous = out[out.length - 1];
    if (previous && m.seq <= previous.seq) {
      throw new TranscriptError(
        `${where}: seq ${m.seq} is not greater than the previous seq ${previous.seq}`,
      );
    }
    const toolCallId = m.toolCallId ?? null;
    if (m.kind === 'tool_call' && toolCallId) calls.add(toolCallId);
    if (m.kind === 'tool_result' && toolCallId && !calls.has(toolCallId)) {
      throw new TranscriptError(
        `${where}: toolCallId "${printable(toolCallId)}": tool result without an earlier tool call`,
      );
    }
    out.push({
      seq: m.seq,
      role: m.role,
      kind: m.kind,
      content: m.content,
      toolCallId,
      toolName: m.toolName ?? null,
      ...legacyToolIds(m.kind, toolCallId),
      tokenCount: estimateMessageTokens(m.content),
      pinned: m.pinned ?? m.role === 'system',
      createdAt: m.createdAt ? asUtc(m.createdAt) : null,
    });
  }
  if (out.length === 0) throw new TranscriptError(`${source}: no messages`);
  return out;
}

/**
 * A transcript's bytes as text, whatever its format.
 * @throws {TranscriptError} naming the line of the first byte sequence that is not UTF-8.
 */
export function decodeTranscript(bytes: Uint8Array, source: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new TranscriptError(`${source}:${firstInvalidLine(bytes)}: not valid UTF-8`);
  }
}

/** Line (1-based) of the first byte sequence that is not UTF-8, for the error message. */
function firstInvalidLine(bytes: Uint8Array): number {
  const lenient = new TextDecoder('utf-8').decode(bytes);
  const at = lenient.indexOf('\uFFFD');
  return lenient.slice(0, Math.max(at, 0)).split('\n').length;
}

/** Parses an ISO-8601 time; one without `Z` or an offset is taken as UTC, not local time. */
function asUtc(iso: string): Date {
  return new Date(/(Z|[+-]\d{2}:?\d{2})$/i.test(iso) ? iso : `${iso}Z`);
}
