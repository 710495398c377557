/**
 * A strict fake OpenAI Chat Completions API: a real HTTP server (node:http) on 127.0.0.1, on a free
 * port, that the real `openai` SDK talks to through `baseURL`. It refuses what the real API refuses
 * in a conversation, with the API's error texts and shape (`{ error: { message, type, param, code } }`,
 * status 400), as quoted in issue threads of agent frameworks:
 * - an assistant message with `tool_calls` not directly followed by tool messages answering each id
 *   (as quoted in LiteLLM's bug reports);
 * - a tool message that answers no call of the assistant message before it (the
 *   API's own spelling, "preceeding");
 * - `tool_calls: []` (as reported against the openai-node SDK and Home Assistant);
 * - a null `content` where the role requires one (as reported against llama_index);
 * plus a missing bearer key, a body that is not JSON, no `model`, no `messages`, a `stream` that is
 * not a boolean and `stream_options` on a request that does not stream. A valid request
 * gets a `chat.completion` whose message is `{ role: 'assistant', content: 'ok' }`, or the next
 * reply scripted with {@link FakeOpenAIChatServer.script} (text and tool calls, first in first
 * out; a request refused as invalid consumes none); with `stream: true` the same completion comes
 * as server-sent `chat.completion.chunk`s ({@link streamChunks}), its usage in a last chunk when
 * `stream_options.include_usage` asks for it. A scripted call of a function the request's
 * `tools` do not declare is a bug of the test: answered 500, never played. Its usage counts about 4
 * characters a token and reads from the prompt cache what the previous such request shares with it
 * ({@link cachedPrefixTokens}). Requests are recorded in
 * {@link FakeOpenAIChatServer.requests}, parsed, whatever the answer, and their headers in
 * {@link FakeOpenAIChatServer.headers}.
 *
 * A summary request, one that forces its answer as compactor's `openai` summarizer does, is answered
 * by the stand-in model of the fake Messages API (fake-model/checkpoint.ts): the checkpoint a
 * diligent model writes for the request's last user message, with a short `analysis` first when
 * the schema has one. fake-openai-summary.ts says what it checks (strict schemas as the Structured
 * Outputs guide defines them) and how the answer is shaped; {@link FakeOpenAIChatServer.enqueue}
 * scripts failures (429 with retry-after, 500, a refusal, `finish_reason: 'length'`, ...), and
 * `new FakeOpenAIChatServer({ structuredOutputs: false })` is a server without `response_format`
 * `json_schema`, which refuses it with a 400 naming it.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type FakeChatBehaviour,
  isSummaryRequest,
  PromptCache,
  type SummaryReply,
  summaryReply,
} from './fake-openai-summary.ts';

export type { FakeChatBehaviour } from './fake-openai-summary.ts';

/** An error as the API answers it. */
interface ApiError {
  message: string;
  type: 'invalid_request_error';
  param: string | null;
  code: string | null;
}

type Msg = Record<string, unknown> & { role?: unknown; content?: unknown };

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** The first rule a request's `messages` break, as the API words it; null when they are valid. */
export function chatRequestError(messages: unknown): ApiError | null {
  const fail = (message: string, param: string | null, code: string | null = null): ApiError => ({
    message,
    type: 'invalid_request_error',
    param,
    code,
  });
  if (!Array.isArray(messages) || messages.length === 0) {
    return fail(
      "Invalid 'messages': empty array. Expected an array with minimum length 1.",
      'messages',
      'empty_array',
    );
  }
  let pending: string[] = [];
  let calls = new Set<string>();
  for (let n = 0; n < messages.length; n++) {
    const m = messages[n] as Msg;
    if (typeof m !== 'object' || m === null || !ROLES.has(String(m.role))) {
      return fail(`Invalid value for 'messages[${n}].role'.`, `messages.[${n}].role`, 'invalid_value');
    }
    const hasCalls = m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length === 0) {
      return fail(
        `Invalid 'messages[${n}].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
        `messages[${n}].tool_calls`,
        'empty_array',
      );
    }
    if ((m.content === null || m.content === undefined) && !(hasCalls || m.role === 'function')) {
      return fail("Invalid value for 'content': expected a string, got null.", `messages.[${n}].content`);
    }
    if (m.role === 'tool') {
      const id = m.tool_call_id;
      if (typeof id !== 'string' || !calls.has(id)) {
        return fail(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${n}].role`,
        );
      }
      pending = pending.filter((p) => p !== id);
      continue;
    }
    if (pending.length > 0) return unanswered(pending);
    calls = new Set();
    if (hasCalls) {
      pending = (m.tool_calls as Array<{ id: string }>).map((c) => c.id);
      calls = new Set(pending);
    }
  }
  return pending.length > 0 ? unanswered(pending) : null;

  function unanswered(ids: string[]): ApiError {
    return fail(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
        `The following tool_call_ids did not have response messages: ${ids.join(', ')}`,
      'messages',
    );
  }
}

/**
 * A reply the fake plays for one request: `content` (default null with tool calls, else `ok`) and
 * function calls, each answered as `{ id: 'call_fake_N', type: 'function', function: { name,
 * arguments } }` with `arguments` the JSON text of `arguments`; `finish_reason` is `tool_calls`
 * when there are calls, else `stop`.
 */
export interface ScriptedChatReply {
  content?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

/** Options of {@link FakeOpenAIChatServer}. */
export interface FakeOpenAIChatOptions {
  /**
   * Whether the server supports `response_format` of type `json_schema`; default true. False: such
   * a request gets the 400 of a server without it, naming `response_format`.
   */
  structuredOutputs?: boolean | undefined;
}

/** The fake server; `await start()` before use, `await close()` after. */
export class FakeOpenAIChatServer {
  /** Every request body received, parsed (undefined when it was not JSON). */
  readonly requests: unknown[] = [];
  /** The headers of every request received, in the order of {@link requests}. */
  readonly headers: IncomingHttpHeaders[] = [];
  /** Whether `response_format` `json_schema` is supported (see {@link FakeOpenAIChatOptions}). */
  structuredOutputs: boolean;
  #server: Server | null = null;
  #count = 0;
  #calls = 0;
  readonly #script: ScriptedChatReply[] = [];

  /**
   * Queues replies for the next valid requests that are not summary requests, in order. Returns
   * this, for chaining.
   */
  script(...replies: ScriptedChatReply[]): this {
    this.#script.push(...replies);
    return this;
  }

  /** Scripted replies not played yet. */
  get pending(): number {
    return this.#script.length;
  }

  #queue: FakeChatBehaviour[] = [];
  readonly #cache = new PromptCache();
  /** The previous agent request's prompt (tools and messages), for its cached prefix. */
  #lastPrompt = '';

  constructor(options: FakeOpenAIChatOptions = {}) {
    this.structuredOutputs = options.structuredOutputs ?? true;
  }

  /** Queues behaviours for the next summary requests, one each, first in first out; then `'ok'`. */
  enqueue(...behaviours: FakeChatBehaviour[]): void {
    this.#queue.push(...behaviours);
  }

  /** Starts listening; resolves to the SDK's `baseURL` (`http://127.0.0.1:<port>/v1`). */
  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => send(res, 500, { error: { message: String(error) } }));
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** The assistant message of a scripted reply. */
  #messageOf(reply: ScriptedChatReply): Record<string, unknown> {
    const calls = (reply.toolCalls ?? []).map((c) => ({
      id: `call_fake_${++this.#calls}`,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
    if (calls.length === 0) return { role: 'assistant', content: reply.content ?? 'ok', refusal: null };
    return { role: 'assistant', content: reply.content ?? null, refusal: null, tool_calls: calls };
  }

  /** Answers one request (also usable as another server's handler: see fake-openai-responses.ts). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    this.requests.push(body);
    this.headers.push(req.headers);
    const invalid = (message: string, param: string | null = null) =>
      send(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      return send(res, 404, { error: { message: `Unknown request URL: ${req.method} ${req.url}` } });
    }
    if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) {
      return send(res, 401, {
        error: {
          message: 'You did not provide an API key.',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      });
    }
    if (body === undefined || typeof body !== 'object')
      return invalid('We could not parse the JSON body of your request.');
    if (typeof body.model !== 'string' || body.model === '')
      return invalid("Missing required parameter: 'model'.", 'model');
    const streamError = streamParameterError(body);
    if (streamError) return send(res, 400, { error: streamError });
    const error = chatRequestError(body.messages);
    if (error) return send(res, 400, { error });
    this.#count++;
    if (isSummaryRequest(body)) {
      if (body.stream === true) {
        return send(res, 500, { error: { message: 'fake: a streamed summary request is not supported' } });
      }
      let behaviour = this.#queue.shift() ?? 'ok';
      if (typeof behaviour === 'object' && 'delayMs' in behaviour) {
        const { delayMs } = behaviour;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        behaviour = 'ok';
      }
      if (res.destroyed) return;
      const reply = summaryReply(body, {
        id: `chatcmpl-fake-${this.#count}`,
        behaviour,
        structuredOutputs: this.structuredOutputs,
        cache: this.#cache,
      });
      return sendReply(res, reply, this.#count);
    }
    const scripted = this.#script[0];
    const undeclared = scripted?.toolCalls?.find((c) => !declaresFunction(body.tools, c.name));
    if (undeclared) {
      return send(res, 500, {
        error: {
          message: `fake: scripted call of ${undeclared.name}, which the request's tools do not declare`,
        },
      });
    }
    this.#script.shift();
    const promptText = JSON.stringify([body.tools ?? null, body.messages]);
    const prompt = JSON.stringify(body.messages).length;
    const cached = cachedPrefixTokens(this.#lastPrompt, promptText, Math.ceil(prompt / 4));
    this.#lastPrompt = promptText;
    const message: Record<string, unknown> = scripted
      ? this.#messageOf(scripted)
      : { role: 'assistant', content: 'ok', refusal: null };
    const finish = 'tool_calls' in message ? 'tool_calls' : 'stop';
    const completion: ChatCompletion = {
      id: `chatcmpl-fake-${this.#count}`,
      object: 'chat.completion',
      created: 1_790_000_000,
      model: body.model,
      choices: [
        {
          index: 0,
          message,
          finish_reason: finish,
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: Math.ceil(prompt / 4),
        completion_tokens: 1,
        total_tokens: Math.ceil(prompt / 4) + 1,
        prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      },
    };
    if (body.stream === true) {
      const options = body.stream_options as { include_usage?: unknown } | undefined;
      return sendStream(res, streamChunks(completion, options?.include_usage === true));
    }
    return send(res, 200, completion);
  }
}

/** A `chat.completion` the fake answers (one choice). */
interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: Record<string, unknown>;
    finish_reason: string;
    logprobs: null;
  }>;
  usage: Record<string, unknown>;
}

/**
 * The error of a request's `stream` and `stream_options`, as the API words it, or null: `stream` is
 * a boolean, and `stream_options` is only allowed on a streamed request.
 */
export function streamParameterError(body: Record<string, unknown>): ApiError | null {
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    return {
      message: `Invalid type for 'stream': expected a boolean, but got ${typeof body.stream} instead.`,
      type: 'invalid_request_error',
      param: 'stream',
      code: 'invalid_type',
    };
  }
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    return {
      message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      type: 'invalid_request_error',
      param: 'stream_options',
      code: null,
    };
  }
  return null;
}

/**
 * The `chat.completion.chunk`s a streamed request gets for `completion`, as the API streams them
 * (the streaming guide and the chunk object of the API reference): the role first, the text in two
 * deltas, each tool call's id and name in one delta and its `arguments` in two, then an empty
 * delta with the `finish_reason`; with `include_usage`, every chunk has `usage: null` and a last
 * one with no choices carries the usage.
 */
export function streamChunks(completion: ChatCompletion, includeUsage: boolean): unknown[] {
  const { id, created, model } = completion;
  const choice = completion.choices[0];
  const message = (choice?.message ?? {}) as {
    content?: string | null;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const halves = (text: string) => {
    const middle = Math.ceil(text.length / 2);
    return [text.slice(0, middle), text.slice(middle)].filter((piece) => piece !== '');
  };
  const chunks: unknown[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const piece of halves(message.content ?? '')) chunks.push(chunk({ content: piece }));
  (message.tool_calls ?? []).forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: call.type, function: { name: call.function.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of halves(call.function.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, choice?.finish_reason ?? 'stop'));
  if (includeUsage)
    chunks.push({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [],
      usage: completion.usage,
    });
  return chunks;
}

/** Sends `chunks` as server-sent events, each `data: <json>`, then `data: [DONE]`. */
function sendStream(res: ServerResponse, chunks: unknown[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_fake' });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  res.end('data: [DONE]\n\n');
}

/**
 * Tokens of `current` read from the prompt cache after `previous`, as the prompt-caching guide
 * describes it: the exact prefix they share (about 4 characters a token), 0 under 1,024 tokens,
 * else in steps of 128; never more than `promptTokens`.
 */
function cachedPrefixTokens(previous: string, current: string, promptTokens: number): number {
  let shared = 0;
  const end = Math.min(previous.length, current.length);
  while (shared < end && previous.charCodeAt(shared) === current.charCodeAt(shared)) shared++;
  const tokens = Math.min(promptTokens, Math.floor(shared / 4));
  return tokens < 1_024 ? 0 : Math.floor(tokens / 128) * 128;
}

/** Whether a request's `tools` declare the function `name`. */
function declaresFunction(tools: unknown, name: string): boolean {
  return (
    Array.isArray(tools) &&
    tools.some((t) => (t as { type?: unknown; function?: { name?: unknown } })?.function?.name === name)
  );
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_fake', ...headers });
  res.end(JSON.stringify(body));
}

/** Sends a summary request's reply, with request id `req_fake_000N`. */
function sendReply(res: ServerResponse, reply: SummaryReply, count: number): void {
  const requestId = `req_fake_${String(count).padStart(4, '0')}`;
  send(res, reply.status, reply.body, { 'x-request-id': requestId, ...reply.headers });
}
