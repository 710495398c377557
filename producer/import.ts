/**
 * `compactor import`: loads transcripts into `sessions`/`messages`, in one of five formats
 * (shared/contract/native-transcripts.ts): the corpus JSONL format, a JSONL of Anthropic
 * `MessageParam`s, a Claude Code session file, a JSONL of OpenAI Chat Completions requests
 * (`openai-chat`: the last line's `messages` become an `openai-chat` session,
 * shared/formats/openai-chat/transcript.ts), or a log of OpenAI Responses requests or Agents SDK
 * session items (`openai-responses`, shared/formats/openai-responses/transcript.ts); named, or
 * detected from each file's first line.
 * Each file is parsed and validated completely before anything is written; a session that exists
 * already is refused, never duplicated.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError, printable } from '../shared/contract/errors.ts';
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from '../shared/contract/native-transcripts.ts';
import { DEFAULT_SESSION_FORMAT } from '../shared/contract/session-format.ts';
import { decodeTranscript, parseTranscript, TranscriptError } from '../shared/contract/transcript.ts';
import { detectArrayFormat, detectFormat, transcriptKind } from '../shared/formats/registry.ts';
import { idSchema } from '../shared/protocol/events.ts';
import type { Db } from './postgres/db.ts';
import {
  type CreateSessionInput,
  createSession,
  type NativeMessage,
  SessionExistsError,
} from './sessions.ts';

export { TRANSCRIPT_FORMATS, type TranscriptFormat };

export interface ImportedSession {
  file: string;
  sessionId: string;
  /** The format the file was read in. */
  format: TranscriptFormat;
  /** Whether {@link format} was detected from the file (true) or named by the caller. */
  detected: boolean;
  messageCount: number;
  tokenCount: number;
  ms: number;
}

export interface ImportOptions {
  tenantId: string;
  /** Default: the file name without `.jsonl` ({@link sessionIdOf}). */
  sessionId?: string;
  /** Default: detected from the file's first line (`detectFormat`). */
  format?: TranscriptFormat;
  /**
   * Claude Code files: also import the sidechain (subagent) lines of a main session file. A
   * subagent's own file is its session whatever this says. Other formats have no sidechains.
   */
  sidechains?: boolean;
  /**
   * Which system messages of a native transcript (`anthropic`, `claude-code`, `openai-chat`) are
   * stored pinned, so no compaction archives them ({@link SYSTEM_PINS}). Default `leading`: the
   * system (or `developer`) messages before the first other message, the agent's standing
   * instructions, stay in place instead of being archived and restated by every compaction. A
   * corpus-format line says `pinned` itself (system lines are pinned by default there).
   */
  pinSystem?: SystemPin;
  now?: () => number;
}

/** The values of {@link ImportOptions.pinSystem}: `leading` (the default) or `none`. */
export const SYSTEM_PINS = ['leading', 'none'] as const;
export type SystemPin = (typeof SYSTEM_PINS)[number];

/**
 * Expands files and directories (non-recursive; `*.jsonl` inside directories) into a sorted list.
 * @throws {InvalidInputError} for a path that does not exist or a directory without transcripts.
 */
export async function transcriptFiles(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const p of paths) {
    const info = await stat(p).catch(() => null);
    if (!info) throw new InvalidInputError(`${p}: no such file or directory`);
    if (info.isDirectory()) {
      const names = (await readdir(p)).filter((n) => n.endsWith('.jsonl')).sort();
      if (names.length === 0) throw new InvalidInputError(`${p}: no .jsonl transcripts in this directory`);
      files.push(...names.map((n) => path.join(p, n)));
    } else {
      files.push(p);
    }
  }
  return files;
}

/** The session id a file gets: its name without `.jsonl`. */
export function sessionIdOf(file: string): string {
  return path.basename(file).replace(/\.jsonl$/, '');
}

/**
 * Imports one transcript file as a session of `tenantId`. Native messages (the `anthropic` and
 * `claude-code` formats) get seqs 0..n-1 in file order, their content stored exactly as the file
 * has it, and the time the file gives them; corpus-format messages keep their own seqs.
 * @throws {TranscriptError} naming the line and field when the file is malformed, with the format
 *   it was read in when that was detected, or naming the file and the message (`messages[3]...`)
 *   when a message breaks the input rules (nothing written).
 * @throws {SessionExistsError} when the session exists already (nothing written).
 * @throws {InvalidInputError} when the tenant or session id is not a valid id, or the format is
 *   not one of {@link TRANSCRIPT_FORMATS} (nothing written).
 */
export async function importTranscript(
  db: Db,
  file: string,
  options: ImportOptions,
): Promise<ImportedSession> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const sessionId = options.sessionId ?? sessionIdOf(file);
  // The ids an event must carry to reach this session: refuse what no event could ever name.
  for (const [what, id] of [
    ['tenant id', options.tenantId],
    ['session id', sessionId],
  ] as const) {
    const valid = idSchema.safeParse(id);
    if (!valid.success)
      throw new InvalidInputError(`${what} "${printable(id)}": ${valid.error.issues[0]?.message}`);
  }
  if (options.pinSystem !== undefined && !SYSTEM_PINS.includes(options.pinSystem)) {
    throw new InvalidInputError(
      `pinSystem "${printable(String(options.pinSystem))}": expected ${SYSTEM_PINS.join(' or ')}`,
    );
  }
  if (options.format !== undefined && !TRANSCRIPT_FORMATS.includes(options.format)) {
    throw new InvalidInputError(
      `format "${printable(String(options.format))}": expected ${TRANSCRIPT_FORMATS.join(', ')}`,
    );
  }
  const { format, detected, messages } = await readTranscript(file, options);
  const { messageCount, tokenCount } = await createSession(db, {
    tenantId: options.tenantId,
    sessionId,
    messages,
    format: transcriptKind(format)?.format ?? DEFAULT_SESSION_FORMAT,
  }).catch((error: unknown) => {
    // A message the input rules refuse (shared/contract/content-checks.ts): say which file.
    if (error instanceof InvalidInputError && !(error instanceof SessionExistsError)) {
      throw new TranscriptError(`${file}: ${error.message} (messages[i] is the file's i-th message)`);
    }
    throw error;
  });
  return { file, sessionId, format, detected, messageCount, tokenCount, ms: now() - started };
}

/**
 * Reads and parses a whole transcript file into the messages {@link createSession} stores.
 * @throws {TranscriptError} as {@link importTranscript} says.
 */
export async function readTranscript(
  file: string,
  options: Pick<ImportOptions, 'format' | 'sidechains' | 'pinSystem'> = {},
): Promise<{ format: TranscriptFormat; detected: boolean; messages: CreateSessionInput['messages'] }> {
  const text = decodeTranscript(await readFile(file), file);
  const { format, detected } = options.format
    ? { format: options.format, detected: false }
    : chooseFormat(text, file);
  try {
    const messages = parseAs(format, text, file, options.sidechains === true);
    return { format, detected, messages: pinLeadingSystem(messages, options.pinSystem ?? 'leading') };
  } catch (error) {
    // Say how the file was read, so a wrong guess is plain to see (and the format can be named).
    if (detected && error instanceof TranscriptError) {
      throw new TranscriptError(`${error.message} (read as ${format}, detected from its first line)`);
    }
    throw error;
  }
}

function parseAs(
  format: TranscriptFormat,
  text: string,
  file: string,
  sidechains: boolean,
): CreateSessionInput['messages'] {
  const kind = transcriptKind(format);
  if (kind === undefined) return parseTranscript(text, file);
  return kind.reader
    .parse(text, file, { sidechains })
    .map((m, seq) => ({ seq, message: m.message as NativeMessage['message'], createdAt: m.createdAt }));
}

/**
 * Native messages with the leading system (or `developer`) run marked pinned under `leading`; corpus
 * rows, which carry their own `pinned`, and everything under `none`, as they are.
 */
function pinLeadingSystem(
  messages: CreateSessionInput['messages'],
  pin: SystemPin,
): CreateSessionInput['messages'] {
  if (pin === 'none') return messages;
  let pinning = true;
  return messages.map((m) => {
    if (!('message' in m)) return m;
    const role = (m.message as { role?: unknown }).role;
    pinning &&= role === 'system' || role === 'developer';
    return pinning ? { ...m, pinned: true } : m;
  });
}

/**
 * The format read off the file (shared/formats/registry.ts, `detectFormat`). A first line that is
 * not a JSON object shows no format and is wrong in every one: the corpus parser, the format that
 * came first, names what is wrong with it as it always has.
 */
function chooseFormat(text: string, file: string): { format: TranscriptFormat; detected: boolean } {
  const array = detectArrayFormat(text);
  if (array) return { format: array, detected: true };
  const first = text.split('\n').find((l) => l.trim() !== '');
  if (first !== undefined && !isJsonObject(first)) return { format: 'corpus', detected: false };
  return { format: detectFormat(text, file), detected: true };
}

function isJsonObject(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
