/**
 * The Mastra processor that keeps an agent's conversation in a compactor session and gives the
 * model compactor's context instead of the whole history, at every step of the agent's loop:
 *
 *     processInputStep    store what is new (the user's message; the last step's reply and tool
 *                         results), then load the session's context (compacted or not)
 *     processLLMRequest   send that context, after the agent's instructions, as the model's prompt
 *     processOutputResult store the run's last reply, then enqueue `session.run.completed`
 *
 * Why the context replaces the prompt in `processLLMRequest` and not in `processInputStep`: Mastra
 * applies the messages a `processInputStep` returns to the run's `MessageList` (removing those left
 * out, adding the others as the user's input), and its memory saves that list
 * (`drainUnsavedMessages`): a replacement there would drop the user's message and the replies from
 * the thread, or save compactor's summary as if the user had written it. A `processLLMRequest`
 * result is sent to the model and nothing else (Mastra: "not persisted back to the message list"),
 * so Mastra's memory keeps the whole thread while the model reads the compacted one.
 */
import { randomUUID } from 'node:crypto';
import type { MessageList } from '@mastra/core/agent';
import { parseMemoryRequestContext } from '@mastra/core/memory';
import type {
  ProcessInputStepArgs,
  ProcessLLMRequestArgs,
  ProcessLLMRequestResult,
  ProcessOutputResultArgs,
  Processor,
} from '@mastra/core/processors';
import type { RequestContext } from '@mastra/core/request-context';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { loadContext } from '../../context.ts';
import type { Producer } from '../../index.ts';
import type { Db } from '../../postgres/db.ts';
import { appendToLiveSession, createSession, SessionExistsError } from '../../sessions.ts';
import type { SessionCodec } from './codec.ts';
import {
  conversationOf,
  type PromptModel,
  type PromptTarget,
  promptTargetOf,
  rememberedConversation,
} from './conversation.ts';
import { newMessages } from './history.ts';
import { type PromptMessage, promptKey, splitPrompt } from './prompt.ts';
import { codecFor, defaultFormatFor, type MastraSessionFormat } from './registry.ts';

/** What a run is known by when its session and tenant are chosen. */
export interface MastraRun {
  /** The Mastra memory thread of the run (`memory: { thread }` of `generate`/`stream`), if any. */
  threadId?: string;
  /** The memory resource (user) of the run, if any. */
  resourceId?: string;
  /** The run's request context (`requestContext` of `generate`/`stream`), if any. */
  requestContext?: RequestContext;
}

/** Options of {@link CompactorProcessor}. */
export interface CompactorProcessorOptions {
  /** The database the sessions are in (`openDatabase(...).db`). */
  db: Db;
  /** Enqueues `session.run.completed` when a run ends (`createProducer(...)`). */
  producer: Producer;
  /** The tenant of the sessions: an id, or one per run. */
  tenantId: string | ((run: MastraRun) => string);
  /**
   * The session of a run: an id, or one per run. Default: the run's Mastra memory thread, so that
   * one thread is one session across runs.
   */
  sessionId?: string | ((run: MastraRun) => string | undefined);
  /**
   * The format of a session this processor creates (an existing session keeps its own; a run on a
   * session of another format is refused). Default: `anthropic` for an Anthropic model (its signed
   * thinking goes back as it came), `openai-chat` for any other ({@link defaultFormatFor}).
   */
  format?: MastraSessionFormat;
  /** Called after each run's `session.run.completed` is enqueued, with the event's fields. */
  onRunCompleted?: (event: RunCompletedInfo) => void | Promise<void>;
}

/** The `session.run.completed` a run ended with. */
export interface RunCompletedInfo {
  tenantId: string;
  /** The live session the run stored its messages in. */
  sessionId: string;
  eventId: string;
  /** The prompt tokens of the run's last request, as the provider counted them, when it did. */
  inputTokens?: number;
  /** Of those, the ones read from the provider's prompt cache, when it said. */
  cacheReadTokens?: number;
}

/** What the processor keeps of a run, from its first step to its end. */
interface RunState {
  tenantId: string;
  /** The session the run's thread names (or the option gives): where a lineage starts. */
  baseSessionId: string;
  /** The live session: where the next messages go. */
  sessionId: string;
  codec: SessionCodec;
  target: PromptTarget;
  /** {@link promptKey}s of the conversation messages the session holds, in order. */
  stored: string[];
  /** The context of the latest step, as prompt messages, and its version. */
  context: { messages: PromptMessage[]; version: number } | undefined;
  /** The run id Mastra gave the run, when it gave one. */
  runId: string | undefined;
}

/**
 * A Mastra input and output processor (give the same object to both lists) that keeps each run's
 * conversation in a compactor session and has the model read the session's context:
 *
 * ```ts
 * const compactor = new CompactorProcessor({ db, producer, tenantId: 'acme' });
 * const agent = new Agent({ ..., inputProcessors: [compactor], outputProcessors: [compactor] });
 * ```
 *
 * Put it last among the input processors: it stores the conversation as the processors before it
 * left it. The thread's messages stay in Mastra's memory as they are; the model reads the session
 * (the summary of what compactions took out, then what they kept). The first run on a thread that
 * has no session yet creates it, with the history Mastra's memory loaded for that run.
 */
export class CompactorProcessor implements Processor<'compactor'> {
  readonly id = 'compactor' as const;
  readonly name = 'compactor';
  readonly description =
    "Keeps the agent's conversation in a compactor session and sends the model its context.";
  readonly #options: CompactorProcessorOptions;
  readonly #runs = new WeakMap<MessageList, RunState>();
  /** The live session of each tenant's base session, as the latest run found it. */
  readonly #live = new Map<string, string>();

  constructor(options: CompactorProcessorOptions) {
    this.#options = options;
  }

  /**
   * Stores what the conversation gained since the last step, then loads the session's context for
   * this step's request (every step of the loop, the first included).
   * @throws {InvalidInputError} when the run names no session, a message is one the session's
   *   format cannot hold, or a stored message changed; nothing of the step is stored then.
   * @throws {Error} when Mastra's loop will not call `processLLMRequest` (the context could not
   *   replace the prompt: a processor workflow, a legacy model).
   */
  async processInputStep(args: ProcessInputStepArgs): Promise<undefined> {
    if (args.llmRequestStage !== true) {
      throw new Error(
        'compactor: this Mastra loop does not call processLLMRequest for the processor, so the context could not replace the prompt; give the CompactorProcessor itself (not inside a processor workflow) to an agent on an AI SDK v5 or later model',
      );
    }
    const model = args.model as unknown as PromptModel;
    let run = this.#runs.get(args.messageList);
    if (!run) {
      run = await this.#start(args, model);
      this.#runs.set(args.messageList, run);
    }
    const conversation = await conversationOf(args.messageList, run.target);
    await this.#store(run, conversation, run.context?.version);
    const { db } = this.#options;
    const context = await loadContext(db, {
      tenantId: run.tenantId,
      sessionId: run.sessionId,
      format: run.codec.format,
      // An anthropic-compaction summary as compactor's readable checkpoint: the AI SDK sends no
      // compaction block (nor its beta header).
      compactionBlock: 'text',
    });
    this.#moved(run, context.sessionId);
    run.context = { messages: run.codec.decode(context, run.target.version), version: context.version };
    return undefined;
  }

  /**
   * The prompt of this step's request: the agent's instructions (the prompt's leading system
   * messages, as Mastra built them) and then the session's context loaded by
   * {@link processInputStep}.
   * @throws {Error} when no input step of this processor ran for the request.
   */
  processLLMRequest(args: ProcessLLMRequestArgs): ProcessLLMRequestResult {
    const run = args.messageList ? this.#runs.get(args.messageList) : undefined;
    if (!run?.context) {
      throw new Error(
        'compactor: processLLMRequest without a context: give the CompactorProcessor to the agent as an input processor',
      );
    }
    const { system } = splitPrompt(args.prompt as unknown as PromptMessage[]);
    return { prompt: [...system, ...run.context.messages] as unknown as typeof args.prompt };
  }

  /**
   * Stores the run's last reply (with the context version it answered), then enqueues
   * `session.run.completed` with the size of the run's last request.
   * @throws {InvalidInputError} as {@link processInputStep}.
   */
  async processOutputResult(args: ProcessOutputResultArgs): Promise<MessageList> {
    const run = this.#runs.get(args.messageList);
    if (!run) return args.messageList; // no model request was made (a tripwire stopped the run first)
    this.#runs.delete(args.messageList);
    const conversation = await conversationOf(args.messageList, run.target);
    await this.#store(run, conversation, run.context?.version);
    const usage = args.result.steps.at(-1)?.usage;
    const inputTokens = countOf(usage?.inputTokens);
    const cached = countOf(usage?.cachedInputTokens);
    const event: RunCompletedInfo = {
      tenantId: run.tenantId,
      sessionId: run.sessionId,
      eventId: randomUUID(),
      ...(inputTokens !== undefined ? { inputTokens } : {}),
      ...(inputTokens !== undefined && cached !== undefined && cached <= inputTokens
        ? { cacheReadTokens: cached }
        : {}),
    };
    await this.#options.producer.runCompleted({
      ...event,
      ...(run.runId ? { runId: run.runId } : {}),
    });
    await this.#options.onRunCompleted?.(event);
    return args.messageList;
  }

  /**
   * The live session a run on `run`'s thread stores in (after a `newSession` compaction, the
   * newest of the lineage that this processor has seen; else the base session itself).
   * @throws {InvalidInputError} when the run names no session (see {@link CompactorProcessorOptions.sessionId}).
   */
  sessionOf(run: MastraRun): { tenantId: string; sessionId: string } {
    const { tenantId, sessionId } = this.#resolve(run);
    return { tenantId, sessionId: this.#live.get(liveKey(tenantId, sessionId)) ?? sessionId };
  }

  /** The tenant and base session of a run, by the options. */
  #resolve(run: MastraRun): { tenantId: string; sessionId: string } {
    const { tenantId, sessionId } = this.#options;
    const tenant = typeof tenantId === 'function' ? tenantId(run) : tenantId;
    const session = typeof sessionId === 'function' ? sessionId(run) : (sessionId ?? run.threadId);
    if (!session) {
      throw new InvalidInputError(
        'sessionId: this run names no compactor session: run the agent with memory: { thread, resource } (the thread is the session) or give the CompactorProcessor a sessionId',
      );
    }
    return { tenantId: tenant, sessionId: session };
  }

  /** A run's state at its first step: its session (created when new) and what it already holds. */
  async #start(args: ProcessInputStepArgs, model: PromptModel): Promise<RunState> {
    const memory = parseMemoryRequestContext(args.requestContext);
    const mastraRun: MastraRun = {
      ...(memory?.thread?.id ? { threadId: memory.thread.id } : {}),
      ...(memory?.resourceId ? { resourceId: memory.resourceId } : {}),
      ...(args.requestContext ? { requestContext: args.requestContext } : {}),
    };
    const { tenantId, sessionId } = this.#resolve(mastraRun);
    const format = this.#options.format ?? defaultFormatFor(model);
    const target = await promptTargetOf(model);
    const created = await this.#create(tenantId, sessionId, format, args.agent?.id);
    // The thread's history from memory is in the session already, unless the session is new: then
    // it is stored first, as the history the model had read so far.
    const remembered = created ? [] : (await rememberedConversation(args.messageList, target)).conversation;
    return {
      tenantId,
      baseSessionId: sessionId,
      sessionId: this.#live.get(liveKey(tenantId, sessionId)) ?? sessionId,
      codec: codecFor(format),
      target,
      stored: remembered.map(promptKey),
      context: undefined,
      runId: args.runId,
    };
  }

  /** Creates the session; false when the tenant has it already. */
  async #create(
    tenantId: string,
    sessionId: string,
    format: MastraSessionFormat,
    agentId?: string,
  ): Promise<boolean> {
    try {
      await createSession(this.#options.db, {
        tenantId,
        sessionId,
        format,
        messages: [],
        ...(agentId ? { agentId } : {}),
      });
      return true;
    } catch (error) {
      if (error instanceof SessionExistsError) return false;
      throw error;
    }
  }

  /** Appends what `conversation` holds after the stored messages, in the session's format. */
  async #store(
    run: RunState,
    conversation: PromptMessage[],
    contextVersion: number | undefined,
  ): Promise<void> {
    const fresh = newMessages(run.stored, conversation);
    if (fresh.length === 0) return;
    const messages = run.codec.encode(fresh, `conversation[${run.stored.length}]`);
    if (messages.length > 0) {
      const { sessionId } = await appendToLiveSession(
        this.#options.db,
        run.tenantId,
        run.sessionId,
        messages as Parameters<typeof appendToLiveSession>[3],
        contextVersion !== undefined
          ? { contextVersion, format: run.codec.format }
          : { format: run.codec.format },
      );
      this.#moved(run, sessionId);
    }
    run.stored.push(...fresh.map(promptKey));
  }

  /** Records that `run`'s lineage lives in `sessionId` now. */
  #moved(run: RunState, sessionId: string): void {
    run.sessionId = sessionId;
    this.#live.set(liveKey(run.tenantId, run.baseSessionId), sessionId);
  }
}

function liveKey(tenantId: string, sessionId: string): string {
  return JSON.stringify([tenantId, sessionId]);
}

/** A token count as a non-negative integer, or undefined. */
function countOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}
