/**
 * What the HTTP API (`compactor api`) takes, as zod schemas: a message (an Anthropic
 * `MessageParam`), the append request, the create-session request. The `session.run.completed`
 * event is events.ts's schema as it is. The checked-in JSON Schemas under `shared/contract/schemas/`
 * are generated from these (json-schemas.ts, `npm run contract`), and so is the API's OpenAPI
 * document.
 */
import { z } from 'zod';
import { SESSION_FORMATS } from '../contract/session-format.ts';
import { CHAT_ROLES, chatMarker } from '../formats/openai-chat/message.ts';
import { responsesMarker } from '../formats/openai-responses/item.ts';
import { idSchema } from './events.ts';

/** Longest idempotency key of an append, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Most messages one request may carry (the body size limit applies as well). */
export const MAX_MESSAGES_PER_REQUEST = 10_000;

/** Fields the Messages API requires of the block types compactor reads; others pass as they are. */
const REQUIRED_BLOCK_FIELDS: Record<string, Array<{ field: string; type: 'string' | 'object' }>> = {
  text: [{ field: 'text', type: 'string' }],
  thinking: [{ field: 'thinking', type: 'string' }],
  tool_use: [
    { field: 'id', type: 'string' },
    { field: 'name', type: 'string' },
    { field: 'input', type: 'object' },
  ],
  tool_result: [{ field: 'tool_use_id', type: 'string' }],
  image: [{ field: 'source', type: 'object' }],
  document: [{ field: 'source', type: 'object' }],
};

/**
 * One content block: an object with a `type`, kept exactly as given (any block type, every field,
 * in order). For `text`, `thinking`, `tool_use`, `tool_result`, `image` and `document` blocks the
 * fields the Messages API requires are checked, naming the one missing.
 */
export const contentBlockSchema = z
  .looseObject({ type: z.string().min(1, 'expected a block type') })
  .superRefine((block, ctx) => {
    for (const { field, type } of REQUIRED_BLOCK_FIELDS[block.type] ?? []) {
      const value = (block as Record<string, unknown>)[field];
      const ok =
        type === 'string'
          ? typeof value === 'string'
          : typeof value === 'object' && value !== null && !Array.isArray(value);
      if (!ok) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `a ${block.type} block needs ${type === 'string' ? 'a string' : 'an object'} "${field}"`,
        });
      }
    }
  })
  .meta({
    title: 'ContentBlock',
    description:
      'An Anthropic content block (text, image, document, thinking, tool_use, tool_result, or any other type), stored exactly as given.',
  });

/**
 * A message of an `anthropic` session: an Anthropic `MessageParam` (`role` and `content`, a string
 * or a list of content blocks; role `system` for a system prompt kept in the session), optionally
 * `pinned` (a pinned message never leaves in a compaction: pin system prompts and decisions).
 */
export const anthropicApiMessageSchema = z
  .object({
    role: z.enum(['user', 'assistant', 'system']),
    content: z.union([z.string(), z.array(contentBlockSchema)], {
      error: 'expected a string or a list of content blocks',
    }),
    pinned: z.boolean().optional(),
  })
  .strict()
  .meta({
    title: 'AnthropicMessage',
    description:
      'An Anthropic MessageParam ({ role, content }); role "system" holds a system prompt. Optional "pinned": never compacted away.',
  });

/**
 * A message of an `openai-chat` session: a Chat Completions message as the `openai` SDK types it
 * (`role` system, developer, user, assistant or tool, and that role's fields), stored whole as
 * given; optionally `pinned`. Told apart from an Anthropic message by a field only Chat Completions
 * has (a `tool`/`developer` role, `tool_calls`, `tool_call_id`, `refusal`, `name`, a null
 * `content`); one that has none (`{ role: "user", content: "…" }`) reads alike in both formats. The
 * session's format decides, and the append checks it against shared/formats/openai-chat/message.ts.
 */
export const chatApiMessageSchema = z
  .looseObject({
    role: z.enum(CHAT_ROLES),
    content: z.unknown().optional(),
    tool_calls: z.array(z.looseObject({ id: z.string(), type: z.string() })).optional(),
    tool_call_id: z.string().optional(),
    pinned: z.boolean().optional(),
  })
  // Aborting, so that a message of neither format is explained by the Anthropic option's issues.
  .refine((m) => chatMarker(m, '', true) !== null, { error: 'not a Chat Completions message', abort: true })
  .meta({
    title: 'ChatCompletionsMessage',
    description:
      'An OpenAI Chat Completions message ({ role, content, tool_calls?, tool_call_id?, … }), for a session of format "openai-chat", stored whole as given. Optional "pinned": never compacted away.',
  });

/**
 * An item of an `openai-responses` session: a Responses API input item as the `openai` SDK types it
 * (`ResponseInputItem`: a `message`, `function_call`, `function_call_output`, `reasoning`,
 * `compaction`, …), stored whole as given; optionally `pinned`. Told apart by a `type` only
 * Responses items have, or a Responses content part (`input_text`, `output_text`, …); a typeless
 * `{ role: "user", content: "…" }` reads alike in every format. An item of any other `type` but
 * `message` (`item_reference`, a misspelt one) passes too: no message of the other formats has a
 * `type`, and the append's check names what is wrong with it (`messages[0].type: "item_reference"
 * points at an item OpenAI stored`) where this union could only say that its role is missing. The
 * session's format decides, and the append checks it against shared/formats/openai-responses/item.ts.
 */
export const responsesApiItemSchema = z
  .looseObject({ type: z.string().optional(), pinned: z.boolean().optional() })
  .refine(
    (m) => (typeof m.type === 'string' && m.type !== 'message') || responsesMarker(m, '', true) !== null,
    {
      error: 'not a Responses input item',
      abort: true,
    },
  )
  .meta({
    title: 'ResponsesInputItem',
    description:
      'An OpenAI Responses API input item ({ type: "message" | "function_call" | "function_call_output" | "reasoning" | "compaction" | …, … }), for a session of format "openai-responses", stored whole as given. Optional "pinned": never compacted away.',
  });

/** A message of any format; the session's format decides which it must be. */
export const apiMessageSchema = z
  .union([anthropicApiMessageSchema, chatApiMessageSchema, responsesApiItemSchema])
  .meta({
    title: 'Message',
    description:
      'A message in the session\'s format: an Anthropic MessageParam (format "anthropic"), an OpenAI Chat Completions message (format "openai-chat") or an OpenAI Responses input item (format "openai-responses"). Optional "pinned": never compacted away.',
  });

export type ApiMessage = z.infer<typeof apiMessageSchema>;

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
     * `openai-chat` (OpenAI Chat Completions messages) or `openai-responses` (OpenAI Responses input
     * items).
     */
    format: z.enum(SESSION_FORMATS).optional(),
    messages: z.array(apiMessageSchema).max(MAX_MESSAGES_PER_REQUEST).optional(),
  })
  .strict()
  .meta({
    title: 'CreateSessionRequest',
    description:
      "A new session: its id, the agent, the model's context window in tokens, its format (anthropic, the default, openai-chat or openai-responses), and its first messages (seqs 0, 1, ...), in that format.",
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
