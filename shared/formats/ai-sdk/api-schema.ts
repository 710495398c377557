/**
 * The `ai-sdk` format in the HTTP API's OpenAPI document and JSON Schemas: a message as a request
 * body takes it, and a context as the context route answers it. Pure.
 */
import { z } from 'zod';
import { formatContextSchema } from '../api-schema.ts';
import { AI_SDK_ROLES } from './message.ts';

/**
 * A message of an `ai-sdk` session: an AI SDK provider-level prompt message (`LanguageModelV2`,
 * `V3` or `V4Message` of `@ai-sdk/provider`: `role`, `content`, `providerOptions?`), its file data
 * in the JSON form of ./encoding.ts (`{ "$bytes": <base64> }` for bytes, `{ "$url": <href> }` for a
 * URL), stored whole as given; optionally `pinned`. The HTTP API's union tells it apart by the
 * registry's words (shared/formats/registry.ts, `readsAs`); the append checks it against ./message.ts.
 */
export const aiSdkApiMessageSchema = z
  .looseObject({
    role: z.enum(AI_SDK_ROLES),
    content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
    providerOptions: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    pinned: z.boolean().optional(),
  })
  .meta({
    title: 'AiSdkMessage',
    description:
      'An AI SDK provider-level prompt message ({ role: "system" | "user" | "assistant" | "tool", content, providerOptions? }, LanguageModelV2/V3/V4Message of @ai-sdk/provider), for a session of format "ai-sdk", stored whole as given; a file\'s Uint8Array data is sent as { "$bytes": "<base64>" } and a URL as { "$url": "<href>" }. Optional "pinned": never compacted away.',
  });

/** The context of an `ai-sdk` session: the `prompt` of the next language model call. */
export const aiSdkContextSchema = formatContextSchema(
  'ai-sdk',
  'prompt',
  z
    .array(z.looseObject({ role: z.enum(AI_SDK_ROLES) }))
    .describe(
      'AI SDK prompt messages, as stored (file data as { "$bytes" } and { "$url" }: decode them before the call); the system messages first, the summary of compacted messages a user message. Every client tool call is answered by a tool-result in the tool message(s) directly after it (the newest calls may still be open); reasoning stays in its assistant message with its providerOptions.',
    ),
).meta({ title: 'AiSdkContext', description: 'The context of a session of format "ai-sdk".' });
