/**
 * The HTTP API's parameters and responses as zod schemas. Parameters are parsed with them; the
 * responses are documented by them (the OpenAPI document is generated from this file and from
 * shared/protocol/api.ts). Pure: no I/O.
 */
import { z } from 'zod';
import { SESSION_FORMATS } from '../../../shared/contract/session-format.ts';
import { SESSION_FORMAT_RULES } from '../../../shared/formats/registry.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../../../shared/protocol/api.ts';
import { idSchema } from '../../../shared/protocol/events.ts';
import { strategySchema } from '../../../shared/strategies/index.ts';

/** Longest `wait` of `POST /v1/sessions/{id}/compact`, ms. */
export const MAX_COMPACT_WAIT_MS = 60_000;

/** The header an admin credential names the tenant with. */
export const TENANT_HEADER = 'Compactor-Tenant';
/** The header of an idempotent append. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Set to `true` on the answer to a repeated idempotent append. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** `{id}` in a path: a session id. */
export const sessionPathSchema = z.object({ id: idSchema.describe('The session id.') });

/** Headers every tenant-scoped route reads. */
export const tenantHeaderSchema = z.object({
  [TENANT_HEADER]: idSchema
    .optional()
    .describe(
      'The tenant to act on. Required with the admin credential; a tenant credential may send its own tenant or nothing.',
    ),
});

/** Headers of the append. */
export const appendHeaderSchema = tenantHeaderSchema.extend({
  [IDEMPOTENCY_HEADER]: z
    .string()
    .min(1)
    .max(MAX_IDEMPOTENCY_KEY_LENGTH)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .optional()
    .describe(
      'Makes the append safe to retry: a request repeating a key appends nothing and gets the first answer again (for 24 hours at least); the same key with another session or body is refused with 422. A UUID per request is best.',
    ),
});

/** Query of the context route. */
export const contextQuerySchema = z.object({
  thinking: z
    .enum(['keep', 'strip'])
    .optional()
    .describe('keep (default): thinking blocks whose signature still holds come back; strip: none.'),
  compactionBlock: z
    .enum(['native', 'text'])
    .optional()
    .describe(
      "native (default): an anthropic-compaction summary is sent as Anthropic's compaction block (send betas); text: as compactor's readable checkpoint.",
    ),
});

/** Body of the tools route: the tools the agent sends with the session's requests, or null. */
export const sessionToolsSchema = z
  .object({
    tools: z
      .array(z.record(z.string(), z.unknown()))
      .max(1_000)
      .nullable()
      .describe(
        'Messages API tool definitions exactly as the agent sends them (each with a unique name), or null to clear them.',
      ),
  })
  .strict()
  .meta({ title: 'SessionTools' });

/** Query of the compact route. */
export const compactQuerySchema = z.object({
  wait: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(0, 'must be 0 or more milliseconds')
    .max(MAX_COMPACT_WAIT_MS, `must be at most ${MAX_COMPACT_WAIT_MS} ms`)
    .optional()
    .describe(
      `How long to wait for the compaction, ms (at most ${MAX_COMPACT_WAIT_MS}); absent or 0: enqueue and answer 202 at once.`,
    ),
});

/** Body of the compact route (optional). */
export const compactBodySchema = z
  .object({ strategy: strategySchema.optional().describe('Overrides the policy for this compaction.') })
  .strict()
  .meta({ title: 'CompactRequest' });

/** 201 of `POST /v1/sessions`. */
export const sessionCreatedSchema = z
  .object({
    sessionId: z.string(),
    messageCount: z.number().int(),
    tokenCount: z.number().int().describe('Estimated tokens of the messages stored.'),
  })
  .meta({ title: 'SessionCreated' });

/** 200 of an append (the same on a replay). */
export const appendResultSchema = z
  .object({
    sessionId: z
      .string()
      .describe(
        'Where the messages went: the session named, or the live session it continued in after a newSession compaction.',
      ),
    seqs: z.array(z.number().int()).describe('The seqs given to the messages, in order.'),
  })
  .meta({ title: 'AppendResult' });

/** 202 of the event. */
export const enqueuedSchema = z
  .object({
    jobId: z
      .string()
      .describe(
        'The BullMQ job id: `<tenant>~<eventId>` (the tenant URI-encoded), or the job the event was coalesced into.',
      ),
    coalesced: z.boolean().describe('True when the event joined a job of the same session that was waiting.'),
  })
  .meta({ title: 'Enqueued' });

/** The body of the context route, in the session's format. */
export const loadedContextSchema = z
  .union(SESSION_FORMATS.map((name) => SESSION_FORMAT_RULES[name].apiSchemas.context))
  .meta({
    title: 'Context',
    description:
      'The next request in the session\'s format: system and messages for the Messages API (anthropic), format "openai-chat" and messages for Chat Completions, or format "openai-responses" and input for the Responses API.',
  });

/** A compaction job's result (BullMQ's return value). */
const jobResultSchema = z.object({
  status: z.string().describe('applied, skipped, failed, duplicate or batched.'),
  ledgerStatus: z.string(),
  compactionId: z.string().nullable(),
  messagesBefore: z.number().int().nullable(),
  messagesAfter: z.number().int().nullable(),
  reason: z.string().nullable(),
});

/** 200 and 202 of the compact route. */
export const compactOutcomeSchema = z
  .discriminatedUnion('state', [
    z.object({
      state: z.literal('settled'),
      jobId: z.string(),
      result: jobResultSchema,
      compaction: z
        .record(z.string(), z.unknown())
        .nullable()
        .describe('The ledger row the job wrote (null while a batch summary is pending).'),
    }),
    z.object({ state: z.literal('failed'), jobId: z.string(), error: z.string() }),
    z.object({
      state: z.literal('running'),
      jobId: z.string().describe('The job goes on: Bull Board and the ledger will show its outcome.'),
    }),
  ])
  .meta({ title: 'CompactOutcome' });

/** 200 of the delete route. */
export const purgedSchema = z
  .object({
    sessions: z.array(z.string()).describe('The sessions deleted: the lineage of the one named.'),
    messages: z.number().int(),
    archivedMessages: z.number().int(),
    compactions: z.number().int(),
    summaryBatches: z.number().int(),
    appendRequests: z.number().int(),
    webhookDeliveries: z.number().int(),
    claudeCodeEntries: z
      .number()
      .int()
      .describe("Transcript lines the Claude Agent SDK's session store kept of these sessions."),
  })
  .meta({ title: 'Purged' });
