/**
 * `compactor import`: loads transcripts in the corpus JSONL format into `sessions`/`messages`.
 * Each file is parsed and validated completely before anything is written; a session that exists
 * already is refused, never duplicated.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError, printable } from '../shared/contract/errors.ts';
import { idSchema } from '../shared/contract/events.ts';
import { parseTranscript } from '../shared/contract/transcript.ts';
import type { Db } from '../shared/postgres/db.ts';
import { createSession } from './sessions.ts';

export interface ImportedSession {
  file: string;
  sessionId: string;
  messageCount: number;
  tokenCount: number;
  ms: number;
}

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
 * Imports one transcript file as a session of `tenantId`.
 * @throws {TranscriptError} naming the line and field when the file is malformed (nothing written).
 * @throws {SessionExistsError} when the session exists already (nothing written).
 * @throws {InvalidInputError} when the tenant or session id is not a valid id (nothing written).
 */
export async function importTranscript(
  db: Db,
  file: string,
  options: { tenantId: string; sessionId?: string; now?: () => number },
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
  const messages = parseTranscript(await readFile(file), file);
  const { messageCount, tokenCount } = await createSession(db, {
    tenantId: options.tenantId,
    sessionId,
    messages,
  });
  return { file, sessionId, messageCount, tokenCount, ms: now() - started };
}
