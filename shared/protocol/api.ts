/**
 * What the HTTP API (`compactor api`) takes, as zod schemas: a message (an Anthropic
 * `MessageParam`), the append request, the create-session request. The `session.run.completed`
 * event is events.ts's schema as it is. The checked-in JSON Schemas under `shared/contract/schemas/`
 * are generated from these (json-schemas.ts, `npm run contract`), and so is the API's OpenAPI
 * document.
 */
import { z } from 'zod';
import { DEFAULT_SESSION_FORMAT, SESSION_FORMATS } from '../contract/session-format.ts';
import { contentBlockSchema } from '../formats/anthropic/api-schema.ts';
import { readsAs, SESSION_FORMAT_RULES } from '../formats/registry.ts';
import { idSchema } from './events.ts';

/** Longest idempotency key of an append, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Most messages one request may carry (the body size limit applies as well). */
export const MAX_MESSAGES_PER_REQUEST = 10_000;

/** The content blocks of an `anthropic` message (the context route's `system` is made of them). */
export { contentBlockSchema };

/**
 * Each format's message schema, the default's first; another format's takes only a message that
 * reads as its own (shared/formats/registry.ts, `readsAs`), aborting, so that a message of no
 * format is explained by the default format's issues.
 */
const formatMessageSchemas = SESSION_FORMATS.map((name) => {
  const { apiSchemas, vocabulary } = SESSION_FORMAT_RULES[name];
  if (name === DEFAULT_SESSION_FORMAT) return apiSchemas.message;
  return apiSchemas.message.refine((m) => readsAs(name, m), {
    error: `not one of ${vocabulary.messages}`,
    abort: true,
  });
});

/** A message of any format; the session's format decides which it must be. */
export const apiMessageSchema = z.union(formatMessageSchemas).meta({
  title: 'Message',
  description:
    'A message in the session\'s format: an Anthropic MessageParam (format "anthropic"), an OpenAI Chat Completions message (format "openai-chat"), an OpenAI Responses input item (format "openai-responses") or an AI SDK prompt message (format "ai-sdk"). Optional "pinned": never compacted away.',
});

/** A message as the API takes it, in any format: its fields, `pinned` among them. */
export type ApiMessage = Record<string, unknown> & { pinned?: boolean };

/** `POST /v1/sessions/{id}/messages`: messages to append, in order. */
export const appendRequestSchema = z
  .object({
    messages: z.array(apiMessageSchema).min(1).max(MAX_MESSAGES_PER_REQUEST),
    /**
     * The `version` of the context the model's reply among these messages was made from (what
     * `GET /v1/sessions/{id}/context` answered): keeps its thinking out of later contexts once a
     * compaction changed that context.
     */
    contextVersion: z.number().int().min(0).optional(),
  })
  .strict()
  .meta({
    title: 'AppendRequest',
    description:
      'Messages to append to a session, in order; contextVersion: the version of the context the reply among them was made from.',
  });

export type AppendRequest = z.infer<typeof appendRequestSchema>;

/** `POST /v1/sessions`: a new session, with its first messages (seqs 0, 1, ...). */
export const createSessionRequestSchema = z
  .object({
    id: idSchema,
    agentId: idSchema.nullable().optional(),
    /** The context window of the session's model, in tokens. */
    contextWindow: z.number().int().min(1).max(100_000_000).nullable().optional(),
    /**
     * The wire format of the session's messages, fixed for its life: `anthropic` (default),
     * `openai-chat` (OpenAI Chat Completions messages), `openai-responses` (OpenAI Responses input
     * items) or `ai-sdk` (the AI SDK's provider-level prompt messages).
     */
    format: z.enum(SESSION_FORMATS).optional(),
    messages: z.array(apiMessageSchema).max(MAX_MESSAGES_PER_REQUEST).optional(),
  })
  .strict()
  .meta({
    title: 'CreateSessionRequest',
    description:
      "A new session: its id, the agent, the model's context window in tokens, its format (anthropic, the default, openai-chat, openai-responses or ai-sdk), and its first messages (seqs 0, 1, ...), in that format.",
  });

export type CreateSessionRequest = z.infer<typeof createSessionRequestSchema>;

/**
 * Where a zod issue points, as a field name a person reads: `messages[2].content[0].tool_use_id`.
 * A failed union is followed into the option that got furthest (a list of blocks, not a string),
 * so the field named is the one that is wrong, not the union around it.
 * @returns the field (empty for the root) and the issue's message.
 */
export function describeIssue(issue: z.core.$ZodIssue): { field: string; message: string } {
  let path: PropertyKey[] = [...issue.path];
  let current: z.core.$ZodIssue = issue;
  for (let depth = 0; current.code === 'invalid_union' && depth < 10; depth++) {
    const options = current.errors.filter((issues) => issues.some((i) => i.path.length > 0));
    const deepest = options.flat().sort((a, b) => b.path.length - a.path.length)[0];
    if (!deepest) break;
    path = [...path, ...deepest.path];
    current = deepest;
  }
  return { field: fieldName(path), message: current.message };
}

/** `['messages', 2, 'content']` → `messages[2].content`. */
export function fieldName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}
