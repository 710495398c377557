/**
 * The compactor middleware for LangChain's `createAgent`: the model sees compactor's compacted
 * context instead of the whole history, while the graph keeps its own messages whole.
 *
 * Each model call (`wrapModelCall`): the messages of the agent's state not stored yet are appended to
 * the run's session (created on first use), the session's context is loaded (compacted when a
 * worker has compacted it) and the model is called with it in place of the state's messages; its
 * reply is appended with the version of the context it was made from. When the agent finishes
 * (`afterAgent`): what came after the last model call (a tool's answer ending the run) is appended
 * and `session.run.completed` is enqueued with the size of the last request, so a worker compacts
 * the session when the tenant's policy says so.
 *
 * What is stored is kept in the state under a private key (`_compactor`: the session, how many of
 * the state's messages are stored and the id of the last one, the last request's tokens),
 * checkpointed with the messages, so a thread resumed in another process goes on where it was. The
 * messages of the state are append-only for it: a run whose state has fewer messages than were
 * stored, or another message where the last stored one was, is refused (a `RemoveMessage`, or a
 * middleware that rewrites the state's history, such as `summarizationMiddleware`: compactor does
 * that job).
 */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { Command } from '@langchain/langgraph';
import { createMiddleware } from 'langchain';
import { z } from 'zod';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import type { ContextNotice, Db, Producer } from '../../index.ts';
import { contextMessages, formatOfModel, type LangChainFormat } from './format.ts';
import { sessionRecallTools } from './recall-tools.ts';
import { type SessionIdOption, type SessionScope, sessionIdOf } from './session-id.ts';
import { appendNew, loadFor, type SessionTarget } from './session-store.ts';

/** Options of {@link compactorMiddleware}. */
export interface CompactorMiddlewareOptions {
  /** compactor's database (`openDatabase(url).db`). */
  db: Db;
  /** Where `session.run.completed` is enqueued (`createProducer()`). */
  producer: Pick<Producer, 'runCompleted'>;
  tenantId: string;
  /**
   * The session of a run: an id, a function of the run (`{ configurable, context }`), or by default
   * the run's `configurable.thread_id` (one LangGraph thread, one session). Once a thread has a
   * session, its runs stay in it (following a `newSession` compaction to the live session).
   */
  sessionId?: SessionIdOption;
  /**
   * The session format (a session keeps the one it was created with): by default `anthropic` for
   * `ChatAnthropic`, whose replies hold thinking and `tool_use` blocks only that format keeps byte
   * for byte, and `openai-chat` for every other model (see docs/guide/langchain.md).
   */
  format?: LangChainFormat;
  /**
   * compactor's MCP recall tools (`recall_search`, `recall_read`), as `@langchain/mcp-adapters`
   * loads them from `/v1/mcp` with the tenant's key: the agent gets them with the session filled in
   * by the middleware (the model never names a session).
   */
  recall?: readonly StructuredToolInterface[];
  /** The agent's id, recorded when the session is created. */
  agentId?: string;
  /** The context window of the agent's model, in tokens, recorded when the session is created. */
  contextWindow?: number;
  /**
   * What to do with a context notice (an `anthropic` context whose open tool loop kept thinking over
   * a changed history: shared/context/render.ts). Default: `console.warn` of its message.
   */
  onNotice?: (notice: ContextNotice) => void;
}

/** What the middleware keeps in the agent's state (checkpointed with the messages). */
const bookSchema = z.object({
  /** The session the thread started in. */
  origin: z.string(),
  /** The live session the run's messages went to last. */
  sessionId: z.string(),
  format: z.enum(['openai-chat', 'anthropic']),
  /** How many of the state's messages are stored (the first ones). */
  stored: z.number().int().nonnegative(),
  /** The id of the last stored message, when it had one at the time. */
  lastId: z.string().nullable(),
  /** The last request's input tokens (the model's `usage_metadata`), when it reported them. */
  inputTokens: z.number().int().nonnegative().nullable(),
  /** Of those, the ones read from the prompt cache. */
  cacheReadTokens: z.number().int().nonnegative().nullable(),
});
type Book = z.infer<typeof bookSchema>;

const stateSchema = z.object({ _compactor: bookSchema.optional() });

/**
 * The middleware (see the file comment). Put it first in `middleware`, so it sees the state's
 * messages as they are, and leave out middleware that rewrites the history the model sees.
 *
 * ```ts
 * const agent = createAgent({ model, tools, middleware: [compactorMiddleware({ db, producer, tenantId })] });
 * await agent.invoke({ messages: [new HumanMessage('Fix the parser.')] }, { configurable: { thread_id: 's-1' } });
 * ```
 * @throws {InvalidInputError} from a run: a message the format cannot hold (naming its place in the
 *   state and its block; nothing of that call is stored), no session id, a state whose stored
 *   messages changed; and the client library's errors (`SessionLimitError`, `ContextLimitError`, a
 *   database error).
 */
export function compactorMiddleware(options: CompactorMiddlewareOptions) {
  const { db, tenantId } = options;
  const onNotice =
    options.onNotice ?? ((notice: ContextNotice) => console.warn(`compactor: ${notice.message}`));
  const targetOf = (origin: string, sessionId: string, format: LangChainFormat): SessionTarget => ({
    db,
    tenantId,
    origin,
    sessionId,
    format,
    agentId: options.agentId,
    contextWindow: options.contextWindow,
  });
  return createMiddleware({
    name: 'compactor',
    stateSchema,
    tools: options.recall ? sessionRecallTools(options.recall, options.sessionId) : [],
    wrapModelCall: async (request, handler) => {
      const book = request.state._compactor;
      const messages = request.messages;
      checkStored(messages, book);
      const format = book?.format ?? options.format ?? (await formatOfModel(request.model));
      const first = book?.stored ?? 0;
      const origin = book?.origin ?? sessionIdOf(options.sessionId, scopeOf(request.runtime));
      const sessionId = book?.sessionId ?? origin;
      const live = await appendNew(targetOf(origin, sessionId, format), messages.slice(first), first);
      const context = await loadFor(targetOf(origin, live, format));
      for (const notice of context.notices) onNotice(notice);
      const response = await handler({ ...request, messages: contextMessages(context) });
      if (!AIMessage.isInstance(response)) {
        // Not a plain reply (a structured response's messages): the state takes it as the model
        // node writes it, and the next call (or the end of the run) stores it from there.
        return response;
      }
      const replyAt = messages.length;
      const after = await appendNew(targetOf(origin, context.sessionId, format), [response], replyAt, {
        contextVersion: context.version,
      });
      const usage = response.usage_metadata;
      const update: Book = {
        origin,
        sessionId: after,
        format,
        stored: replyAt + 1,
        lastId: response.id ?? null,
        inputTokens: usage ? usage.input_tokens : null,
        cacheReadTokens: usage?.input_token_details?.cache_read ?? (usage ? 0 : null),
      };
      return new Command({ update: { _compactor: update } });
    },
    afterAgent: async (state) => {
      const book = state._compactor;
      // No model call yet in this thread: nothing says the format; the next call stores it all.
      if (!book) return undefined;
      const messages = state.messages;
      checkStored(messages, book);
      const live = await appendNew(
        targetOf(book.origin, book.sessionId, book.format),
        messages.slice(book.stored),
        book.stored,
      );
      await options.producer.runCompleted({
        eventId: crypto.randomUUID(),
        tenantId,
        sessionId: live,
        ...(book.inputTokens === null ? {} : { inputTokens: book.inputTokens }),
        ...(book.inputTokens === null || book.cacheReadTokens === null
          ? {}
          : { cacheReadTokens: Math.min(book.cacheReadTokens, book.inputTokens) }),
      });
      const last = messages.at(-1);
      return {
        _compactor: {
          ...book,
          sessionId: live,
          stored: messages.length,
          lastId: messages.length > book.stored ? (last?.id ?? null) : book.lastId,
        },
      };
    },
  });
}

/** The run's scope, for its session id. */
function scopeOf(runtime: { configurable?: SessionScope['configurable']; context?: unknown }): SessionScope {
  return { configurable: runtime.configurable, context: runtime.context };
}

/**
 * Refuses a state whose stored part changed: fewer messages than were stored, or another message
 * where the last stored one was.
 * @throws {InvalidInputError} saying which.
 */
function checkStored(messages: readonly BaseMessage[], book: Book | undefined): void {
  if (!book) return;
  const where = `session "${book.sessionId}"`;
  if (messages.length < book.stored) {
    throw new InvalidInputError(
      `compactor middleware: the agent's state holds ${messages.length} messages, fewer than the ${book.stored} stored in ${where}: its history is append-only (a RemoveMessage or a middleware that rewrites the history removed some); nothing was stored`,
    );
  }
  const last = messages[book.stored - 1];
  if (book.lastId !== null && last?.id !== book.lastId) {
    throw new InvalidInputError(
      `compactor middleware: messages[${book.stored - 1}] of the agent's state is not the message stored last in ${where} (id ${JSON.stringify(book.lastId)}, now ${JSON.stringify(last?.id ?? null)}): its history is append-only; nothing was stored`,
    );
  }
}
