/**
 * The `openai-chat` format in the HTTP API's OpenAPI document and JSON Schemas: a message as a
 * request body takes it, and a context as the context route answers it. Pure.
 */
import { z } from 'zod';
import { formatContextSchema } from '../api-schema.ts';
import { CHAT_ROLES } from './message.ts';

/**
 * A message of an `openai-chat` session: a Chat Completions message as the `openai` SDK types it
 * (`role` system, developer, user, assistant or tool, and that role's fields), stored whole as
 * given; optionally `pinned`. The HTTP API's union tells it apart by the registry's words
 * (shared/formats/registry.ts, `readsAs`); the append checks it against ./message.ts.
 */
export const chatApiMessageSchema = z
  .looseObject({
    role: z.enum(CHAT_ROLES),
    content: z.unknown().optional(),
    tool_calls: z.array(z.looseObject({ id: z.string(), type: z.string() })).optional(),
    tool_call_id: z.string().optional(),
    pinned: z.boolean().optional(),
  })
  .meta({
    title: 'ChatCompletionsMessage',
    description:
      'An OpenAI Chat Completions message ({ role, content, tool_calls?, tool_call_id?, … }), for a session of format "openai-chat", stored whole as given. Optional "pinned": never compacted away.',
  });

/** The context of an `openai-chat` session: `messages` for `client.chat.completions.create`. */
export const chatContextSchema = formatContextSchema(
  'openai-chat',
  'messages',
  z
    .array(z.looseObject({ role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']) }))
    .describe(
      "Chat Completions messages, as stored; the summary of compacted messages is a user message. Every assistant message with tool_calls is directly followed by a tool message per call (the newest one's calls may still be open).",
    ),
).meta({
  title: 'ChatCompletionsContext',
  description: 'The context of a session of format "openai-chat".',
});
