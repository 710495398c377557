/**
 * The middleware's I/O with compactor: append a LangChain agent's new messages to its session
 * (creating the session on first use), load the compacted context, append the model's reply. All
 * through the client library (producer/), so every rule of an append holds (validation, tool-call
 * ids, session limits, a `newSession` lineage followed to its live session).
 */
import { createHash } from 'node:crypto';
import type { BaseMessage } from '@langchain/core/messages';
import { InvalidInputError, SessionNotFoundError } from '../../../shared/contract/errors.ts';
import {
  type AppendIdempotency,
  appendToLiveSession,
  createSession,
  type Db,
  type LoadedChatContext,
  type LoadedContext,
  loadContext,
  SessionExistsError,
} from '../../index.ts';
import { type LangChainFormat, storedMessages } from './format.ts';

/** Where an agent's messages go. */
export interface SessionTarget {
  db: Db;
  tenantId: string;
  /** The session (or any session of its lineage: appends and loads follow it to the live one). */
  sessionId: string;
  /** The session the thread started in (the idempotency keys of its appends name it). */
  origin: string;
  format: LangChainFormat;
  /** Given to `createSession` when the session is made. */
  agentId?: string | null | undefined;
  /** Given to `createSession` when the session is made, in tokens. */
  contextWindow?: number | null | undefined;
}

/**
 * Appends `messages`, the agent's messages from place `first` on, to the live session of
 * `target.sessionId`, creating the session (empty, in `target.format`) when the tenant has none.
 *
 * All are mapped first, so a message the format cannot hold is refused before anything is written.
 * Then each is appended on its own, idempotently when it has an id (LangGraph gives every message of
 * its state one): the key is the thread's first session, the message's place and its id. So a
 * message stored once is never stored again, whatever batch it comes in next: a model call that
 * failed after its new messages were stored leaves them unrecorded in the state, and the next call
 * (with the user's next message too) finds them already there.
 * @returns the live session the messages went to.
 * @throws {InvalidInputError} naming the message (its place in the agent's state) and the field,
 *   when one cannot be stored in the format (nothing is written) or the client library refuses it
 *   (the messages before it stay stored: they are the history up to it), and the client library's
 *   other errors (`SessionLimitError`, …).
 */
export async function appendNew(
  target: SessionTarget,
  messages: readonly BaseMessage[],
  first: number,
  options: { contextVersion?: number } = {},
): Promise<string> {
  const stored = storedMessages(messages, target.format, first);
  let live = target.sessionId;
  for (const [i, message] of stored.entries()) {
    const idempotency = idempotencyOf(target, messages[i]?.id, first + i);
    const append = () =>
      appendToLiveSession(target.db, target.tenantId, live, [message], {
        format: target.format,
        ...(idempotency ? { idempotency } : {}),
        ...(options.contextVersion === undefined ? {} : { contextVersion: options.contextVersion }),
      });
    const at = `messages[${first + i}] (${messages[i]?.getType()})`;
    try {
      live = (await placed(append, at)).sessionId;
    } catch (error) {
      if (!(error instanceof SessionNotFoundError)) throw error;
      await ensureSession(target);
      live = (await placed(append, at)).sessionId;
    }
  }
  return live;
}

/**
 * The live session's next context in `target.format`, compacted or not (an `anthropic` session's
 * compaction block as compactor's readable text: LangChain's chat models send no beta header).
 * Creates the session when the tenant has none yet (an agent whose first model call comes before
 * any message).
 */
export async function loadFor(target: SessionTarget): Promise<LoadedContext | LoadedChatContext> {
  const load = () =>
    target.format === 'anthropic'
      ? loadContext(target.db, {
          tenantId: target.tenantId,
          sessionId: target.sessionId,
          format: 'anthropic',
          compactionBlock: 'text',
        })
      : loadContext(target.db, {
          tenantId: target.tenantId,
          sessionId: target.sessionId,
          format: 'openai-chat',
        });
  try {
    return await load();
  } catch (error) {
    if (!(error instanceof SessionNotFoundError)) throw error;
    await ensureSession(target);
    return load();
  }
}

/** Creates the session, empty, unless it exists already (made by a concurrent run). */
async function ensureSession(target: SessionTarget): Promise<void> {
  try {
    await createSession(target.db, {
      tenantId: target.tenantId,
      sessionId: target.sessionId,
      format: target.format,
      messages: [],
      ...(target.agentId == null ? {} : { agentId: target.agentId }),
      ...(target.contextWindow == null ? {} : { contextWindow: target.contextWindow }),
    });
  } catch (error) {
    if (!(error instanceof SessionExistsError)) throw error;
  }
}

/**
 * Runs the append of one message, naming it in an error as the agent's state places it
 * (`messages[7] (tool)`) instead of `messages[0]` of the append.
 */
async function placed<T>(append: () => Promise<T>, at: string): Promise<T> {
  try {
    return await append();
  } catch (error) {
    if (error instanceof InvalidInputError && !(error instanceof SessionNotFoundError)) {
      error.message = error.message.replace(/^messages\[0\]/, at);
    }
    throw error;
  }
}

/**
 * The idempotency of one message's append: its key from the thread's first session, the message's
 * place and its id; its request hash the same, so a message LangChain relabels after it was stored
 * (the agent node names the model's reply) is still the same request. None without an id.
 */
function idempotencyOf(
  target: SessionTarget,
  id: string | undefined,
  place: number,
): AppendIdempotency | undefined {
  if (typeof id !== 'string' || id === '') return undefined;
  const digest = createHash('sha256')
    .update(JSON.stringify([target.origin, place, id]))
    .digest('hex');
  return { key: `langchain:${digest}`, requestHash: digest };
}
