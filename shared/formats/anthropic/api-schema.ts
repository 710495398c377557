/**
 * The `anthropic` format in the HTTP API's OpenAPI document and JSON Schemas: a message as a
 * request body takes it, and a context as the context route answers it. Pure.
 */
import { z } from 'zod';
import { contextFields, contextVersionField } from '../api-schema.ts';

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

/** 200 of the context route: the next request's `system` and `messages`. */
export const anthropicContextSchema = z
  .object({
    system: z
      .array(contentBlockSchema)
      .optional()
      .describe(
        "The Messages API's system parameter (text blocks); absent when the session has no system text.",
      ),
    messages: z
      .array(z.object({ role: z.enum(['user', 'assistant', 'system']), content: z.unknown() }))
      .describe("The Messages API's messages parameter, as it is."),
    ...contextFields('system and messages'),
    betas: z
      .array(z.string())
      .describe('anthropic-beta values the request needs (compact-2026-09-04 with a compaction block).'),
    version: contextVersionField(),
  })
  .meta({ title: 'AnthropicContext', description: 'The context of a session of format "anthropic".' });
