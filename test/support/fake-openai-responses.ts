/**
 * A strict fake OpenAI Responses API: a real HTTP server (node:http) on 127.0.0.1, on a free port,
 * that the real `openai` SDK talks to through `baseURL`. It serves `POST /v1/responses` and
 * `POST /v1/responses/compact`, and refuses what the real API refuses in an `input`, with the API's
 * error shape (`{ error: { message, type, param, code } }`) and texts as quoted in issue threads
 * (OpenAI publishes no list of its error messages). Each rule below names where it is checked from.
 *
 * Encrypted blobs are this server's own: each `reasoning` item it returns carries an
 * `encrypted_content` it signed, bound to the item's id, and each `compaction` item too; a blob it
 * did not sign, or one altered, is refused as the API refuses a blob another backend made. So a test
 * can only send reasoning and compaction items that came from this server, kept byte-exact.
 *
 * A valid `create` answers with a reasoning item followed by the next scripted output
 * ({@link FakeOpenAIResponsesServer.script}: a function call, or one made from the request, as a
 * model reads a tool's answer before its next call) or, by default, an assistant message `ok`. A
 * refused request takes no scripted turn. Requests are recorded in
 * {@link FakeOpenAIResponsesServer.requests}, parsed, whatever the answer.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An error as the API answers it, with its HTTP status. */
export interface ResponsesApiError {
  status: number;
  message: string;
  type: 'invalid_request_error';
  param: string | null;
  code: string | null;
}

/** A request handler of node:http. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

type Item = Record<string, unknown> & { type?: unknown; role?: unknown };

const CALLS: Record<string, string> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  computer_call: 'computer_call_output',
  local_shell_call: 'local_shell_call_output',
  shell_call: 'shell_call_output',
  apply_patch_call: 'apply_patch_call_output',
};
const OUTPUTS = new Set(Object.values(CALLS));

/** What the server knows of the blobs and ids it issued. */
export interface IssuedState {
  /** Signs a blob for an item id. */
  sign(kind: 'reasoning' | 'compaction', id: string): string;
  /** Whether `blob` is one this server signed for `kind` (and for `id` when given). */
  verify(kind: 'reasoning' | 'compaction', blob: string, id: string | undefined): boolean;
  /** Item id produced after a reasoning item -> that reasoning item's id. */
  reasoningOf: Map<string, string>;
  /**
   * Takes the blobs of recorded items (a real session's, which the real API issued) as this
   * server's own, each bound to its item's id (or to no id, when the item had none), so a test can
   * send a real transcript's reasoning back; a blob altered by one byte is still refused. An item
   * after a recorded reasoning item, both with ids, is noted as produced by it.
   */
  admit(items: readonly unknown[]): void;
}

/** A new signer with a random key. */
export function issuedState(): IssuedState {
  const key = randomBytes(16);
  const mac = (text: string) => createHmac('sha256', key).update(text).digest('base64url');
  const admitted = new Map<string, { kind: string; id: string | undefined }>();
  const reasoningOf = new Map<string, string>();
  return {
    sign: (kind, id) => {
      const payload = Buffer.from(JSON.stringify({ kind, id })).toString('base64url');
      return `${payload}.${mac(payload)}`;
    },
    verify: (kind, blob, id) => {
      const recorded = admitted.get(blob);
      if (recorded) return recorded.kind === kind && recorded.id === id;
      const [payload, sig] = blob.split('.');
      if (!payload || !sig || mac(payload) !== sig) return false;
      const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
        kind: string;
        id: string;
      };
      return body.kind === kind && (id === undefined || body.id === id);
    },
    reasoningOf,
    admit: (items) => {
      const all = items as Item[];
      all.forEach((item, n) => {
        const type = typeOf(item);
        const id = typeof item.id === 'string' ? item.id : undefined;
        if ((type === 'reasoning' || type === 'compaction') && typeof item.encrypted_content === 'string') {
          admitted.set(item.encrypted_content, { kind: type, id });
        }
        const next = all[n + 1];
        if (type === 'reasoning' && id !== undefined && typeof next?.id === 'string') {
          reasoningOf.set(next.id, id);
        }
      });
    },
  };
}

const typeOf = (item: Item): string => (typeof item.type === 'string' ? item.type : 'message');

/** The call id an output answers: its `call_id`, or a `local_shell_call_output`'s `id` (the SDK's types). */
const answers = (item: Item): unknown =>
  typeOf(item) === 'local_shell_call_output' ? item.id : item.call_id;

/**
 * The output type answering a client tool's call, or undefined: a tool search the client runs
 * (`execution: "client"`) is answered by its `tool_search_output`; one the server ran needs nothing.
 */
const answeredBy = (item: Item): string | undefined =>
  typeOf(item) === 'tool_search_call'
    ? item.execution === 'client'
      ? 'tool_search_output'
      : undefined
    : CALLS[typeOf(item)];

/** Whether the item is a client tool's output. */
const isOutput = (item: Item): boolean =>
  OUTPUTS.has(typeOf(item)) || (typeOf(item) === 'tool_search_output' && item.execution === 'client');

/** Whether the item is one the model produces (what a reasoning item must be followed by). */
function produced(item: Item | undefined): boolean {
  if (item === undefined) return false;
  const type = typeOf(item);
  if (type === 'message') return item.role === 'assistant';
  return (
    !['reasoning', 'compaction', 'compaction_trigger', 'item_reference'].includes(type) && !isOutput(item)
  );
}

/**
 * The first rule an `input` breaks, as the API words it; null when it is valid.
 * @param store the request's `store` (the API's default is true).
 */
export function responsesInputError(
  input: unknown,
  state: IssuedState,
  store = true,
): ResponsesApiError | null {
  const fail = (message: string, code: string | null = null, status = 400): ResponsesApiError => ({
    status,
    message,
    type: 'invalid_request_error',
    param: 'input',
    code,
  });
  if (typeof input === 'string') return null;
  if (!Array.isArray(input))
    return fail("Invalid type for 'input': expected a string or an array of input items.");
  const items = input as Item[];
  const calls = new Set<string>();
  for (let n = 0; n < items.length; n++) {
    const item = items[n] as Item;
    if (typeof item !== 'object' || item === null)
      return fail(`Invalid type for 'input[${n}]': expected an object.`);
    const type = typeOf(item);
    const id = typeof item.id === 'string' ? item.id : undefined;
    // openai-python `response_input_item_param.py`: compaction_trigger "Must be the final input item".
    if (type === 'compaction_trigger' && n !== items.length - 1) {
      return fail(`Invalid 'input[${n}]': a compaction_trigger item must be the final input item.`);
    }
    if (answeredBy(item) !== undefined) calls.add(String(item.call_id));
    // An output with no call before it: the API's text as quoted in a bug report against the
    // Continue coding agent (2026-02).
    if (isOutput(item) && !calls.has(String(answers(item)))) {
      return fail(`No tool call found for function call output with call_id ${String(answers(item))}.`);
    }
    if (type === 'reasoning') {
      // Under store:false an item is resolved from its encrypted content only: the API's text as
      // quoted in bug reports against opencode and the OpenAI Agents SDK for Python.
      const blob = item.encrypted_content;
      if (!store && (typeof blob !== 'string' || blob === '')) {
        return fail(
          `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
          null,
          404,
        );
      }
      // A blob this backend did not make (or one altered) fails verification: `invalid_encrypted_content`
      // as reported against OpenAI's Codex CLI (2025-12).
      if (typeof blob === 'string' && !state.verify('reasoning', blob, id)) {
        return fail(
          `The encrypted content for item ${id} could not be verified.`,
          'invalid_encrypted_content',
        );
      }
      // Reasoning without the item it produced: the API's text as quoted in bug reports against
      // the Continue coding agent and the openai-node SDK.
      if (!produced(items[n + 1])) {
        return fail(`Item '${id}' of type 'reasoning' was provided without its required following item.`);
      }
    }
    if (type === 'compaction') {
      // A foreign or altered compaction blob fails verification as a reasoning blob does (reported
      // for a `cmp_` item against a Codex web front end, 2026-08).
      const blob = item.encrypted_content;
      if (typeof blob !== 'string' || !state.verify('compaction', blob, id)) {
        return fail(
          `The encrypted content for item ${id ?? 'compaction'} could not be verified.`,
          'invalid_encrypted_content',
        );
      }
    }
    // An item replayed by id without the reasoning item that produced it: the API's text as quoted
    // in bug reports against Cline (gpt-5.5) and the OpenAI Agents SDK for Python.
    const needs = id === undefined ? undefined : state.reasoningOf.get(id);
    if (needs !== undefined && (items[n - 1] as Item | undefined)?.id !== needs) {
      return fail(
        `Item '${id}' of type '${type}' was provided without its required 'reasoning' item: '${needs}'.`,
      );
    }
  }
  // A call with no output: the API's text as quoted in a bug report against OpenAI's support agent
  // demo (2026-09).
  for (const item of items) {
    const output = answeredBy(item);
    if (output === undefined) continue;
    const id = String(item.call_id);
    if (!items.some((o) => typeOf(o) === output && isOutput(o) && answers(o) === id)) {
      return fail(`No tool output found for function call ${id}.`);
    }
  }
  return null;
}

/** A scripted output of the next `create`: a function call. */
export interface ScriptedCall {
  name: string;
  arguments: string;
}

/**
 * A scripted turn: a function call, or one made from the request it answers (its parsed body, valid
 * by then), as a model reads what a tool gave it before it calls the next.
 */
export type ScriptedTurn = ScriptedCall | ((request: Record<string, unknown>) => ScriptedCall);

/** The fake server; `await start()` before use, `await close()` after. */
export class FakeOpenAIResponsesServer {
  /** Every request body received, parsed (undefined when it was not JSON), with its path. */
  readonly requests: Array<{ path: string; body: unknown }> = [];
  /** Outputs of the next `create` calls, first first; empty: an assistant message `ok`. */
  readonly script: ScriptedTurn[] = [];
  readonly state = issuedState();
  #server: Server | null = null;
  #count = 0;
  readonly #otherwise: Handler | undefined;

  /**
   * @param otherwise answers the requests of any other path (another fake's handler, so one
   *   `baseURL` serves both APIs); absent: a 404.
   */
  constructor(otherwise?: Handler) {
    this.#otherwise = otherwise;
  }

  /** Starts listening; resolves to the SDK's `baseURL` (`http://127.0.0.1:<port>/v1`). */
  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => send(res, 500, { error: { message: String(error) } }));
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const served = req.url === '/v1/responses' || req.url === '/v1/responses/compact';
    if (!served && this.#otherwise) return this.#otherwise(req, res);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    const path = req.url ?? '';
    this.requests.push({ path, body });
    const invalid = (message: string, param: string | null = null) =>
      send(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
    if (req.method !== 'POST' || (path !== '/v1/responses' && path !== '/v1/responses/compact')) {
      return send(res, 404, { error: { message: `Unknown request URL: ${req.method} ${path}` } });
    }
    if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) {
      const error = {
        message: 'You did not provide an API key.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      };
      return send(res, 401, { error });
    }
    if (body === undefined || typeof body !== 'object' || body === null)
      return invalid('We could not parse the JSON body of your request.');
    if (typeof body.model !== 'string' || body.model === '')
      return invalid("Missing required parameter: 'model'.", 'model');
    const error = responsesInputError(body.input, this.state, body.store !== false);
    if (error) {
      const { status, ...rest } = error;
      return send(res, status, { error: rest });
    }
    this.#count++;
    const usage = usageOf(body.input);
    if (path === '/v1/responses/compact') return send(res, 200, this.#compacted(body, usage));
    return send(res, 200, this.#response(body, usage));
  }

  /** `POST /responses/compact`: the input's user messages, then one compaction item (openai-python `compacted_response.py`). */
  #compacted(body: Record<string, unknown>, usage: Usage): unknown {
    const input =
      typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as Item[]);
    const users = input.filter((i) => typeOf(i) === 'message' && i.role === 'user');
    const id = `cmp_fake_${this.#count}`;
    return {
      id: `resp_cmp_${this.#count}`,
      object: 'response.compaction',
      created_at: 1_790_000_000,
      output: [...users, { type: 'compaction', id, encrypted_content: this.state.sign('compaction', id) }],
      usage,
    };
  }

  #response(body: Record<string, unknown>, usage: Usage): unknown {
    const n = this.#count;
    const rs = `rs_fake_${n}`;
    const reasoning = {
      id: rs,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: `thought ${n}` }],
      encrypted_content: this.state.sign('reasoning', rs),
    };
    const turn = this.script.shift();
    const call = typeof turn === 'function' ? turn(body) : turn;
    const next = call
      ? {
          id: `fc_fake_${n}`,
          type: 'function_call',
          status: 'completed',
          call_id: `call_fake_${n}`,
          name: call.name,
          arguments: call.arguments,
        }
      : {
          id: `msg_fake_${n}`,
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'ok', annotations: [], logprobs: [] }],
        };
    this.state.reasoningOf.set(next.id, rs);
    return {
      id: `resp_fake_${n}`,
      object: 'response',
      created_at: 1_790_000_000,
      status: 'completed',
      model: body.model,
      output: [reasoning, next],
      store: body.store !== false,
      usage,
    };
  }
}

interface Usage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

function usageOf(input: unknown): Usage {
  const tokens = Math.ceil(JSON.stringify(input ?? '').length / 4);
  return {
    input_tokens: tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 2,
    output_tokens_details: { reasoning_tokens: 1 },
    total_tokens: tokens + 2,
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_fake' });
  res.end(JSON.stringify(body));
}
