/**
 * Recall, as data: what an agent asks of the archive of its session (search: a query in, ranked seqs
 * with a snippet out; read: a seq range in, the original messages out) and what it gets back, as zod
 * schemas. The client library (producer/recall.ts), the HTTP routes and the MCP server's tools all
 * take and give exactly these shapes, so their descriptions, limits and errors cannot drift apart.
 */
import { z } from 'zod';
import { SESSION_FORMATS } from '../contract/session-format.ts';
import { unstorableAt } from '../contract/unicode.ts';

/** Longest search query, characters. */
export const MAX_RECALL_QUERY_CHARS = 500;
/** Most hits one search returns. */
export const MAX_RECALL_HITS = 50;
/** Hits a search returns when the request does not say. */
export const DEFAULT_RECALL_HITS = 10;
/** Widest seq range one read covers (`toSeq - fromSeq + 1`). */
export const MAX_RECALL_READ_SEQS = 1_000;
/** Content bytes one read returns when the request does not say (at least one message, whatever its size). */
export const DEFAULT_RECALL_READ_BYTES = 1_048_576;
/** Most content bytes a read may be asked for. */
export const MAX_RECALL_READ_BYTES = 8_388_608;

const seqSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * Refuses text Postgres cannot compare with what it stores: a NUL character (Postgres `text` holds
 * none, and the statement would fail) or an unpaired surrogate (no UTF-8 form: the driver would send
 * U+FFFD instead, and the search would look for another text than the one asked).
 */
function refuseUnstorable(text: string, ctx: z.RefinementCtx): void {
  const bad = unstorableAt(text);
  if (bad) {
    ctx.addIssue({
      code: 'custom',
      message: `contains ${bad.what} (${bad.code}) at character ${bad.index}, which no stored message holds: remove it`,
    });
  }
}

/** What a search asks: a query (plain words, a path, a command; no operators) and how wide to look. */
export const recallSearchQuerySchema = z
  .object({
    query: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(MAX_RECALL_QUERY_CHARS)
      .superRefine(refuseUnstorable)
      .describe(
        'Words, a file path, a command or an identifier, as they appeared. Every word must occur in a message (a path also matches by its parts); an exact occurrence ranks first.',
      ),
    scope: z
      .enum(['lineage', 'session'])
      .default('lineage')
      .describe(
        'lineage (default): the archives of the session and of every session it continued from or in; session: this session only.',
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_RECALL_HITS)
      .default(DEFAULT_RECALL_HITS)
      .describe('Most hits to return.'),
  })
  .strict();

/** One archived message that matches a search. */
export const recallHitSchema = z.object({
  sessionId: z.string().describe('The session whose archive holds the message (one of the lineage).'),
  seq: seqSchema.describe('Its seq in that session: read it with fromSeq = toSeq = seq.'),
  role: z.string(),
  kind: z.enum(['message', 'tool_call', 'tool_result']),
  compactionId: z.string().describe('The compaction that archived it (the ledger row).'),
  archivedAt: z.string().describe('When it was archived, ISO 8601.'),
  score: z.number().describe('Rank, higher first: 1 more when the query occurs in it exactly.'),
  snippet: z
    .string()
    .describe(
      "Its text where the query matched (as written, else its words, a path's parts too), about 240 characters on one line, each match between « and », … where the text goes on.",
    ),
});

/** What a search finds, best first. */
export const recallSearchResultSchema = z.object({
  sessionId: z.string().describe('The session asked about.'),
  hits: z.array(recallHitSchema),
});

/** The fields of a read's request, before the checks between them ({@link withRangeChecks}). */
export const recallReadRangeSchema = z
  .object({
    fromSeq: seqSchema.describe('First seq of the range.'),
    toSeq: seqSchema.describe(`Last seq of the range (at most ${MAX_RECALL_READ_SEQS} seqs from fromSeq).`),
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_RECALL_READ_BYTES)
      .default(DEFAULT_RECALL_READ_BYTES)
      .describe(
        'Most bytes of stored content to return; the first message is returned whatever its size, and nextSeq says where to go on.',
      ),
  })
  .strict();

/**
 * `schema` (a read's fields, with any others) with the checks between `fromSeq` and `toSeq`: in
 * order, at most {@link MAX_RECALL_READ_SEQS} apart.
 */
export function withRangeChecks<T extends z.ZodType<{ fromSeq: number; toSeq: number }>>(schema: T) {
  return schema
    .refine((r) => r.toSeq >= r.fromSeq, { message: 'must not be below fromSeq', path: ['toSeq'] })
    .refine((r) => r.toSeq - r.fromSeq < MAX_RECALL_READ_SEQS, {
      message: `a read covers at most ${MAX_RECALL_READ_SEQS} seqs`,
      path: ['toSeq'],
    });
}

/** What a read asks: a seq range of one session's archive, and how many bytes of content at most. */
export const recallReadQuerySchema = withRangeChecks(recallReadRangeSchema);

/** One original message read back from the archive, its content exactly as the agent wrote it. */
export const recalledMessageSchema = z.object({
  seq: seqSchema,
  role: z.string(),
  kind: z.enum(['message', 'tool_call', 'tool_result']),
  content: z
    .unknown()
    .describe(
      "As stored: an anthropic session's message content (a string or content blocks, images and documents included); an openai-chat session's whole message.",
    ),
  compactionId: z.string(),
  archivedAt: z.string(),
  bytes: z.number().int().describe('Bytes of the stored content (its JSON text).'),
});

/** What a read gives: the originals in the range that the archive holds, by seq. */
export const recallReadResultSchema = z.object({
  sessionId: z.string(),
  format: z.enum(SESSION_FORMATS),
  messages: z.array(recalledMessageSchema),
  nextSeq: seqSchema
    .nullable()
    .describe('Where to go on when maxBytes cut the read short; null when the range was read whole.'),
});

/** A search's parameters, as parsed (defaults applied). */
export type RecallSearchQuery = z.output<typeof recallSearchQuerySchema>;
/** A search's parameters, as a caller may pass them. */
export type RecallSearchInput = z.input<typeof recallSearchQuerySchema>;
export type RecallHit = z.output<typeof recallHitSchema>;
export type RecallSearchResult = z.output<typeof recallSearchResultSchema>;
/** A read's parameters, as parsed (defaults applied). */
export type RecallReadQuery = z.output<typeof recallReadQuerySchema>;
/** A read's parameters, as a caller may pass them. */
export type RecallReadInput = z.input<typeof recallReadQuerySchema>;
export type RecalledMessage = z.output<typeof recalledMessageSchema>;
export type RecallReadResult = z.output<typeof recallReadResultSchema>;
