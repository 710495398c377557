/**
 * The language-model middleware: the AI SDK's `wrapLanguageModel({ model, middleware })` with
 * compactor keeping the conversation. One implementation for the specifications v2, v3 and v4;
 * what differs between them is read in versions.ts, and the middleware object is labelled with
 * the version's field (`middlewareVersion: 'v2'`, `specificationVersion: 'v3'` or `'v4'`).
 *
 * Per model call:
 * 1. `transformParams`: the session is created on the first call (its leading system messages
 *    pinned), and the prompt is replaced by the session's context with the prompt's new messages
 *    after it (`loadContext` with them `pending`, format `ai-sdk`; prompt.ts gives which are new),
 *    after this call's own system messages; the context's `version` is kept for the call.
 * 2. `wrapGenerate` / `wrapStream`: the new messages and the answer, as the assistant message the
 *    AI SDK would send back (reply.ts), are stored in one append with that `contextVersion`: one
 *    round trip per call, and a model call that fails stores nothing (the next call sends the turn
 *    again, and it is new again). A stream passes through unchanged and is stored when it
 *    finishes, before it closes.
 * 3. The end of a run: by default (`runCompleted: 'auto'`) an answer that calls no tool the
 *    application runs ends the run, and `session.run.completed` is enqueued with its input usage;
 *    with `'manual'` the application calls {@link CompactorMiddleware.runCompleted} itself.
 */
import { randomUUID } from 'node:crypto';
import type { LanguageModelV4Middleware } from '@ai-sdk/provider';
import { InvalidInputError, SessionExistsError } from '../../../shared/contract/errors.ts';
import type { RunCompletedInput } from '../../../shared/protocol/events.ts';
import { loadContext } from '../../context.ts';
import type { Db } from '../../postgres/db.ts';
import { appendToLiveSession, createSession } from '../../sessions.ts';
import { AI_SDK_FORMAT, contextMessages, encodeMessage } from './format.ts';
import { afterLastAssistant, canonicalJson, requestPrompt, splitPrompt, unstored } from './prompt.ts';
import { type AnyContent, type AnyMessage, callsClientTools, replyMessage } from './reply.ts';
import { type AnyStreamPart, collectingStream } from './stream.ts';
import {
  type AnyFinishReason,
  type AnyUsage,
  type InputUsage,
  inputUsageOf,
  type SpecificationVersion,
} from './versions.ts';

/** The `session.run.completed` event the middleware enqueued. */
export interface CompletedRun {
  eventId: string;
  /** The live session it names. */
  sessionId: string;
  inputTokens?: number;
  cacheReadTokens?: number;
}

/** Options of {@link compactorMiddleware}. */
export interface CompactorMiddlewareOptions {
  /** The database of the sessions (`openDatabase(url).db`). */
  db: Db;
  /** Enqueues `session.run.completed` (`createProducer({ db })`). */
  producer: { runCompleted(input: RunCompletedInput): Promise<unknown> };
  tenantId: string;
  /**
   * The conversation's session: created in format `ai-sdk` on the first call when the tenant does
   * not have it; after a `newSession` compaction the live session of its lineage is followed.
   */
  sessionId: string;
  /**
   * When a run ends: `auto` (default) after an answer that calls no tool the application runs (the
   * AI SDK's loop stops there); `manual`: only when {@link CompactorMiddleware.runCompleted} is
   * called (a run stopped by `stopWhen` with tool calls pending, an application with steps of its
   * own).
   */
  runCompleted?: 'auto' | 'manual';
  /** Called after each `session.run.completed` the middleware enqueued. */
  onRunCompleted?: (run: CompletedRun) => void;
  /**
   * The specification version of the `wrapLanguageModel` it is given to: `v4` (AI SDK 7, the
   * default), `v3` (AI SDK 6) or `v2` (AI SDK 5). Only the middleware's own version field differs.
   */
  specificationVersion?: SpecificationVersion;
}

/** What the middleware adds to the AI SDK's middleware object. */
export interface CompactorMiddlewareExtras {
  /**
   * Enqueues `session.run.completed` for the session now, with the input usage of the last answer.
   * @returns the event, or null when no answer was stored since the last event.
   * @throws the producer's errors (an unreachable queue).
   */
  runCompleted(): Promise<CompletedRun | null>;
  /** The live session the middleware appends to (the option's, or its child after a `newSession` compaction). */
  readonly sessionId: string;
}

/** The middleware for AI SDK 7 (`LanguageModelV4Middleware`) with {@link CompactorMiddlewareExtras}. */
export type CompactorMiddleware = LanguageModelV4Middleware & CompactorMiddlewareExtras;
/**
 * The functions of a middleware for an older `ai`, typed to fit its `wrapLanguageModel` whichever
 * `@ai-sdk/provider` it brings: `ai` 5 types its middleware with `@ai-sdk/provider` 2.x and `ai` 6
 * with 3.x, whose types are not those of 4.x (their `JSONValue` differs), so the functions take
 * any options and their results are typed `never`, which fits any expected result. They are the
 * same functions as {@link CompactorMiddleware}'s; call them through `wrapLanguageModel` only.
 */
export interface PortableMiddlewareFunctions {
  transformParams(options: unknown): Promise<never>;
  wrapGenerate(options: unknown): Promise<never>;
  wrapStream(options: unknown): Promise<never>;
}

/** The middleware for AI SDK 6 (`LanguageModelV3Middleware` of `@ai-sdk/provider` 3.x). */
export type CompactorMiddlewareV3 = { readonly specificationVersion: 'v3' } & PortableMiddlewareFunctions &
  CompactorMiddlewareExtras;
/** The middleware for AI SDK 5 (`LanguageModelV2Middleware` of `@ai-sdk/provider` 2.x). */
export type CompactorMiddlewareV2 = { readonly middlewareVersion: 'v2' } & PortableMiddlewareFunctions &
  CompactorMiddlewareExtras;

/** The session's context version and live id that one call's prompt was built from. */
interface CallState {
  sessionId: string;
  version: number;
  /** The prompt's new messages, sent in the context and stored with the answer (encoded). */
  fresh: unknown[];
  /** What the session held after its last answer when the call began (canonical JSON each). */
  tail: string[];
}

/** A call's parameters, as far as the middleware reads them (the same in every version). */
type Params = { prompt: AnyMessage[] } & Record<string, unknown>;

/**
 * The compactor middleware for `wrapLanguageModel` (see the file comment).
 * @throws {InvalidInputError} naming the option that is missing or wrong. A model call through it
 *   throws what `createSession`, `appendToLiveSession`, `loadContext` or the producer throw (a
 *   message the `ai-sdk` format refuses is an `InvalidInputError` naming its field; nothing of the
 *   call is sent to the model then).
 */
export function compactorMiddleware(
  options: CompactorMiddlewareOptions & { specificationVersion?: 'v4' },
): CompactorMiddleware;
export function compactorMiddleware(
  options: CompactorMiddlewareOptions & { specificationVersion: 'v3' },
): CompactorMiddlewareV3;
export function compactorMiddleware(
  options: CompactorMiddlewareOptions & { specificationVersion: 'v2' },
): CompactorMiddlewareV2;
export function compactorMiddleware(
  options: CompactorMiddlewareOptions,
): CompactorMiddleware | CompactorMiddlewareV3 | CompactorMiddlewareV2 {
  for (const field of ['tenantId', 'sessionId'] as const) {
    if (typeof options[field] !== 'string' || options[field] === '')
      throw new InvalidInputError(`${field}: a non-empty string is required`);
  }
  if (!options.db) throw new InvalidInputError('db: the database is required');
  if (typeof options.producer?.runCompleted !== 'function')
    throw new InvalidInputError('producer: an object with runCompleted (createProducer) is required');
  const mode = options.runCompleted ?? 'auto';
  if (mode !== 'auto' && mode !== 'manual')
    throw new InvalidInputError(`runCompleted: expected "auto" or "manual", got ${JSON.stringify(mode)}`);
  const version = options.specificationVersion ?? 'v4';
  if (version !== 'v2' && version !== 'v3' && version !== 'v4')
    throw new InvalidInputError(
      `specificationVersion: expected "v2", "v3" or "v4", got ${JSON.stringify(version)}`,
    );

  const { db, tenantId } = options;
  let live = options.sessionId;
  let created = false;
  let unreported: InputUsage | null = null;
  /**
   * The keys of the messages the session holds after its last assistant message, as far as this
   * instance knows (it appended them, or read them on its first call); null when it does not know.
   */
  let tail: string[] | null = null;
  const calls = new WeakMap<object, CallState>();
  const key = (m: unknown) => canonicalJson(encodeMessage(m as AnyMessage));

  const load = async (pending: readonly unknown[] = []) => {
    const context = await loadContext(db, { tenantId, sessionId: live, format: AI_SDK_FORMAT, pending });
    live = context.sessionId;
    return { messages: contextMessages(context), version: context.version, sessionId: context.sessionId };
  };

  const ensureSession = async (system: AnyMessage[]) => {
    if (created) return;
    try {
      await createSession(db, {
        tenantId,
        sessionId: options.sessionId,
        format: AI_SDK_FORMAT,
        messages: system.map((m, seq) => ({ seq, message: encodeMessage(m), pinned: true })),
      });
    } catch (error) {
      if (!(error instanceof SessionExistsError)) throw error;
    }
    created = true;
  };

  const runCompleted = async (): Promise<CompletedRun | null> => {
    if (unreported === null) return null;
    const usage = unreported;
    unreported = null;
    const run: CompletedRun = {
      eventId: randomUUID(),
      sessionId: live,
      ...(usage.inputTokens === undefined ? {} : { inputTokens: usage.inputTokens }),
      ...(usage.inputTokens !== undefined &&
      usage.cacheReadTokens !== undefined &&
      usage.cacheReadTokens <= usage.inputTokens
        ? { cacheReadTokens: usage.cacheReadTokens }
        : {}),
    };
    await options.producer.runCompleted({ tenantId, ...run });
    options.onRunCompleted?.(run);
    return run;
  };

  const transformParams = async ({ params }: { params: Params }): Promise<Params> => {
    const { system, conversation } = splitPrompt(params.prompt);
    await ensureSession(system);
    if (tail === null) {
      // This instance's first call (or the first after a failed write): read what the session holds
      // after its last answer, so that a turn stored before is not stored again.
      const stored = await load();
      tail = afterLastAssistant(splitPrompt(stored.messages).conversation).map(key);
    }
    // The turn the model answers is sent in the context now and stored with the answer, in one
    // append: one round trip less per call, and a failed model call leaves nothing half stored.
    const fresh = unstored(afterLastAssistant(conversation), tail, key).map(encodeMessage);
    const context = await load(fresh);
    const next: Params = { ...params, prompt: requestPrompt(system, context.messages, key) };
    calls.set(next, { sessionId: context.sessionId, version: context.version, fresh, tail });
    return next;
  };

  const storeAnswer = async (
    params: Params,
    answer: { content: readonly AnyContent[]; usage: AnyUsage | undefined; finishReason?: AnyFinishReason },
  ) => {
    const call = calls.get(params);
    if (!call)
      throw new Error(
        'compactor middleware: wrapGenerate/wrapStream got parameters that its own transformParams did not return; give the middleware to wrapLanguageModel rather than calling its functions one by one',
      );
    const message = replyMessage(answer.content);
    const turn = message ? [...call.fresh, encodeMessage(message)] : call.fresh;
    tail = null;
    if (turn.length > 0)
      ({ sessionId: live } = await appendToLiveSession(
        db,
        tenantId,
        call.sessionId,
        turn.map((message) => ({ message })),
        {
          contextVersion: call.version,
          format: AI_SDK_FORMAT,
        },
      ));
    // With an answer stored, nothing follows the session's last answer; without one, the turn does.
    tail = message ? [] : [...call.tail, ...call.fresh.map((m) => canonicalJson(m))];
    unreported = inputUsageOf(answer.usage);
    if (mode === 'auto' && !callsClientTools(answer.content)) await runCompleted();
  };

  const middleware = {
    transformParams,
    async wrapGenerate({ doGenerate, params }: { doGenerate: () => PromiseLike<unknown>; params: Params }) {
      const result = (await doGenerate()) as {
        content: AnyContent[];
        usage: AnyUsage;
        finishReason: AnyFinishReason;
      };
      await storeAnswer(params, result);
      return result;
    },
    async wrapStream({ doStream, params }: { doStream: () => PromiseLike<unknown>; params: Params }) {
      const result = (await doStream()) as { stream: ReadableStream<AnyStreamPart> };
      return {
        ...result,
        stream: result.stream.pipeThrough(collectingStream((answer) => storeAnswer(params, answer))),
      };
    },
    runCompleted,
    get sessionId() {
      return live;
    },
  };
  const label = version === 'v2' ? { middlewareVersion: 'v2' as const } : { specificationVersion: version };
  return Object.defineProperties(label, Object.getOwnPropertyDescriptors(middleware)) as unknown as
    | CompactorMiddleware
    | CompactorMiddlewareV3
    | CompactorMiddlewareV2;
}
