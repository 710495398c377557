/**
 * The `openai-responses` format in the HTTP API's OpenAPI document and JSON Schemas: an item as a
 * request body takes it, and a context as the context route answers it. Pure.
 */
import { z } from 'zod';
import { formatContextSchema } from '../api-schema.ts';

/**
 * An item of an `openai-responses` session: a Responses API input item as the `openai` SDK types it
 * (`ResponseInputItem`: a `message`, `function_call`, `function_call_output`, `reasoning`,
 * `compaction`, …), stored whole as given; optionally `pinned`. The HTTP API's union tells it
 * apart by the registry's words (shared/formats/registry.ts, `readsAs`); the append checks it
 * against ./item.ts.
 */
export const responsesApiItemSchema = z
  .looseObject({ type: z.string().optional(), pinned: z.boolean().optional() })
  .meta({
    title: 'ResponsesInputItem',
    description:
      'An OpenAI Responses API input item ({ type: "message" | "function_call" | "function_call_output" | "reasoning" | "compaction" | …, … }), for a session of format "openai-responses", stored whole as given. Optional "pinned": never compacted away.',
  });

/** The context of an `openai-responses` session: `input` for `client.responses.create`. */
export const responsesContextSchema = formatContextSchema(
  'openai-responses',
  'input',
  z
    .array(z.looseObject({ type: z.string().optional() }))
    .describe(
      'Responses input items, as stored; the summary of compacted items is a user message. Every call is answered by its output (the newest calls may still be open); reasoning only directly before the item it produced, with its encrypted_content; nothing before the newest compaction item but the leading system/developer messages. For responses.create with store: false.',
    ),
).meta({
  title: 'ResponsesContext',
  description: 'The context of a session of format "openai-responses".',
});
