/**
 * The summary side of the fake Chat Completions server (fake-openai-chat.ts): how it checks and
 * answers a request that forces its answer, as compactor's `openai` summarizer sends it.
 *
 * Checks, as OpenAI's "Structured model outputs" guide states the strict mode (400 in the API's
 * error shape, `invalid_request_error`):
 * - `response_format` `{ type: 'json_schema', json_schema: { name, strict: true, schema } }`, or a
 *   function tool with `strict: true` forced by `tool_choice` `{ type: 'function', function: { name } }`
 *   naming a declared tool; a `name` of 1 to 64 of `[a-zA-Z0-9_-]`;
 * - a strict schema: an object at the root; every object with `additionalProperties: false` and
 *   every property `required`; none of `allOf`, `not`, `if`/`then`/`else`, `dependentRequired`,
 *   `dependentSchemas`, nor (as compactor reads the guide's list of supported keywords)
 *   `minLength`, `maxLength`, `default`.
 *
 * The answer: the stand-in model's checkpoint (fake-model/checkpoint.ts, the fake Messages API's
 * model) for the last user message, `analysis` first when the schema has it, checked against the
 * schema the request sent (z.fromJSONSchema: a strict server's answer always conforms; a fake
 * answer that would not is a 500 naming why, so the fake cannot hide a mismatch). In the message's
 * `content` for `response_format`, as the forced call's `arguments` for a tool; `finish_reason`
 * `stop`, or `length` with the JSON cut off when it would pass `max_completion_tokens`. Usage: about
 * 4 characters a token; prompt caching as the prompt-caching guide describes it, in short: a request
 * repeating an earlier one's model, schema and system prompt, when that prefix is 1,024 tokens or
 * more, reads it (`prompt_tokens_details.cached_tokens`, in steps of 128 tokens, part of
 * `prompt_tokens`). The answer names a dated snapshot (`gpt-…-2026-03-17`) for a `gpt-` model, as
 * OpenAI's do, and the model as asked otherwise.
 */
import { z } from 'zod';
import { deriveCheckpoint } from './fake-model/checkpoint.ts';

/** A scripted answer to one summary request. */
export type FakeChatBehaviour =
  /** 200, the checkpoint the stand-in model writes. The default. */
  | 'ok'
  /** 200, `message.refusal` set, no content. */
  | 'refusal'
  /** 200, `finish_reason: 'length'`, the JSON cut off half-way. */
  | 'length'
  /** 500 `server_error`. */
  | 'server-error'
  /** 429 `insufficient_quota`: no wait fixes it. */
  | 'quota'
  /** 400 naming `response_format`, as a server without structured outputs, for this request only. */
  | 'no-structured-outputs'
  /** 200, a checkpoint breaking compactor's schema (`completed` a string): a server that enforces nothing. */
  | 'invalid-checkpoint'
  /** 429 `rate_limit_exceeded`, with `retry-after` in seconds when given. */
  | { status: 429; retryAfter?: number }
  /** 200, this JSON as the model's answer (still checked against the request's schema). */
  | { answer: Record<string, unknown> }
  /** 200 `ok`, after this many ms (fake-openai-chat.ts waits; a client's timeout fires first). */
  | { delayMs: number };

/** A reply: status, JSON body, extra headers. */
export interface SummaryReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

type Body = Record<string, unknown>;
type Schema = Record<string, unknown>;

/** Whether `body` forces its answer: a `json_schema` response format or a forced function. */
export function isSummaryRequest(body: Body): boolean {
  const format = body.response_format as { type?: unknown } | undefined;
  const choice = body.tool_choice as { type?: unknown } | undefined;
  return format?.type === 'json_schema' || (typeof choice === 'object' && choice?.type === 'function');
}

/** The prompt prefixes the fake has seen (never expire). */
export class PromptCache {
  readonly #seen = new Set<string>();

  /** Cached tokens of a request whose prefix is `key` of `tokens` tokens; then remembers it. */
  read(key: string, tokens: number): number {
    const hit = tokens >= MIN_CACHED_TOKENS && this.#seen.has(key);
    if (tokens >= MIN_CACHED_TOKENS) this.#seen.add(key);
    return hit ? Math.floor(tokens / 128) * 128 : 0;
  }
}

/** The shortest prefix that is cached, tokens (OpenAI prompt-caching guide). */
const MIN_CACHED_TOKENS = 1_024;

/** What {@link summaryReply} needs besides the request. */
export interface SummaryContext {
  id: string;
  behaviour: FakeChatBehaviour;
  structuredOutputs: boolean;
  cache: PromptCache;
}

/** The reply to a summary request (see the file's comment). */
export function summaryReply(body: Body, context: SummaryContext): SummaryReply {
  const { behaviour } = context;
  if (typeof behaviour === 'object' && 'status' in behaviour) {
    const headers: Record<string, string> =
      behaviour.retryAfter === undefined ? {} : { 'retry-after': String(behaviour.retryAfter) };
    return apiError(
      429,
      'Rate limit reached for requests. Please try again later.',
      null,
      'rate_limit_exceeded',
      headers,
    );
  }
  if (behaviour === 'server-error')
    return {
      status: 500,
      body: {
        error: {
          message: 'The server had an error while processing your request.',
          type: 'server_error',
          param: null,
          code: null,
        },
      },
    };
  if (behaviour === 'quota')
    return apiError(
      429,
      'You exceeded your current quota, please check your plan and billing details.',
      null,
      'insufficient_quota',
    );
  const target = answerTarget(body, context.structuredOutputs && behaviour !== 'no-structured-outputs');
  if ('status' in target) return target;
  const invalid = schemaProblem(target.schema, target.what);
  if (invalid) return apiError(400, invalid, target.param, null);
  return answer(body, target, context);
}

/** Where the answer goes: the response format's content or the forced function's arguments. */
type Target = { form: 'json' | 'tool'; name: string; schema: Schema; what: string; param: string };

function answerTarget(body: Body, structuredOutputs: boolean): Target | SummaryReply {
  const format = body.response_format as { type?: string; json_schema?: Record<string, unknown> } | undefined;
  if (format?.type === 'json_schema') {
    if (!structuredOutputs) {
      return apiError(
        400,
        "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
        'response_format',
        null,
      );
    }
    const js = format.json_schema ?? {};
    const name = String(js.name ?? '');
    if (!NAME.test(name))
      return apiError(
        400,
        "Invalid 'response_format.json_schema.name': must be 1-64 of a-z, A-Z, 0-9, _ and -.",
        'response_format.json_schema.name',
        'invalid_value',
      );
    if (js.strict !== true)
      return apiError(
        400,
        'the fake answers strict schemas only: set json_schema.strict to true',
        'response_format',
        null,
      );
    return {
      form: 'json',
      name,
      schema: (js.schema ?? {}) as Schema,
      what: `response_format '${name}'`,
      param: 'response_format',
    };
  }
  const forced = (body.tool_choice as { function?: { name?: unknown } }).function?.name;
  const tools = Array.isArray(body.tools)
    ? (body.tools as Array<{ type?: string; function?: Record<string, unknown> }>)
    : [];
  const index = tools.findIndex((t) => t.type === 'function' && t.function?.name === forced);
  const tool = tools[index]?.function;
  if (!tool) {
    return apiError(
      400,
      `Invalid value for 'tool_choice': tool '${String(forced)}' is not among the tools.`,
      'tool_choice',
      null,
    );
  }
  if (tool.strict !== true)
    return apiError(
      400,
      'the fake answers strict functions only: set strict to true',
      `tools[${index}]`,
      null,
    );
  return {
    form: 'tool',
    name: String(forced),
    schema: (tool.parameters ?? {}) as Schema,
    what: `function '${String(forced)}'`,
    param: `tools[${index}].function.parameters`,
  };
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const NOT_PERMITTED = [
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'minLength',
  'maxLength',
  'default',
];

/** The first strict-mode rule `schema` breaks, worded as the API words it; null when it is valid. */
export function schemaProblem(schema: Schema, what: string): string | null {
  if (schema.type !== 'object' || 'anyOf' in schema)
    return `Invalid schema for ${what}: schema must be a JSON Schema of 'type: "object"', got 'type: "${String(schema.type)}"'.`;
  return walk(schema, []);

  function walk(node: Schema, context: string[]): string | null {
    const where = `In context=(${context.map((c) => `'${c}'`).join(', ')})`;
    for (const key of NOT_PERMITTED)
      if (key in node) return `Invalid schema for ${what}: ${where}, '${key}' is not permitted.`;
    const properties = node.properties as Record<string, Schema> | undefined;
    if (node.type === 'object' && properties) {
      if (node.additionalProperties !== false)
        return `Invalid schema for ${what}: ${where}, 'additionalProperties' is required to be supplied and to be false.`;
      const required = Array.isArray(node.required) ? (node.required as string[]) : [];
      const missing = Object.keys(properties).find((k) => !required.includes(k));
      if (missing !== undefined)
        return `Invalid schema for ${what}: ${where}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
      for (const [k, v] of Object.entries(properties)) {
        const problem = walk(v, [...context, 'properties', k]);
        if (problem) return problem;
      }
    }
    if (node.items && typeof node.items === 'object') {
      const problem = walk(node.items as Schema, [...context, 'items']);
      if (problem) return problem;
    }
    for (const [i, v] of ((node.anyOf as Schema[] | undefined) ?? []).entries()) {
      const problem = walk(v, [...context, 'anyOf', String(i)]);
      if (problem) return problem;
    }
    return null;
  }
}

/** The 200 answer: the stand-in model's checkpoint, checked against the request's schema. */
function answer(body: Body, target: Target, context: SummaryContext): SummaryReply {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const user = [...messages].reverse().find((m) => m.role === 'user');
  const system = messages.find((m) => m.role === 'system' || m.role === 'developer');
  const maxTokens = typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : 4_096;
  const analysis = 'analysis' in ((target.schema.properties as Schema | undefined) ?? {});
  const scripted = typeof context.behaviour === 'object' && 'answer' in context.behaviour;
  const checkpoint: Record<string, unknown> =
    typeof context.behaviour === 'object' && 'answer' in context.behaviour
      ? context.behaviour.answer
      : constrained(deriveCheckpoint(textOf(user?.content), { maxTokens, analysis }), target.schema);
  if (context.behaviour === 'invalid-checkpoint') checkpoint.completed = 'all of it';
  else {
    const conforms = z.fromJSONSchema(target.schema as never).safeParse(checkpoint);
    if (!conforms.success) {
      const issue = conforms.error.issues[0];
      return {
        status: 500,
        body: {
          error: {
            message: `${scripted ? 'the scripted' : "fake model's"} checkpoint breaks the request's schema at ${issue?.path.join('.')}: ${issue?.message}`,
            type: 'server_error',
            param: null,
            code: null,
          },
        },
      };
    }
  }
  let json = JSON.stringify(checkpoint);
  let finish = 'stop';
  let outputTokens = tokens(json);
  if (context.behaviour === 'length' || outputTokens > maxTokens) {
    json = json.slice(0, Math.floor(Math.min(json.length, maxTokens * 4) / 2));
    outputTokens = context.behaviour === 'length' ? maxTokens : outputTokens;
    finish = 'length';
  }
  const refused = context.behaviour === 'refusal';
  const message = refused
    ? { role: 'assistant', content: null, refusal: "I'm sorry, I can't help with that request." }
    : target.form === 'json'
      ? { role: 'assistant', content: json, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: `call_${context.id}`, type: 'function', function: { name: target.name, arguments: json } },
          ],
        };
  const schemaJson = JSON.stringify(body.response_format ?? body.tools ?? null);
  const promptTokens = tokens(JSON.stringify(messages) + schemaJson);
  const prefix = `${String(body.model)}\n${schemaJson}\n${textOf(system?.content)}`;
  const cached = Math.min(promptTokens, context.cache.read(prefix, tokens(prefix)));
  const model = String(body.model);
  return {
    status: 200,
    body: {
      id: context.id,
      object: 'chat.completion',
      created: 1_790_000_000,
      model: /^gpt-/.test(model) && !/-\d{4}-\d{2}-\d{2}$/.test(model) ? `${model}-2026-03-17` : model,
      choices: [{ index: 0, message, finish_reason: refused ? 'stop' : finish, logprobs: null }],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: refused ? 12 : outputTokens,
        total_tokens: promptTokens + (refused ? 12 : outputTokens),
        prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
      },
    },
  };
}

/**
 * The stand-in model's answer as a strict server's decoding constrains it: a required property the
 * model left out is written as the empty value of its type (`[]`, `null` where the schema allows it,
 * `''`), in the schema's order. The stand-in writes for the Messages API, whose tool schema makes
 * no field required that it may omit; a strict schema makes every field required.
 */
function constrained(answer: Record<string, unknown>, schema: Schema): Record<string, unknown> {
  const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
  const out: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) {
    out[key] = key in answer ? answer[key] : emptyOf(property);
  }
  return out;
}

function emptyOf(property: Schema): unknown {
  const types = [property.type, ...((property.anyOf as Schema[] | undefined) ?? []).map((s) => s.type)];
  if (types.includes('null')) return null;
  if (types.includes('array')) return [];
  if (types.includes('object')) return {};
  return types.includes('string') ? '' : 0;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : ''))
    .join('\n');
}

function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function apiError(
  status: number,
  message: string,
  param: string | null,
  code: string | null,
  headers: Record<string, string> = {},
): SummaryReply {
  const type =
    status === 429
      ? code === 'insufficient_quota'
        ? 'insufficient_quota'
        : 'requests'
      : 'invalid_request_error';
  return { status, body: { error: { message, type, param, code } }, headers };
}
