/**
 * What every format's context answer has in the HTTP API's OpenAPI document and JSON Schemas, beside
 * its request's fields (`messages`, `input`, `prompt`, …): the estimated tokens, the live session
 * read, the notices and the compaction version (`loadContext` returns them for every format). Each
 * format's `api-schema.ts` builds its context schema from these. Each call makes new schema
 * objects, so a document that holds several formats inlines each where it stands. Pure.
 */
import { z } from 'zod';

/**
 * The fields of a context answer that follow its request's: `tokens`, `sessionId` and `notices`,
 * in that order (a format's own fields, such as Anthropic's `betas`, may come next), then
 * {@link contextVersionField}'s `version` last.
 * @param counted what the tokens estimate counts, as the description names it (`messages`).
 */
export function contextFields(counted: string) {
  return {
    tokens: z.number().int().describe(`Estimated input tokens of ${counted}.`),
    sessionId: z.string().describe('The live session read: where to append next.'),
    notices: z.array(z.object({ type: z.string(), seq: z.number().int(), message: z.string() })),
  };
}

/** The `version` field of a context answer, its last. */
export function contextVersionField() {
  return z
    .number()
    .int()
    .describe("The live session's compaction version: send it as contextVersion with the model's reply.");
}

/**
 * The context answer of a format whose request is one field (`messages`, `input`, `prompt`): its
 * `format`, that field, {@link contextFields} counting it, and `version`. The caller adds `meta`.
 */
export function formatContextSchema<Name extends string, Field extends string, Schema extends z.ZodType>(
  format: Name,
  field: Field,
  schema: Schema,
) {
  return z.object({
    format: z.literal(format),
    ...({ [field]: schema } as Record<Field, Schema>),
    ...contextFields(field),
    version: contextVersionField(),
  });
}
