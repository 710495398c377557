/**
 * A fake Anthropic Messages API: a real HTTP server (node:http) on 127.0.0.1, on a free port, that the
 * real @anthropic-ai/sdk talks to through `baseURL`. Tests drive the real SDK, so its request
 * building, error classes and retries are exercised as in production, with no network and no API key.
 *
 * It speaks enough of `POST /v1/messages` for compactor's summarizer:
 * - it checks requests the way the API does where a mistake of ours could hide (authentication
 *   header, `anthropic-version`, JSON body, `model`, `max_tokens`, `messages`, `tools`, a
 *   `tool_choice` that names a declared tool, `cache_control` types, and the conversation rules of
 *   conversation-rules.ts: tool_result placement, prefill, thinking at the start of a tool loop's
 *   last turn, thinking signatures bound to the conversation before them) and answers 4xx in the
 *   API's error shape `{ type: 'error', error: { type, message }, request_id }`, so a bad request
 *   fails loudly; `new FakeAnthropicServer({ strict: true })` (or setting {@link
 *   FakeAnthropicServer.strict}) adds the strict checks of conversation-rules.ts: a first message
 *   that is not a user turn, two adjacent user or assistant turns, empty content;
 * - `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`, with the beta header
 *   `anthropic-beta: thinking-binding-controls-2026-08-01` (without it, `block_binding` is refused as
 *   the API refuses an unknown field): thinking blocks whose conversation changed are dropped
 *   instead of failing the request, and the answer lists them in `input_transformations` (present,
 *   `[]` when empty, on every answer to a request with that beta);
 * - by default it answers like a diligent model that called the forced tool: a valid checkpoint
 *   whose every field follows the system prompt's definition, derived from the prompt's blocks alone
 *   and merged with the previous checkpoint (fake-model/checkpoint.ts says how), its `analysis`
 *   scratch field filled with a short deterministic note when the tool's schema has one, and
 *   realistic `usage`: about 4
 *   characters per token, and prompt caching simulated as the docs describe it: the prompt is read
 *   in order (tools, system, then each message's content blocks) and every `cache_control`
 *   breakpoint whose prefix reaches the model's minimum cacheable length ({@link
 *   fakeMinCacheableTokens}: 4,096 tokens for Haiku 4.5, 1,024 for an unknown model) caches that
 *   prefix; a shorter one caches nothing, silently. The longest cached prefix a request repeats is
 *   read (`cache_read_input_tokens`), the rest up to its last eligible breakpoint is written
 *   (`cache_creation_input_tokens`), everything else is `input_tokens`. Cache entries never expire;
 * - on-demand compaction (beta `compact-2026-09-04`, header {@link COMPACTION_BETA}): a request with
 *   top-level `"compaction": {"type": "summarize", "instructions"?}` is checked as the docs say
 *   (header, fields, `instructions` non-blank and at most 16,384 characters; `stop_sequences`,
 *   `output_config.format`, a `tool_choice` of type `any`/`tool`, `context_management` and an open
 *   tool call refused; `compaction_nothing_to_summarize`) and answered with one signed block
 *   `{ type: 'compaction', content, signature }`, `stop_reason: 'compaction'`, top-level usage 0 and
 *   the cost in `usage.iterations[0]` (`type: 'compaction'`). The `content` is a readable summary
 *   derived from the request (message counts, the previous block's summary, the first and latest
 *   user text, the file paths seen, the instructions); when it would not fit `max_tokens` the answer
 *   is `content: []` with `stop_reason: 'max_tokens'`, as the API's. "Nothing fails when you
 *   compact": on a compaction request, thinking whose prefix changed is summarized without it
 *   instead of failing (a tampered signature still fails). A later request carrying the
 *   block is checked too (exactly one block, first, unedited: `compaction_block_misplaced`,
 *   `compaction_signature_invalid`, `compaction_content_mismatch`), and thinking after the block
 *   stays valid exactly when the docs' "Compaction and preserved thinking" conditions hold (see
 *   `signCompaction` in conversation-rules.ts). Models: any id is accepted; {@link
 *   compactionSupported} and {@link preservesThinking} say what the API would do, and each
 *   compaction is listed in {@link FakeAnthropicServer.compactions};
 * - `POST /v1/messages/count_tokens`: the same request without `max_tokens`, checked the same way,
 *   answered `{ input_tokens }` (Claude Code counts tokens while it compacts);
 * - `"stream": true` (a boolean, or 400): a 200 answer is streamed as server-sent events, as the API
 *   streams it (fake-anthropic-sse.ts: `message_start`, each block's start, deltas and stop,
 *   `message_delta`, `message_stop`), after the same checks; a refused request gets the same JSON
 *   error as without it (the API refuses before it streams). The Claude Agent SDK's CLI streams;
 * - every answer carries a `request-id` header (`req_fake_0001`, ...); messages have ids `msg_fake_0001`.
 *
 * Scripting: {@link FakeAnthropicServer.enqueue} queues behaviours, one per request, first in first
 * out; a request finding the queue empty gets `'ok'` (for a compaction request: the block).
 * Requests are recorded in {@link FakeAnthropicServer.requests}, parsed, whatever the answer (a
 * request that fails validation is recorded and does not consume a behaviour).
 *
 * Usage:
 * ```ts
 * const fake = new FakeAnthropicServer();
 * const { url, close } = await fake.start();
 * fake.enqueue({ status: 429, retryAfter: 7 }, 'ok');
 * // new Anthropic({ apiKey: 'test', baseURL: url }) ...
 * await close();
 * ```
 */
import { createHash } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  type Block,
  blocksOf,
  type Conversation,
  ConversationError,
  checkConversation,
  type InputTransformation,
  lastSignature,
  signCompaction,
  signThinking,
  type Turn,
} from './conversation-rules.ts';
import { messageEvents, sseText } from './fake-anthropic-sse.ts';
import { deriveCheckpoint as deriveModelCheckpoint } from './fake-model/checkpoint.ts';
import { readPrompt } from './fake-model/prompt-view.ts';

/**
 * The key the fake signs its thinking blocks with (an HMAC over the conversation before each
 * block; see conversation-rules.ts), so a block replayed where the conversation before it changed
 * is refused, as the API refuses it.
 */
export const SIGNING_KEY = 'compactor-fake-anthropic';

/** Scripted answers without parameters. */
export type FakeScenario =
  /**
   * 200, the forced tool called with a valid checkpoint derived from the prompt. The default. On a
   * compaction request: the signed `compaction` block.
   */
  | 'ok'
  /** 529 `overloaded_error`. */
  | 'overloaded'
  /** 500 `api_error`. */
  | 'server-error'
  /** 200 with `content-type: application/json` and a truncated JSON body. */
  | 'malformed-json'
  /** 200 with an HTML page, as a misconfigured proxy might answer. */
  | 'html'
  /**
   * 200, `stop_reason: 'refusal'`, a text block and `stop_details`. On a compaction request:
   * `{ compactionStop: 'refusal' }`.
   */
  | 'refusal'
  /**
   * 200, `stop_reason: 'max_tokens'`, a tool call whose input stops half-way. On a compaction
   * request: `{ compactionStop: 'max_tokens' }`.
   */
  | 'max-tokens'
  /** 200, `stop_reason: 'end_turn'`, a text answer and no tool call. */
  | 'text-only'
  /** 200, the tool called with an input that breaks the schema (`completed` is a string). */
  | 'invalid-checkpoint'
  /** 200, the tool called with a checkpoint whose every field is blank (working set copied). */
  | 'empty-checkpoint'
  /** The socket is destroyed before any answer: a connection error for the client. */
  | 'connection-reset'
  /** Batches only: the request's result is `expired`. */
  | 'expired'
  /**
   * 529 `overloaded_error` with `error.details.error_code: "compaction_unavailable"` (the API's answer
   * when it cannot compact now; the docs say retry).
   */
  | 'compaction-unavailable';

/** Why a compaction answer (HTTP 200) holds no block: the docs' "missing summary" cases. */
export type CompactionStopReason =
  | 'max_tokens'
  | 'model_context_window_exceeded'
  | 'tool_use'
  | 'refusal'
  | 'end_turn';

/** An error answer in the API's shape. */
export interface FakeErrorBehaviour {
  /** HTTP status: 400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 503, 529, ... */
  status: number;
  /** `retry-after` header: delay-seconds (number) or an HTTP date (string). */
  retryAfter?: number | string;
  /** `retry-after-ms` header, ms. */
  retryAfterMs?: number;
  /** `error.type`; default the API's type for the status (`rate_limit_error` for 429, ...). */
  errorType?: string;
  /** `error.details.error_code`, e.g. `enforced_spend_limit_reached`. */
  errorCode?: string;
  /** `error.message`; default a message like the API's. */
  message?: string;
}

/**
 * One scripted answer. On a compaction request, `'ok'`, `'refusal'` and `'max-tokens'` give the
 * API's compaction answers (see each); every other behaviour answers as it says, whatever the request.
 */
export type FakeBehaviour =
  | FakeScenario
  | FakeErrorBehaviour
  /** Waits `delayMs` ms, then answers `then` (default `'ok'`). A client that gives up cancels it. */
  | { delayMs: number; then?: FakeBehaviour }
  /** 200, the tool called with exactly this input. */
  | { toolInput: unknown }
  /** 200, an agent's turn: see {@link FakeReply}. */
  | { reply: FakeReply }
  /**
   * 200, `content: []` and this `stop_reason`: a compaction that produced no block. It is billed as
   * a compaction (`usage.iterations`). Meant for compaction requests; any request gets this answer.
   */
  | { compactionStop: CompactionStopReason };

/**
 * An agent's turn as a model would write it: thinking first (when the request asks for thinking),
 * signed over the conversation before it as the API signs it, then text, then tool calls (ids
 * `toolu_fake_0001`, ...). `stop_reason` is `tool_use` when it calls a tool, else `end_turn`.
 */
export interface FakeReply {
  thinking?: string;
  text?: string;
  toolUse?: Array<{ name: string; input: Record<string, unknown> }>;
}

/** One request as the server received it. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages`. */
  path: string;
  /** Lower-cased header names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The body as sent. */
  rawBody: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
  /** The `request-id` the server answered with. */
  requestId: string;
  /** When the request arrived (wall clock, ms since the epoch), to check retry spacing. */
  receivedAt: number;
  /** The HTTP status answered, once the answer is sent (undefined before, or when the socket died first). */
  status?: number;
}

/** A started server. */
export interface FakeAnthropicHandle {
  /** Base URL for the SDK's `baseURL`, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Stops the server: cancels delayed answers, drops open connections. Idempotent. */
  close(): Promise<void>;
}

/** Default `error.type` and `error.message` per status, as the API words them. */
const ERROR_DEFAULTS: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  402: ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  408: ['timeout_error', 'Request timed out.'],
  409: ['conflict_error', 'Conflict.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  422: ['invalid_request_error', 'Unprocessable request.'],
  429: ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  500: ['api_error', 'Internal server error'],
  503: ['api_error', 'Service unavailable'],
  504: ['timeout_error', 'Gateway timeout'],
  529: ['overloaded_error', 'Overloaded'],
};

/** A message batch the fake holds: its validated requests and the behaviour scripted for each. */
interface FakeBatch {
  id: string;
  requests: Array<{ customId: string; params: MessagesRequest; behaviour: FakeBehaviour }>;
  retrieves: number;
  createdAt: Date;
}

/** A request failing validation: answered 4xx before any scripted behaviour. */
class InvalidRequest extends Error {
  override name = 'InvalidRequest';
  constructor(
    readonly status: number,
    readonly errorType: string,
    message: string,
    /** `error.details`, e.g. `{ error_code: 'compaction_block_misplaced' }`. */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Options of {@link FakeAnthropicServer}. */
export interface FakeAnthropicOptions {
  /** Refuse what the docs leave open but users expect refused (conversation-rules.ts). Default false. */
  strict?: boolean;
  /**
   * Which platform's wire shape the fake answers (default `anthropic`: `POST /v1/messages`):
   * - `bedrock`: `POST /model/{modelId}/invoke`, SigV4-signed (an `Authorization: AWS4-HMAC-SHA256
   *   Credential=…/bedrock/aws4_request` header and `x-amz-date`; the signature itself is not
   *   checked), the Messages body without `model` and with `anthropic_version: 'bedrock-2023-05-31'`,
   *   betas as a body array `anthropic_beta`, no `anthropic-version` header (Bedrock's Claude guide);
   * - `vertex`: `POST /projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`
   *   with `Authorization: Bearer …`, the body without `model` and with
   *   `anthropic_version: 'vertex-2023-10-16'` (Vertex AI's Claude guide).
   * The request is then checked and answered as the first-party one (errors in Anthropic's shape);
   * {@link FakeAnthropicServer.requests} records it as it came.
   */
  platform?: 'anthropic' | 'bedrock' | 'vertex';
}

/** The beta that adds `thinking.block_binding` to a request. */
export const THINKING_BINDING_BETA = 'thinking-binding-controls-2026-08-01';

/** The beta of on-demand compaction: top-level `compaction` and the `compaction` content block. */
export const COMPACTION_BETA = 'compact-2026-09-04';

/** The longest `compaction.instructions` the API takes, in characters. */
export const COMPACTION_INSTRUCTIONS_MAX = 16_384;

/** One compaction the fake answered with a block. */
export interface FakeCompaction {
  requestId: string;
  model: string;
  /** Whether the API supports compaction on this model (the fake compacts on any model). */
  modelSupported: boolean;
  /** Whether the model keeps earlier turns' thinking, so the kept turns' thinking survives the block. */
  preservesThinking: boolean;
  /** Messages summarized (a leading previous block's own message not counted). */
  summarized: number;
  /** The block as answered. */
  block: { type: 'compaction'; content: string; signature: string };
}

/**
 * A model id's family and version, e.g. `opus-4.6` for `claude-opus-4-6-20260101`, `mythos-preview`,
 * `sonnet-3.7` for `claude-3-7-sonnet-latest`; null for an id the fake does not know (`claude-test`).
 */
function modelVersion(model: string): { family: string; version: number | 'preview' } | null {
  const modern = /(opus|sonnet|haiku|fable|mythos)-(preview|\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(model);
  const legacy = /claude-(\d+)(?:[-.](\d{1,2})(?!\d))?-(opus|sonnet|haiku)/.exec(model);
  if (modern?.[1] && modern[2]) {
    const version = modern[2] === 'preview' ? 'preview' : Number(`${modern[2]}.${modern[3] ?? 0}`);
    return { family: modern[1], version };
  }
  if (legacy?.[1] && legacy[3])
    return { family: legacy[3], version: Number(`${legacy[1]}.${legacy[2] ?? 0}`) };
  return null;
}

/**
 * Whether the API supports on-demand compaction on `model`: Fable 5/5.1; Mythos 5/5.1/Preview;
 * Opus 4.6, 4.7, 4.8, 5, 5.5; Sonnet 4.6, 5, 5.5. The fake does not refuse other ids.
 */
export function compactionSupported(model: string): boolean {
  const parsed = modelVersion(model);
  if (!parsed) return false;
  const supported: Record<string, Array<number | 'preview'>> = {
    fable: [5, 5.1],
    mythos: [5, 5.1, 'preview'],
    opus: [4.6, 4.7, 4.8, 5, 5.5],
    sonnet: [4.6, 5, 5.5],
  };
  return supported[parsed.family]?.includes(parsed.version) ?? false;
}

/**
 * Whether `model` has preserved thinking (keeps earlier turns' thinking): Opus 4.5 and later Opus,
 * Sonnet 4.6 and later Sonnet, Fable 5 and later, Mythos 5 and later and Mythos Preview; not Haiku,
 * not earlier Opus or Sonnet. An id the fake does not know (`claude-test`) counts as a current model
 * that does.
 */
export function preservesThinking(model: string): boolean {
  const parsed = modelVersion(model);
  if (!parsed) return true;
  const { family, version } = parsed;
  if (version === 'preview') return family === 'mythos';
  const since: Record<string, number> = { opus: 4.5, sonnet: 4.6, fable: 5, mythos: 5 };
  return family in since && version >= (since[family] ?? Number.POSITIVE_INFINITY);
}

/** The fake Messages API. One instance per test file or test; see the file comment. */
export class FakeAnthropicServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  /** Every compaction answered with a block, in order. */
  readonly compactions: FakeCompaction[] = [];
  readonly #queue: FakeBehaviour[] = [];
  readonly #cachedPrefixes = new Set<string>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  #url = '';
  readonly #batches = new Map<string, FakeBatch>();
  /** Retrieves of a batch that still answer `in_progress` before it is `ended`. Default 1. */
  batchRetrievesBeforeEnd = 1;
  /** The answer when no behaviour is scripted. Default `'ok'`. */
  defaultBehaviour: FakeBehaviour = 'ok';
  #closing: Promise<void> | null = null;
  #counter = 0;
  /** Whether requests get the strict checks too (see {@link FakeAnthropicOptions.strict}). */
  strict: boolean;
  /**
   * Whether a thinking signature not in the fake's format (Anthropic's own, in a real transcript)
   * is taken as valid: the fake cannot check it. Default false: refused as tampered.
   */
  acceptForeignSignatures = false;

  /** The platform whose wire shape the fake answers ({@link FakeAnthropicOptions.platform}). */
  readonly platform: 'anthropic' | 'bedrock' | 'vertex';

  constructor(options: FakeAnthropicOptions = {}) {
    this.strict = options.strict ?? false;
    this.platform = options.platform ?? 'anthropic';
  }

  /** Queues behaviours for the next requests, in order. Returns this, for chaining. */
  enqueue(...behaviours: FakeBehaviour[]): this {
    this.#queue.push(...behaviours);
    return this;
  }

  /** Behaviours not consumed yet. */
  get pending(): number {
    return this.#queue.length;
  }

  /**
   * Listens on 127.0.0.1, on a free port.
   * @throws {Error} when called twice.
   */
  async start(): Promise<FakeAnthropicHandle> {
    if (this.#server) throw new Error('FakeAnthropicServer: already started');
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        // A bug of the fake itself: answer 500 in the API's shape rather than hang the client.
        if (!res.headersSent) this.#sendError(res, 'req_fake_internal', 500, 'api_error', String(error));
      });
    });
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    this.#url = `http://127.0.0.1:${port}`;
    return { url: this.#url, close: () => this.close() };
  }

  /** Stops the server; every step runs even if one fails. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const timer of this.#timers) clearTimeout(timer);
      this.#timers.clear();
      const server = this.#server;
      if (!server) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of this.#sockets) socket.destroy();
      server.closeAllConnections();
      await closed;
    })();
    return this.#closing;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const requestId = this.#nextId('req_fake_');
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      rawBody,
      body: parseJson(rawBody),
      requestId,
      receivedAt: Date.now(),
    };
    this.requests.push(recorded);
    res.on('finish', () => {
      recorded.status = res.statusCode;
    });
    if (this.platform === 'anthropic' && recorded.path.startsWith('/v1/messages/batches')) {
      this.#batchRoute(recorded, res, requestId);
      return;
    }
    if (this.platform === 'anthropic' && recorded.path.split('?')[0] === '/v1/messages/count_tokens') {
      this.#countTokens(recorded, res, requestId);
      return;
    }
    let body: MessagesRequest;
    try {
      body = validate(asFirstParty(recorded, this.platform), {
        strict: this.strict,
        acceptForeignSignatures: this.acceptForeignSignatures,
      });
    } catch (error) {
      if (!(error instanceof InvalidRequest)) throw error;
      this.#sendError(res, requestId, error.status, error.errorType, error.message, {}, error.details);
      return;
    }
    await this.#answer(req, res, requestId, body, this.#queue.shift() ?? this.defaultBehaviour);
  }

  async #answer(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    body: MessagesRequest,
    behaviour: FakeBehaviour,
  ): Promise<void> {
    if (typeof behaviour === 'object' && 'delayMs' in behaviour) {
      const waited = await this.#sleep(behaviour.delayMs, req);
      if (!waited || res.destroyed) return;
      return this.#answer(req, res, requestId, body, behaviour.then ?? 'ok');
    }
    if (typeof behaviour === 'object' && 'compactionStop' in behaviour) {
      const stop = behaviour.compactionStop;
      const outputTokens = stop === 'max_tokens' ? body.max_tokens : stop === 'tool_use' ? 40 : 12;
      sendAnswer(res, requestId, body, this.#compactionMessage(body, [], stop, outputTokens));
      return;
    }
    // A compaction request "generates no reply": the default answer is the block; the scenarios
    // that stand for a failed answer give the API's empty compaction answer.
    if (body.compaction) {
      if (behaviour === 'ok') {
        this.#sendCompaction(res, requestId, body);
        return;
      }
      if (behaviour === 'refusal' || behaviour === 'max-tokens') {
        const compactionStop = behaviour === 'refusal' ? 'refusal' : 'max_tokens';
        return this.#answer(req, res, requestId, body, { compactionStop });
      }
    }
    if (typeof behaviour === 'object' && 'status' in behaviour) {
      const [defaultType, defaultMessage] = ERROR_DEFAULTS[behaviour.status] ?? ['api_error', 'Error'];
      const headers: Record<string, string> = {};
      if (behaviour.retryAfter !== undefined) headers['retry-after'] = String(behaviour.retryAfter);
      if (behaviour.retryAfterMs !== undefined) headers['retry-after-ms'] = String(behaviour.retryAfterMs);
      const details = behaviour.errorCode ? { error_code: behaviour.errorCode } : undefined;
      this.#sendError(
        res,
        requestId,
        behaviour.status,
        behaviour.errorType ?? defaultType,
        behaviour.message ?? defaultMessage,
        headers,
        details,
      );
      return;
    }
    if (typeof behaviour === 'object' && 'toolInput' in behaviour) {
      this.#sendMessage(res, requestId, body, [this.#toolUse(body, behaviour.toolInput)], 'tool_use');
      return;
    }
    if (typeof behaviour === 'object' && 'reply' in behaviour) {
      const content = this.#reply(body, behaviour.reply);
      const calls = content.some((b) => b.type === 'tool_use');
      this.#sendMessage(res, requestId, body, content, calls ? 'tool_use' : 'end_turn');
      return;
    }
    switch (behaviour) {
      case 'ok':
        this.#sendMessage(res, requestId, body, [this.#toolUse(body, deriveCheckpoint(body))], 'tool_use');
        return;
      case 'overloaded':
        return this.#answer(req, res, requestId, body, { status: 529 });
      case 'server-error':
        return this.#answer(req, res, requestId, body, { status: 500 });
      case 'malformed-json': {
        const id = this.#nextId('msg_fake_');
        send(
          res,
          200,
          requestId,
          `{"id":"${id}","type":"message","role":"assistant","content":[{"type":"tool_u`,
        );
        return;
      }
      case 'html':
        send(res, 200, requestId, '<html><body><h1>502 Bad Gateway</h1></body></html>', {
          'content-type': 'text/html; charset=utf-8',
        });
        return;
      case 'refusal':
        this.#sendMessage(
          res,
          requestId,
          body,
          [textBlock("I can't help with summarizing this conversation.")],
          'refusal',
          {
            type: 'refusal',
            category: null,
            explanation: 'The request was declined by a safety classifier.',
          },
        );
        return;
      case 'max-tokens': {
        const partial = { goal: deriveCheckpoint(body).goal };
        this.#sendMessage(
          res,
          requestId,
          body,
          [this.#toolUse(body, partial)],
          'max_tokens',
          null,
          body.max_tokens,
        );
        return;
      }
      case 'text-only':
        this.#sendMessage(
          res,
          requestId,
          body,
          [textBlock('Here is a summary of the session so far.')],
          'end_turn',
        );
        return;
      case 'invalid-checkpoint': {
        const input = { ...deriveCheckpoint(body), completed: 'everything is done' };
        this.#sendMessage(res, requestId, body, [this.#toolUse(body, input)], 'tool_use');
        return;
      }
      case 'empty-checkpoint': {
        const input = {
          goal: '',
          lastUserRequest: ' ',
          completed: [],
          inProgress: [],
          pending: [],
          blockers: [],
          decisions: [],
          openQuestions: [],
          workingSet: readPrompt(userText(body)).workingSet,
        };
        this.#sendMessage(res, requestId, body, [this.#toolUse(body, input)], 'tool_use');
        return;
      }
      case 'connection-reset':
        req.socket.destroy();
        return;
      case 'expired':
        this.#sendError(res, requestId, 400, 'invalid_request_error', "'expired' is for batch requests only");
        return;
      case 'compaction-unavailable':
        return this.#answer(req, res, requestId, body, {
          status: 529,
          errorCode: 'compaction_unavailable',
          message: 'Compaction is temporarily unavailable. Retry the request.',
        });
      default:
        behaviour satisfies never;
        throw new Error(`FakeAnthropicServer: unknown behaviour ${JSON.stringify(behaviour)}`);
    }
  }

  /**
   * `POST /v1/messages/count_tokens` (Anthropic's "Token counting" docs): the request of
   * `POST /v1/messages` without `max_tokens` and `stream` (refused as extra inputs, as the API
   * refuses them), checked by the same rules, strict ones included; answered
   * `{ input_tokens }`, counted as {@link FakeAnthropicServer} counts a prompt (about 4 characters a
   * token). It consumes no scripted behaviour. Claude Code calls it while it compacts.
   */
  #countTokens(recorded: RecordedRequest, res: ServerResponse, requestId: string): void {
    try {
      const body = recorded.body as Record<string, unknown> | undefined;
      for (const field of ['max_tokens', 'stream'] as const) {
        if (typeof body === 'object' && body !== null && field in body) {
          throw new InvalidRequest(400, 'invalid_request_error', `${field}: Extra inputs are not permitted`);
        }
      }
      const counted = validate(
        { ...recorded, path: '/v1/messages', body: { ...body, max_tokens: 1 } },
        { strict: this.strict, acceptForeignSignatures: this.acceptForeignSignatures },
      );
      const tokens = promptParts(counted).reduce((sum, part) => sum + estimateTokens(part.json), 0);
      send(res, 200, requestId, JSON.stringify({ input_tokens: tokens }));
    } catch (error) {
      if (!(error instanceof InvalidRequest)) throw error;
      this.#sendError(res, requestId, error.status, error.errorType, error.message, {}, error.details);
    }
  }

  /**
   * The Message Batches API, as far as compactor uses it: `POST /v1/messages/batches` validates
   * every request like `POST /v1/messages` and answers an `in_progress` batch;
   * `GET /v1/messages/batches/{id}` reports it `ended` from the
   * ({@link batchRetrievesBeforeEnd} + 1)-th retrieve on; `GET .../results` streams JSONL, one
   * result per request, from the scripted behaviours in order: `'ok'` (the default) succeeds,
   * an error behaviour `{ status }` gives an `errored` result, `'expired'` an `expired` one, and
   * the other scenarios a succeeded result with that answer (refusal, max-tokens, ...).
   */
  #batchRoute(recorded: RecordedRequest, res: ServerResponse, requestId: string): void {
    const path = recorded.path.split('?')[0] ?? '';
    const match = /^\/v1\/messages\/batches(?:\/([\w-]+))?(\/results)?$/.exec(path);
    const batch = match?.[1] ? this.#batches.get(match[1]) : undefined;
    if (!match || (match[1] && !batch)) {
      this.#sendError(
        res,
        requestId,
        404,
        'not_found_error',
        `Not found: ${recorded.method} ${recorded.path}`,
      );
      return;
    }
    if (recorded.method === 'POST' && !match[1]) {
      const body = recorded.body as
        | { requests?: Array<{ custom_id?: unknown; params?: unknown }> }
        | undefined;
      if (!Array.isArray(body?.requests) || body.requests.length === 0) {
        this.#sendError(
          res,
          requestId,
          400,
          'invalid_request_error',
          'requests: at least one request is required',
        );
        return;
      }
      const requests: FakeBatch['requests'] = [];
      for (const [i, r] of body.requests.entries()) {
        try {
          if (typeof r.custom_id !== 'string' || r.custom_id === '')
            throw new InvalidRequest(400, 'invalid_request_error', 'custom_id: Field required');
          const params = validate(
            { ...recorded, path: '/v1/messages', rawBody: JSON.stringify(r.params), body: r.params },
            { strict: this.strict, acceptForeignSignatures: this.acceptForeignSignatures },
          );
          requests.push({ customId: r.custom_id, params, behaviour: this.#queue.shift() ?? 'ok' });
        } catch (error) {
          if (!(error instanceof InvalidRequest)) throw error;
          this.#sendError(res, requestId, error.status, error.errorType, `requests.${i}.${error.message}`);
          return;
        }
      }
      const created: FakeBatch = {
        id: this.#nextId('msgbatch_fake_'),
        requests,
        retrieves: 0,
        createdAt: new Date(),
      };
      this.#batches.set(created.id, created);
      send(res, 200, requestId, JSON.stringify(this.#batchJson(created)));
      return;
    }
    if (recorded.method === 'GET' && batch && !match[2]) {
      batch.retrieves += 1;
      send(res, 200, requestId, JSON.stringify(this.#batchJson(batch)));
      return;
    }
    if (recorded.method === 'GET' && batch && match[2]) {
      const lines = batch.requests.map((r) =>
        JSON.stringify({ custom_id: r.customId, result: this.#batchResult(r) }),
      );
      res.writeHead(200, { 'content-type': 'application/binary', 'request-id': requestId });
      res.end(`${lines.join('\n')}\n`);
      return;
    }
    this.#sendError(res, requestId, 405, 'invalid_request_error', 'Method not allowed');
  }

  #batchJson(batch: FakeBatch): Record<string, unknown> {
    const ended = batch.retrieves > this.batchRetrievesBeforeEnd;
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    for (const r of batch.requests) {
      if (!ended) counts.processing++;
      else if (r.behaviour === 'expired') counts.expired++;
      else if (typeof r.behaviour === 'object' && 'status' in r.behaviour) counts.errored++;
      else counts.succeeded++;
    }
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : 'in_progress',
      request_counts: counts,
      created_at: batch.createdAt.toISOString(),
      ended_at: ended ? new Date().toISOString() : null,
      expires_at: new Date(batch.createdAt.getTime() + 24 * 3_600_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: null,
      results_url: ended ? `${this.#url}/v1/messages/batches/${batch.id}/results` : null,
    };
  }

  #batchResult(request: FakeBatch['requests'][number]): Record<string, unknown> {
    const { behaviour, params } = request;
    if (behaviour === 'expired') return { type: 'expired' };
    if (typeof behaviour === 'object' && 'status' in behaviour) {
      const [type, message] = ERROR_DEFAULTS[behaviour.status] ?? ['api_error', 'Error'];
      return { type: 'errored', error: { type: 'error', error: { type, message } } };
    }
    if (behaviour === 'refusal') {
      return {
        type: 'succeeded',
        message: this.#message(params, [textBlock('I cannot help with that.')], 'refusal'),
      };
    }
    if (params.compaction && behaviour === 'ok') {
      return { type: 'succeeded', message: this.#compaction(params, 'req_fake_batch') };
    }
    const input =
      typeof behaviour === 'object' && 'toolInput' in behaviour
        ? behaviour.toolInput
        : deriveCheckpoint(params);
    return { type: 'succeeded', message: this.#message(params, [this.#toolUse(params, input)], 'tool_use') };
  }

  #toolUse(body: MessagesRequest, input: unknown): Record<string, unknown> {
    const forced = body.tool_choice?.type === 'tool' ? body.tool_choice.name : undefined;
    const name = forced ?? body.tools?.[0]?.name ?? 'record_checkpoint';
    return { type: 'tool_use', id: this.#nextId('toolu_fake_'), name, input, caller: { type: 'direct' } };
  }

  #sendMessage(
    res: ServerResponse,
    requestId: string,
    body: MessagesRequest,
    content: Array<Record<string, unknown>>,
    stopReason: string,
    stopDetails: Record<string, unknown> | null = null,
    outputTokens?: number,
  ): void {
    const message = this.#message(body, content, stopReason, stopDetails, outputTokens);
    sendAnswer(res, requestId, body, message);
  }

  /** The content of an agent's turn, thinking signed over the conversation before it. */
  #reply(body: MessagesRequest, reply: FakeReply): Array<Record<string, unknown>> {
    const content: Array<Record<string, unknown>> = [];
    const thinkingOn = body.thinking !== undefined && body.thinking.type !== 'disabled';
    if (thinkingOn && reply.thinking !== undefined) {
      const conversation = { system: body.system, tools: body.tools, messages: body.messages as Turn[] };
      const signature = signThinking(
        conversation,
        [],
        reply.thinking,
        lastSignature(conversation.messages),
        SIGNING_KEY,
      );
      content.push({ type: 'thinking', thinking: reply.thinking, signature });
    }
    if (reply.text !== undefined) content.push(textBlock(reply.text));
    for (const call of reply.toolUse ?? []) {
      content.push({ type: 'tool_use', id: this.#nextId('toolu_fake_'), name: call.name, input: call.input });
    }
    return content;
  }

  #sendCompaction(res: ServerResponse, requestId: string, body: MessagesRequest): void {
    sendAnswer(res, requestId, body, this.#compaction(body, requestId));
  }

  /**
   * The answer to a compaction request: the signed block, or `content: []` with `stop_reason:
   * 'max_tokens'` when the summary would not fit `max_tokens`.
   */
  #compaction(body: MessagesRequest, requestId: string): Record<string, unknown> {
    const summary = compactionSummary(body);
    const outputTokens = estimateTokens(summary);
    if (outputTokens > body.max_tokens)
      return this.#compactionMessage(body, [], 'max_tokens', body.max_tokens);
    const conversation = { system: body.system, tools: body.tools, messages: body.messages as Turn[] };
    const preserved = preservesThinking(body.model);
    const signature = signCompaction(conversation, summary, preserved, SIGNING_KEY);
    const block = { type: 'compaction' as const, content: summary, signature };
    this.compactions.push({
      requestId,
      model: body.model,
      modelSupported: compactionSupported(body.model),
      preservesThinking: preserved,
      summarized: summarizedMessages(body.messages as Turn[]).length,
      block,
    });
    return this.#compactionMessage(body, [block], 'compaction', outputTokens);
  }

  /** A compaction answer: top-level usage 0, the cost in `usage.iterations[0]`. */
  #compactionMessage(
    body: MessagesRequest,
    content: Array<Record<string, unknown>>,
    stopReason: string,
    outputTokens: number,
  ): Record<string, unknown> {
    const message = this.#message(body, content, stopReason, null, outputTokens);
    const usage = message.usage as Record<string, unknown>;
    message.usage = {
      ...usage,
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      iterations: [
        {
          type: 'compaction',
          input_tokens: usage.input_tokens,
          output_tokens: usage.output_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_creation: usage.cache_creation,
        },
      ],
    };
    return message;
  }

  #message(
    body: MessagesRequest,
    content: Array<Record<string, unknown>>,
    stopReason: string,
    stopDetails: Record<string, unknown> | null = null,
    outputTokens?: number,
  ): Record<string, unknown> {
    return {
      id: this.#nextId('msg_fake_'),
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      stop_details: stopDetails,
      container: null,
      diagnostics: null,
      usage: this.#usage(body, outputTokens ?? estimateTokens(JSON.stringify(content))),
      ...(body.inputTransformations ? { input_transformations: body.inputTransformations } : {}),
    };
  }

  /**
   * Token counts: ~4 characters per token. Prompt caching: each breakpoint whose prefix reaches the
   * model's minimum is a cache entry; the longest one seen before is read, the rest up to the last
   * such breakpoint is written, the remainder is `input_tokens`.
   */
  #usage(body: MessagesRequest, outputTokens: number): Record<string, unknown> {
    const parts = promptParts(body);
    const minimum = fakeMinCacheableTokens(body.model);
    const hash = createHash('sha256').update(`${body.model}\n`);
    let total = 0;
    let cacheRead = 0;
    let lastEligible = 0;
    const entries: string[] = [];
    for (const part of parts) {
      hash.update(part.json);
      total += estimateTokens(part.json);
      if (!part.breakpoint || total < minimum) continue;
      const key = hash.copy().digest('hex');
      entries.push(key);
      lastEligible = total;
      if (this.#cachedPrefixes.has(key)) cacheRead = total;
    }
    const cacheWrite = lastEligible - cacheRead;
    for (const key of entries) this.#cachedPrefixes.add(key);
    const input = total - cacheRead - cacheWrite;
    return {
      input_tokens: input,
      output_tokens: Math.min(outputTokens, body.max_tokens),
      cache_creation_input_tokens: cacheWrite,
      cache_read_input_tokens: cacheRead,
      cache_creation: { ephemeral_5m_input_tokens: cacheWrite, ephemeral_1h_input_tokens: 0 },
      server_tool_use: null,
      service_tier: 'standard',
      inference_geo: null,
      output_tokens_details: null,
      speed: null,
    };
  }

  #sendError(
    res: ServerResponse,
    requestId: string,
    status: number,
    type: string,
    message: string,
    headers: Record<string, string> = {},
    details?: Record<string, unknown>,
  ): void {
    const error = details ? { type, message, details } : { type, message };
    const retryable: Record<string, string> =
      status === 429 || status >= 500 ? { 'x-should-retry': 'true' } : {};
    send(res, status, requestId, JSON.stringify({ type: 'error', error, request_id: requestId }), {
      ...retryable,
      ...headers,
    });
  }

  /** Resolves true after `ms`, or false as soon as the client goes away or the server closes. */
  #sleep(ms: number, req: IncomingMessage): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        req.socket.off('close', onClose);
        resolve(true);
      }, ms);
      const onClose = () => {
        clearTimeout(timer);
        this.#timers.delete(timer);
        resolve(false);
      };
      this.#timers.add(timer);
      req.socket.once('close', onClose);
    });
  }

  #nextId(prefix: string): string {
    this.#counter += 1;
    return `${prefix}${String(this.#counter).padStart(4, '0')}`;
  }
}

/** The part of a Messages API request body the fake reads, after validation. */
interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: Array<{ role: string; content: unknown }>;
  system?: string | Array<{ type: string; text: string; cache_control?: unknown }>;
  tools?: Array<{ name: string; input_schema: unknown; cache_control?: unknown }>;
  tool_choice?: { type: string; name?: string };
  thinking?: {
    type: string;
    budget_tokens?: number;
    block_binding?: { prefix_mismatch_behavior?: string | null } | null;
  };
  /** On-demand compaction (beta {@link COMPACTION_BETA}); null counts as absent. */
  compaction?: { type: string; instructions?: string | null } | null;
  stop_sequences?: unknown;
  output_config?: { format?: unknown; task_budget?: { remaining?: unknown } | null } | null;
  context_management?: unknown;
  /** `true`: the answer is streamed as server-sent events (fake-anthropic-sse.ts). */
  stream?: boolean;
  /** Not part of the body: what the fake changed before the model saw it (with the binding beta). */
  inputTransformations?: InputTransformation[];
}

/** Bedrock's `anthropic_version` in a request body (Bedrock's Claude Messages API guide). */
export const BEDROCK_API_VERSION = 'bedrock-2023-05-31';

/** Vertex AI's `anthropic_version` in a request body (Vertex AI's Claude guide). */
export const VERTEX_API_VERSION = 'vertex-2023-10-16';

/**
 * A platform's request as the first-party API would get it, after checking what is the platform's
 * own: path, authentication, `anthropic_version` in the body and no `model` there. Pure.
 * @throws {InvalidRequest} as the platform would refuse the request.
 */
function asFirstParty(
  request: RecordedRequest,
  platform: 'anthropic' | 'bedrock' | 'vertex',
): RecordedRequest {
  if (platform === 'anthropic') return request;
  const [pathname = ''] = request.path.split('?');
  const match =
    platform === 'bedrock'
      ? /^\/model\/([^/]+)\/invoke$/.exec(pathname)
      : /^\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^/:]+):rawPredict$/.exec(
          pathname,
        );
  if (!match?.[1])
    throw new InvalidRequest(404, 'not_found_error', `Not found: ${request.method} ${request.path}`);
  const auth = String(request.headers.authorization ?? '');
  const signed =
    platform === 'bedrock'
      ? /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/.test(
          auth,
        ) && typeof request.headers['x-amz-date'] === 'string'
      : /^Bearer \S+$/.test(auth);
  if (!signed)
    throw new InvalidRequest(403, 'permission_error', `${platform}: missing or malformed Authorization`);
  if (request.headers['anthropic-version'] !== undefined)
    throw new InvalidRequest(400, 'invalid_request_error', `${platform}: anthropic-version goes in the body`);
  const body = request.body as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidRequest(400, 'invalid_request_error', 'The request body is not valid JSON.');
  const version = platform === 'bedrock' ? BEDROCK_API_VERSION : VERTEX_API_VERSION;
  const { anthropic_version: sent, anthropic_beta: betas, ...rest } = body;
  if (sent !== version)
    throw new InvalidRequest(
      400,
      'invalid_request_error',
      `anthropic_version: must be ${version}, got ${String(sent)}`,
    );
  if ('model' in rest)
    throw new InvalidRequest(400, 'invalid_request_error', 'model: Extra inputs are not permitted');
  if (betas !== undefined && !(Array.isArray(betas) && betas.every((b) => typeof b === 'string')))
    throw new InvalidRequest(
      400,
      'invalid_request_error',
      'anthropic_beta: Input should be a list of strings',
    );
  const headers: IncomingHttpHeaders = {
    ...request.headers,
    'anthropic-version': '2023-06-01',
    'x-api-key': platform,
  };
  if (Array.isArray(betas)) headers['anthropic-beta'] = betas.join(',');
  return {
    ...request,
    path: '/v1/messages',
    headers,
    body: { ...rest, model: decodeURIComponent(match[1]) },
  };
}

/** Checks what the API checks and compactor could get wrong. @throws {InvalidRequest} */
function validate(
  request: RecordedRequest,
  options: { strict: boolean; acceptForeignSignatures: boolean },
): MessagesRequest {
  if (request.path.split('?')[0] !== '/v1/messages') {
    throw new InvalidRequest(404, 'not_found_error', `Not found: ${request.method} ${request.path}`);
  }
  if (request.method !== 'POST') throw new InvalidRequest(405, 'invalid_request_error', 'Method not allowed');
  const auth = request.headers['x-api-key'] ?? request.headers.authorization;
  if (!auth) throw new InvalidRequest(401, 'authentication_error', 'x-api-key header is required');
  if (!request.headers['anthropic-version']) {
    throw new InvalidRequest(400, 'invalid_request_error', 'anthropic-version: header is required');
  }
  const body = request.body as Partial<MessagesRequest> | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequest(400, 'invalid_request_error', 'The request body is not valid JSON.');
  }
  const bad = (message: string) => new InvalidRequest(400, 'invalid_request_error', message);
  if (typeof body.model !== 'string' || body.model === '') throw bad('model: Field required');
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    throw bad('max_tokens: Input should be a positive integer');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw bad('messages: at least one message is required');
  if (body.stream !== undefined && typeof body.stream !== 'boolean')
    throw bad('stream: Input should be a valid boolean');
  body.messages.forEach((m, i) => {
    // `system`: a mid-conversation system message (conversation-rules.ts refuses one first).
    if (m?.role !== 'user' && m?.role !== 'assistant' && m?.role !== 'system')
      throw bad(`messages.${i}.role: Input should be 'user', 'assistant' or 'system'`);
    if (typeof m.content !== 'string' && !Array.isArray(m.content))
      throw bad(`messages.${i}.content: Field required`);
  });
  if (body.system !== undefined && typeof body.system !== 'string') {
    if (!Array.isArray(body.system)) throw bad('system: Input should be a valid string or list');
    body.system.forEach((b, i) => {
      if (b?.type !== 'text' || typeof b.text !== 'string')
        throw bad(`system.${i}: Input should be a text block`);
      checkCacheControl(b.cache_control, `system.${i}.cache_control`, bad);
    });
  }
  body.messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    (m.content as Array<{ cache_control?: unknown }>).forEach((b, j) => {
      checkCacheControl(b?.cache_control, `messages.${i}.content.${j}.cache_control`, bad);
    });
  });
  const breakpoints = [
    ...(body.tools ?? []),
    ...(Array.isArray(body.system) ? body.system : []),
    ...body.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as unknown[]) : [])),
  ].filter((b) => Boolean((b as { cache_control?: unknown } | null)?.cache_control)).length;
  if (breakpoints > 4) {
    throw bad(`A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`);
  }
  const names = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw bad('tools: Input should be a valid list');
    body.tools.forEach((t, i) => {
      if (typeof t?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(t.name))
        throw bad(`tools.${i}.name: invalid`);
      const schema = t.input_schema as { type?: unknown } | undefined;
      if (schema?.type !== 'object') throw bad(`tools.${i}.input_schema.type: Input should be 'object'`);
      if (names.has(t.name)) throw bad(`tools: Tool names must be unique (${t.name})`);
      names.add(t.name);
      checkCacheControl(t.cache_control, `tools.${i}.cache_control`, bad);
    });
  }
  const betas = String(request.headers['anthropic-beta'] ?? '')
    .split(',')
    .map((b) => b.trim());
  const binding = betas.includes(THINKING_BINDING_BETA);
  const blockBinding = body.thinking?.block_binding;
  if (blockBinding !== undefined && !binding) {
    throw bad('thinking.block_binding: Extra inputs are not permitted');
  }
  const behaviour = blockBinding?.prefix_mismatch_behavior ?? 'error';
  if (behaviour !== 'error' && behaviour !== 'drop_block') {
    throw bad("thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'");
  }
  const compacting = checkCompactionRequest(body, betas.includes(COMPACTION_BETA), bad);
  let inputTransformations: InputTransformation[];
  try {
    inputTransformations = checkConversation(body as Conversation, SIGNING_KEY, {
      strict: options.strict,
      // "If a condition fails, nothing fails when you compact": on a compaction request, thinking
      // whose prefix changed is summarized without it instead of failing the request.
      dropMismatchedThinking: behaviour === 'drop_block' || compacting,
      compaction: compacting,
      compactionBeta: betas.includes(COMPACTION_BETA),
      acceptForeignSignatures: options.acceptForeignSignatures,
    });
  } catch (error) {
    if (error instanceof ConversationError) {
      const details = error.code ? { error_code: error.code } : undefined;
      throw new InvalidRequest(400, 'invalid_request_error', error.message, details);
    }
    throw error;
  }
  const choice = body.tool_choice;
  if (choice !== undefined) {
    if (!['auto', 'any', 'tool', 'none'].includes(choice?.type ?? '')) throw bad('tool_choice.type: invalid');
    if (choice.type === 'tool' && !names.has(choice.name ?? '')) {
      throw bad(`tool_choice: Tool '${choice.name}' not found in provided tools`);
    }
  }
  // A copy: the recorded body stays what was sent.
  return binding ? { ...(body as MessagesRequest), inputTransformations } : (body as MessagesRequest);
}

/**
 * The top-level `compaction` parameter and what a compaction request may not carry.
 * @returns whether the request asks for a compaction.
 */
function checkCompactionRequest(
  body: Partial<MessagesRequest>,
  beta: boolean,
  bad: (m: string) => InvalidRequest,
): boolean {
  const carriesBlock = (body.messages ?? []).some(
    (m) => Array.isArray(m.content) && (m.content as Block[]).some((b) => b?.type === 'compaction'),
  );
  const remaining = body.output_config?.task_budget?.remaining;
  const compaction = body.compaction;
  if (compaction === undefined || compaction === null) {
    if (carriesBlock && remaining !== undefined && remaining !== null) {
      throw bad(
        'output_config.task_budget.remaining: not supported on a request that carries a `compaction` block',
      );
    }
    return false;
  }
  if (!beta) throw bad(`compaction: \`compaction\` requires anthropic-beta: ${COMPACTION_BETA}`);
  if (typeof compaction !== 'object' || Array.isArray(compaction)) {
    throw bad('compaction: Input should be a valid dictionary');
  }
  for (const field of Object.keys(compaction)) {
    if (field !== 'type' && field !== 'instructions') {
      throw bad(`compaction.${field}: Extra inputs are not permitted`);
    }
  }
  if (compaction.type !== 'summarize') throw bad("compaction.type: Input should be 'summarize'");
  const { instructions } = compaction;
  if (instructions !== undefined && instructions !== null) {
    if (typeof instructions !== 'string')
      throw bad('compaction.instructions: Input should be a valid string');
    if (instructions.trim() === '') throw bad('compaction.instructions: must contain non-whitespace text');
    if (instructions.length > COMPACTION_INSTRUCTIONS_MAX) {
      throw bad(
        `compaction.instructions: String should have at most ${COMPACTION_INSTRUCTIONS_MAX} characters`,
      );
    }
  }
  if (body.stop_sequences !== undefined && body.stop_sequences !== null) {
    throw bad('stop_sequences: not supported on a compaction request');
  }
  if (body.output_config?.format !== undefined && body.output_config.format !== null) {
    throw bad('output_config.format: not supported on a compaction request');
  }
  if (remaining !== undefined && remaining !== null) {
    throw bad('output_config.task_budget.remaining: not supported on a compaction request');
  }
  const choice = body.tool_choice?.type;
  if (choice === 'any' || choice === 'tool') {
    throw bad(
      `tool_choice: a compaction request never runs a tool; tool_choice of type '${choice}' is not supported with compaction`,
    );
  }
  if (body.context_management !== undefined && body.context_management !== null) {
    throw bad('context_management: cannot be used together with `compaction`');
  }
  return true;
}

/** The messages a compaction request summarizes: all but a leading previous block's own message. */
function summarizedMessages(messages: Turn[]): Turn[] {
  const first = messages[0];
  const own =
    Array.isArray(first?.content) && first.content.length === 1 && first.content[0]?.type === 'compaction';
  return own ? messages.slice(1) : messages;
}

/**
 * The readable summary of a compaction request, deterministic: how many messages it summarizes, the
 * previous block's summary (compact again), the first and the latest user text (clipped), the file
 * paths seen anywhere (text, tool inputs, tool results, the previous summary), the instructions.
 */
function compactionSummary(body: MessagesRequest): string {
  const messages = body.messages as Turn[];
  const lead = blocksOf(messages[0]?.content ?? [])[0];
  const previous = lead?.type === 'compaction' && typeof lead.content === 'string' ? lead.content : null;
  const summarized = summarizedMessages(messages);
  const count = (role: string) => summarized.filter((m) => m.role === role).length;
  const userTexts = summarized
    .filter((m) => m.role === 'user')
    .map((m) =>
      blocksOf(m.content)
        .filter((b) => b.type === 'text' && typeof b.text === 'string')
        .map((b) => String(b.text))
        .join(' '),
    )
    .filter((text) => text.trim() !== '');
  const texts: string[] = previous ? [previous] : [];
  for (const message of summarized) {
    for (const block of blocksOf(message.content)) {
      if (block.type === 'compaction' || block.type === 'thinking' || block.type === 'redacted_thinking')
        continue;
      if (block.type === 'text') texts.push(String(block.text ?? ''));
      else if (block.type === 'tool_use') texts.push(...stringsIn(block.input));
      else if (block.type === 'tool_result') texts.push(...stringsIn(block.content));
      else texts.push(...stringsIn(block));
    }
  }
  const paths = [...new Set(texts.flatMap((text) => text.match(FILE_PATH) ?? []))].slice(0, 50);
  const clip = (text: string, max = 200) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  };
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const lines = [
    `Summary of ${plural(summarized.length, 'message')} (${count('user')} user, ${count('assistant')} assistant).`,
  ];
  if (previous) lines.push('Earlier summary:', ...previous.split('\n').map((line) => `  ${line}`));
  if (userTexts.length > 0) lines.push(`First user request: ${clip(userTexts[0] ?? '')}`);
  if (userTexts.length > 1) lines.push(`Latest user message: ${clip(userTexts[userTexts.length - 1] ?? '')}`);
  lines.push(`Files: ${paths.length > 0 ? paths.join(', ') : '(none)'}`);
  const instructions = body.compaction?.instructions;
  if (typeof instructions === 'string') lines.push(`Instructions followed: ${clip(instructions)}`);
  return lines.join('\n');
}

/** Things like `src/a.ts`, `./b/c.json`, `/x/y.py`: at least one directory and an extension; not URLs. */
const FILE_PATH =
  /(?<![\w./:-])(?:\.{0,2}\/)?(?:[\w@+-][\w.@+-]*\/)+[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,9}\b/g;

/** Every string value inside a JSON value (object keys and ids left out). */
function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .filter(([k]) => k !== 'id' && k !== 'tool_use_id' && k !== 'type' && k !== 'signature')
      .flatMap(([, v]) => stringsIn(v));
  }
  return [];
}

function checkCacheControl(value: unknown, where: string, bad: (m: string) => InvalidRequest): void {
  if (value === undefined || value === null) return;
  if ((value as { type?: unknown }).type !== 'ephemeral')
    throw bad(`${where}.type: Input should be 'ephemeral'`);
}

/**
 * The minimum cacheable prompt length of `model`, tokens, as Anthropic's prompt-caching docs list
 * it (2026-09): 4,096 for Haiku 4.5, Opus 4.5 and 4.6; 2,048 for Haiku 3.5 and Opus 4.7; 1,024 for
 * Sonnet 4, 4.5, 4.6, 5 and Opus 4, 4.1, 4.8; 512 for Opus 5, 5.5, Fable 5, 5.1 and Mythos 5, 5.1;
 * 1,024 for an id the fake does not know. Kept apart from compactor's own table on purpose: the
 * fake is the API's stand-in, not a copy of compactor.
 */
export function fakeMinCacheableTokens(model: string): number {
  const parsed = modelVersion(model);
  if (!parsed || parsed.version === 'preview') return 1_024;
  const table: Record<string, Array<[number, number]>> = {
    haiku: [
      [4.5, 4_096],
      [3.5, 2_048],
    ],
    opus: [
      [4.5, 4_096],
      [4.6, 4_096],
      [4.7, 2_048],
      [4, 1_024],
      [4.1, 1_024],
      [4.8, 1_024],
      [5, 512],
      [5.5, 512],
    ],
    sonnet: [
      [4, 1_024],
      [4.5, 1_024],
      [4.6, 1_024],
      [5, 1_024],
    ],
    fable: [
      [5, 512],
      [5.1, 512],
    ],
    mythos: [
      [5, 512],
      [5.1, 512],
    ],
  };
  return table[parsed.family]?.find(([v]) => v === parsed.version)?.[1] ?? 1_024;
}

/** The prompt as prompt caching reads it: tools, system blocks, then every message's content blocks, in order. */
function promptParts(body: MessagesRequest): Array<{ json: string; breakpoint: boolean }> {
  const parts: Array<{ json: string; breakpoint: boolean }> = [];
  const push = (block: unknown) =>
    parts.push({
      json: JSON.stringify(block),
      breakpoint: Boolean((block as { cache_control?: unknown } | null)?.cache_control),
    });
  for (const tool of body.tools ?? []) push(tool);
  if (typeof body.system === 'string') push(body.system);
  else for (const block of body.system ?? []) push(block);
  for (const message of body.messages) {
    if (typeof message.content === 'string') push({ role: message.role, text: message.content });
    else for (const block of message.content as unknown[]) push(block);
  }
  return parts;
}

/**
 * The checkpoint a diligent model writes for compactor's prompt (fake-model/checkpoint.ts): every
 * field filled as the system prompt defines it, from the request's user turn only.
 */
function deriveCheckpoint(body: MessagesRequest): Record<string, unknown> {
  return deriveModelCheckpoint(userText(body), {
    maxTokens: body.max_tokens,
    analysis: hasAnalysisField(body),
  });
}

/** Whether the forced (or first) tool's input schema has an `analysis` property. */
function hasAnalysisField(body: MessagesRequest): boolean {
  const forced = body.tool_choice?.type === 'tool' ? body.tool_choice.name : undefined;
  const tool = body.tools?.find((t) => t.name === forced) ?? body.tools?.[0];
  const properties = (tool?.input_schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && 'analysis' in properties;
}

/** Text of the last user message. */
function userText(body: MessagesRequest): string {
  const last = [...body.messages].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content as Array<{ type?: string; text?: string }>)
    .map((b) => (b.type === 'text' ? (b.text ?? '') : ''))
    .join('\n');
}

function textBlock(text: string): Record<string, unknown> {
  return { type: 'text', text, citations: null };
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * A 200 answer: the message as JSON, or — for a request with `"stream": true` — as the API streams
 * it (`text/event-stream`, fake-anthropic-sse.ts). Errors are never streamed: the API answers a
 * request it refuses with a plain JSON error before any event.
 */
function sendAnswer(
  res: ServerResponse,
  requestId: string,
  body: MessagesRequest,
  message: Record<string, unknown>,
): void {
  if (body.stream !== true) {
    send(res, 200, requestId, JSON.stringify(message));
    return;
  }
  send(res, 200, requestId, sseText(messageEvents(message)), {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
  });
}

function send(
  res: ServerResponse,
  status: number,
  requestId: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': 'application/json',
    'request-id': requestId,
    ...headers,
  });
  res.end(body);
}
