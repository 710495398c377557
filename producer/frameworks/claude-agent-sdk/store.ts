/**
 * A `SessionStore` of the Claude Agent SDK backed by compactor. The SDK mirrors every line of a
 * session's transcript to it (`append`) and reads a session back to resume it (`load`):
 *
 * - every line is kept whole, in order, in `claude_code_entries` (a line with a `uuid` once: a
 *   retried batch writes nothing twice); nothing the SDK appends is dropped or changed;
 * - the `user` and `assistant` lines of the main transcript are also the messages of an `anthropic`
 *   compactor session of the same id (lines.ts reads them as `compactor import` reads a Claude Code
 *   file), which `session.run.completed` gets compacted like any other;
 * - `load` returns every stored line, in order, and — when compactor has compacted the session
 *   since it last served it — ends them with the compaction written as Claude Code writes its own
 *   (chain.ts: a `compact_boundary`, then the compacted history). Claude Code resumes from the
 *   newest boundary, so the resumed agent's next request is compactor's context: its summary, then
 *   the messages the compaction kept; the lines before stay in the transcript, as after its own
 *   `/compact`. Those lines are stored too (`origin` `compactor`), so the lines the agent writes
 *   next, which point at them, always find them.
 *
 * Raw lines, not only the compacted history, because the SDK's contract is that a load gives back
 * what was appended (titles, tags, modes and subagent transcripts included, which are no messages),
 * and because a compacted history alone would leave nothing to resume from on the agent's side but
 * the summary; compacted at the end, because that is what keeps a resumed agent's requests small.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { SessionKey, SessionStore, SessionStoreEntry } from '@anthropic-ai/claude-agent-sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { InvalidInputError, SessionNotFoundError } from '../../../shared/contract/errors.ts';
import { idSchema } from '../../../shared/protocol/events.ts';
import { loadContext } from '../../context.ts';
import {
  appendEntries,
  deleteEntries,
  type EntryKey,
  listEntrySessions,
  listEntrySubpaths,
  markMessages,
  readEntries,
  type StoredEntry,
  transcriptState,
} from '../../postgres/claude-code-entries.ts';
import type { Db } from '../../postgres/db.ts';
import { appendToLiveSession, createSession, liveSessionOf, SessionExistsError } from '../../sessions.ts';
import { compactionChain } from './chain.ts';
import { isMessageLine, type Line, lastUsageOf, messagesOf } from './lines.ts';

/** What {@link CompactorSessionStore} works with. */
export interface CompactorSessionStoreOptions {
  db: Db;
  /** Every session of this store belongs to this tenant; the SDK's `projectKey` groups them inside it. */
  tenantId: string;
  /** The agent the sessions are created for (its policy, when it has one, wins over the tenant's). */
  agentId?: string | null;
  /** The model's context window in tokens, recorded on the sessions it creates (the triggers' `contextFraction`). */
  contextWindow?: number | null;
  /**
   * A sentence added to the first message of a compacted history the store serves (the recall
   * tools' names, say). Default: none.
   */
  compactedNote?: (sessionId: string) => string | null;
  /**
   * Told, in one line, when a resume is served the transcript as written because a line of it
   * cannot be a message of the compactor session (the append that stored it failed naming it).
   * Default `console.warn`.
   */
  onWarning?: (message: string) => void;
  now?: () => Date;
  newUuid?: () => string;
}

/** What the end of a run found (see {@link CompactorSessionStore.endRun}). */
export interface RunEnd {
  /**
   * The compactor session the messages are in now (the SDK's id, or the child it continued in);
   * null when the transcript has no message yet, so compactor has no session.
   */
  liveSessionId: string | null;
  /** The size of the run's last request, when a reply reported it. */
  usage: { inputTokens: number; cacheReadTokens: number } | null;
  /** Lines of the local transcript that had not reached the store when waiting gave up; 0 normally. */
  missing: number;
}

/** How long the end of a run waits for the SDK to hand over the transcript's last lines, ms. */
const MIRROR_WAIT_MS = 10_000;

/**
 * The Agent SDK's `SessionStore` on compactor's database. See the file comment for what it keeps.
 * Concurrent calls for one session run one at a time in this process; two processes appending to
 * one session interleave whole batches.
 */
export class CompactorSessionStore implements SessionStore {
  readonly #db: Db;
  readonly #tenantId: string;
  readonly #options: CompactorSessionStoreOptions;
  readonly #queues = new Map<string, Promise<unknown>>();
  /** Per session: the uuids this process stored or found stored (the end of a run waits on them). */
  readonly #seen = new Map<string, Set<string>>();
  /** Per session: the usage of the newest reply this process stored. */
  readonly #usage = new Map<string, { inputTokens: number; cacheReadTokens: number }>();

  constructor(options: CompactorSessionStoreOptions) {
    const tenant = idSchema.safeParse(options.tenantId);
    if (!tenant.success) {
      throw new InvalidInputError(`tenantId: ${tenant.error.issues[0]?.message ?? 'not a valid id'}`);
    }
    this.#db = options.db;
    this.#tenantId = options.tenantId;
    this.#options = options;
  }

  /**
   * Stores a batch of lines after the transcript's last, then the messages they complete in the
   * compactor session (a reply still streaming waits for its last line, or the end of the run).
   * @throws {InvalidInputError} naming the key's field or the line (index and field) that is wrong:
   *   then nothing of the batch is written. A line that is no valid message (content neither a
   *   string nor blocks, a block compactor's input rules refuse) is stored all the same, and the
   *   error names it: the SDK reports it (`mirror_error`) and every later batch of the session
   *   reports it again until it is resolved, since the messages after it wait for it.
   */
  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    const where = this.#keyOf(key);
    const checked = entries.map((entry, i) => checkEntry(entry, i));
    await this.#serial(where.sessionId, async () => {
      const state = await transcriptState(this.#db, { ...where, subpath: '' });
      if (state.projectKey !== null && state.projectKey !== key.projectKey) {
        throw new InvalidInputError(
          `projectKey: session "${where.sessionId}" is stored under project "${state.projectKey}", not "${key.projectKey}"`,
        );
      }
      const stored = await appendEntries(this.#db, where, key.projectKey, checked);
      this.#remember(where.sessionId, checked);
      if (where.subpath !== '' || !stored.some((e) => isMessageLine(e.entry))) return;
      await this.#syncMessages(where.sessionId, false);
    });
  }

  /**
   * Every stored line of the transcript, in order, ended — for a main transcript compactor has
   * compacted since it last served it — by the compaction as Claude Code writes its own. Null for a
   * transcript never written. A transcript holding a line the compactor session cannot hold as a
   * message is served as written, and `onWarning` says why.
   * @throws {InvalidInputError} for a malformed key; the database's errors.
   */
  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const where = this.#keyOf(key);
    if (where.subpath !== '') {
      const lines = await readEntries(this.#db, where);
      return lines.length === 0 ? null : lines.map((l) => l.entry as SessionStoreEntry);
    }
    return this.#serial(where.sessionId, async () => {
      let lines = await readEntries(this.#db, where);
      if (lines.length === 0) return null;
      // The run that wrote the last reply is over: its reply is whole.
      try {
        await this.#syncMessages(where.sessionId, true);
      } catch (error) {
        if (!(error instanceof InvalidInputError)) throw error;
        // The agent resumes all the same, from its own lines: compactor's session stops short of
        // the line it cannot hold, so it has no compaction to serve that would be current.
        (this.#options.onWarning ?? console.warn)(
          `compactor: session "${where.sessionId}" resumes from its transcript as written: ${error.message}`,
        );
        return lines.map((l) => l.entry as SessionStoreEntry);
      }
      const chain = await this.#compactedChain(where, lines);
      if (chain.length > 0) lines = [...lines, ...chain];
      this.#remember(
        where.sessionId,
        lines.map((l) => ({ uuid: l.uuid, entry: l.entry })),
      );
      return lines.map((l) => l.entry as SessionStoreEntry);
    });
  }

  /** The sessions of a project and their last write (ms since the epoch); the SDK sorts them. */
  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    return listEntrySessions(this.#db, this.#tenantId, projectKey);
  }

  /** The subagent transcripts (`subpath`s) of a session, for the SDK to resume them too. */
  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    const { sessionId } = this.#keyOf(key);
    return listEntrySubpaths(this.#db, this.#tenantId, sessionId);
  }

  /**
   * Deletes a transcript's stored lines (a main transcript's with its subagents'). The compactor
   * session made of its messages stays, with its archive and ledger: `compactor purge` (or the API's
   * `DELETE /v1/sessions/{id}`) deletes those, and these lines with them.
   */
  async delete(key: SessionKey): Promise<void> {
    const where = this.#keyOf(key);
    await this.#serial(where.sessionId, async () => {
      await deleteEntries(this.#db, where);
      if (where.subpath === '') this.#seen.delete(where.sessionId);
    });
  }

  /**
   * The end of a run: waits (at most 10 s) until every line of the local transcript at
   * `transcriptPath` (the `Stop` hook's `transcript_path`) has reached the store, then stores the
   * run's last reply as a message. Without a readable transcript it takes what the store has.
   * @throws the database's errors, and {@link append}'s for a line that is no valid message.
   */
  async endRun(sessionId: string, transcriptPath?: string): Promise<RunEnd> {
    const missing = await this.#awaitMirror(sessionId, transcriptPath);
    return this.#serial(sessionId, async () => {
      const live = await this.#syncMessages(sessionId, true);
      const liveSessionId =
        live ??
        (await liveSessionOf(this.#db, this.#tenantId, sessionId).catch((error: unknown) => {
          if (error instanceof SessionNotFoundError) return null;
          throw error;
        }));
      return { liveSessionId, usage: this.#usage.get(sessionId) ?? null, missing };
    });
  }

  /**
   * Stores the messages of the lines not yet stored as messages (the last reply only when `closed`)
   * in the compactor session, creating it on first use, with the compaction version the agent's
   * context was served at, so its replies' thinking is dropped once a compaction changes that context.
   * @returns the live session they went to, or null when there was nothing to store.
   */
  async #syncMessages(sessionId: string, closed: boolean): Promise<string | null> {
    const main = { tenantId: this.#tenantId, sessionId, subpath: '' };
    const state = await transcriptState(this.#db, main);
    const pending = (await readEntries(this.#db, main, state.syncedThrough)).filter(
      (l) => l.origin === 'sdk' && isMessageLine(l.entry),
    );
    const messages = messagesOf(pending as Line[], `session "${sessionId}"`, closed);
    if (messages.length === 0) return null;
    await this.#ensureSession(sessionId);
    const natives = messages.map((m) => ({ message: m.message, createdAt: m.createdAt }));
    const first = messages[0]?.seqs[0] ?? 0;
    const last = messages.at(-1)?.seqs.at(-1) ?? first;
    const result = await appendToLiveSession(this.#db, this.#tenantId, sessionId, natives, {
      contextVersion: state.servedVersion,
      idempotency: {
        key: `claude-code:${sessionId}:${first}-${last}`,
        requestHash: createHash('sha256').update(JSON.stringify(natives)).digest('hex'),
      },
    });
    await markMessages(
      this.#db,
      main,
      messages.map((m, i) => ({ seqs: m.seqs, messageSeq: result.seqs[i] ?? -1 })),
    );
    return result.sessionId;
  }

  async #ensureSession(sessionId: string): Promise<void> {
    try {
      await createSession(this.#db, {
        tenantId: this.#tenantId,
        sessionId,
        messages: [],
        ...(this.#options.agentId ? { agentId: this.#options.agentId } : {}),
        ...(this.#options.contextWindow ? { contextWindow: this.#options.contextWindow } : {}),
      });
    } catch (error) {
      if (!(error instanceof SessionExistsError)) throw error;
    }
  }

  /**
   * The lines of compactor's newest compaction when the store has not served it yet (stored, with
   * their seqs); [] when the session was never compacted, or the agent already has it.
   */
  async #compactedChain(where: EntryKey, lines: StoredEntry[]): Promise<StoredEntry[]> {
    const state = await transcriptState(this.#db, where);
    let context: Awaited<ReturnType<typeof loadContext>>;
    try {
      // `text`: a Claude Code agent cannot send the beta an `anthropic-compaction` block needs.
      context = await loadContext(this.#db, {
        tenantId: this.#tenantId,
        sessionId: where.sessionId,
        compactionBlock: 'text',
      });
    } catch (error) {
      if (error instanceof SessionNotFoundError) return [];
      throw error;
    }
    if (context.version === 0 || context.version <= state.servedVersion) return [];
    const newest = [...lines].reverse();
    const leaf = newest.find((l) => l.uuid !== null);
    const reply = newest.find((l) => l.entry.type === 'assistant' && l.origin === 'sdk');
    const model = (reply?.entry.message as { model?: unknown } | undefined)?.model;
    const note = this.#options.compactedNote?.(where.sessionId) ?? null;
    const messages = note === null ? context.messages : withNote(context.messages, note);
    const chain = compactionChain({
      messages,
      sessionId: where.sessionId,
      version: context.version,
      leafUuid: leaf?.uuid ?? null,
      model: typeof model === 'string' ? model : undefined,
      common: commonFields(leaf?.entry),
      now: (this.#options.now ?? (() => new Date()))(),
      newUuid: this.#options.newUuid ?? randomUUID,
    });
    const projectKey = state.projectKey ?? '';
    return appendEntries(
      this.#db,
      where,
      projectKey,
      chain.map((entry) => ({ uuid: entry.uuid as string, entry })),
      { origin: 'compactor', compactionVersion: context.version },
    );
  }

  /** Waits until the uuids of the local transcript's lines are all stored; returns how many were not. */
  async #awaitMirror(sessionId: string, transcriptPath: string | undefined): Promise<number> {
    if (!transcriptPath) return 0;
    let text: string;
    try {
      text = await readFile(transcriptPath, 'utf8');
    } catch {
      return 0; // not on this machine (a remote Claude Code): the store has what it has
    }
    const wanted = new Set<string>();
    for (const raw of text.split('\n')) {
      if (raw.trim() === '') continue;
      try {
        const value = JSON.parse(raw) as { uuid?: unknown };
        if (typeof value.uuid === 'string') wanted.add(value.uuid);
      } catch {
        // a line being written as we read: the next read has it whole
      }
    }
    const deadline = Date.now() + MIRROR_WAIT_MS;
    for (;;) {
      const seen = this.#seen.get(sessionId) ?? new Set<string>();
      const missing = [...wanted].filter((u) => !seen.has(u)).length;
      if (missing === 0 || Date.now() >= deadline) return missing;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  #remember(
    sessionId: string,
    entries: Array<{ uuid: string | null; entry: Record<string, unknown> }>,
  ): void {
    let seen = this.#seen.get(sessionId);
    if (!seen) {
      seen = new Set();
      this.#seen.set(sessionId, seen);
    }
    for (const e of entries) if (e.uuid !== null) seen.add(e.uuid);
    const usage = lastUsageOf(entries.map((e) => e.entry));
    if (usage) this.#usage.set(sessionId, usage);
  }

  /** Runs `work` after the session's earlier calls in this process (and before its later ones). */
  #serial<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const before = this.#queues.get(sessionId) ?? Promise.resolve();
    const run = before.then(work, work);
    const settled = run.catch(() => undefined);
    this.#queues.set(sessionId, settled);
    void settled.then(() => {
      if (this.#queues.get(sessionId) === settled) this.#queues.delete(sessionId);
    });
    return run;
  }

  #keyOf(key: { projectKey: string; sessionId: string; subpath?: string }): EntryKey {
    if (typeof key?.projectKey !== 'string' || key.projectKey === '') {
      throw new InvalidInputError('projectKey: expected a non-empty string');
    }
    const session = idSchema.safeParse(key.sessionId);
    if (!session.success) {
      throw new InvalidInputError(`sessionId: ${session.error.issues[0]?.message ?? 'not a valid id'}`);
    }
    const subpath = (key as SessionKey).subpath;
    if (subpath !== undefined && (typeof subpath !== 'string' || subpath === '')) {
      throw new InvalidInputError('subpath: expected a non-empty string, or none for the main transcript');
    }
    return { tenantId: this.#tenantId, sessionId: key.sessionId, subpath: subpath ?? '' };
  }
}

/**
 * A batch line as stored: a JSON object with a string `type`, its `uuid` when it has one.
 * @throws {InvalidInputError} naming the line's index and what is wrong.
 */
function checkEntry(entry: unknown, index: number): { uuid: string | null; entry: Record<string, unknown> } {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new InvalidInputError(`entries[${index}]: expected a JSON object (one transcript line)`);
  }
  const line = entry as Record<string, unknown>;
  if (typeof line.type !== 'string' || line.type === '') {
    throw new InvalidInputError(`entries[${index}].type: expected a non-empty string`);
  }
  if (line.uuid !== undefined && (typeof line.uuid !== 'string' || line.uuid === '')) {
    throw new InvalidInputError(`entries[${index}].uuid: expected a non-empty string when present`);
  }
  let text: string;
  try {
    text = JSON.stringify(line);
  } catch (error) {
    throw new InvalidInputError(`entries[${index}]: not JSON-safe (${(error as Error).message})`);
  }
  // What JSON cannot say (undefined, functions, NaN) would not come back as it went in.
  const back = JSON.parse(text) as unknown;
  if (!sameJson(back, line)) {
    throw new InvalidInputError(
      `entries[${index}]: holds values JSON cannot carry (undefined, a function, NaN or Infinity, a Date); the SDK's lines are JSON`,
    );
  }
  return { uuid: typeof line.uuid === 'string' ? line.uuid : null, entry: line };
}

/** Whether `a` (parsed JSON) equals `b` value for value. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Object.getPrototypeOf(b) !== Object.prototype && !Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** The fields every line of a transcript repeats, taken from one of its lines. */
function commonFields(entry: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!entry) return {};
  const out: Record<string, unknown> = {};
  for (const field of ['userType', 'entrypoint', 'cwd', 'version', 'gitBranch']) {
    if (entry[field] !== undefined) out[field] = entry[field];
  }
  return out;
}

/** The messages with `note` as one more text block of the first (the summary's user turn). */
function withNote(messages: MessageParam[], note: string): MessageParam[] {
  const [first, ...rest] = messages;
  if (first?.role !== 'user') return messages;
  const blocks =
    typeof first.content === 'string' ? [{ type: 'text' as const, text: first.content }] : first.content;
  return [{ role: 'user', content: [...blocks, { type: 'text', text: note }] }, ...rest];
}
