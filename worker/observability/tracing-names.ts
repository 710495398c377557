/**
 * The attribute names of compactor's spans (worker/observability/tracing.ts).
 *
 * {@link GEN_AI}: the OpenTelemetry semantic conventions v1.41.0 (GenAI client spans, status
 * "development"), named as `@opentelemetry/semantic-conventions` 1.45 exports them from its
 * `incubating` entry point, which asks instrumentations to copy the names rather than import them.
 * test/unit/tracing-names.test.ts checks each against that package.
 *
 * {@link COMPACTOR}: compactor's own attributes, in its `compactor.*` namespace.
 */

/** GenAI and general semantic-convention attribute names. */
export const GEN_AI = {
  OPERATION_NAME: 'gen_ai.operation.name',
  PROVIDER_NAME: 'gen_ai.provider.name',
  CONVERSATION_ID: 'gen_ai.conversation.id',
  REQUEST_MODEL: 'gen_ai.request.model',
  REQUEST_MAX_TOKENS: 'gen_ai.request.max_tokens',
  RESPONSE_MODEL: 'gen_ai.response.model',
  RESPONSE_ID: 'gen_ai.response.id',
  RESPONSE_FINISH_REASONS: 'gen_ai.response.finish_reasons',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  USAGE_CACHE_READ_INPUT_TOKENS: 'gen_ai.usage.cache_read.input_tokens',
  USAGE_CACHE_CREATION_INPUT_TOKENS: 'gen_ai.usage.cache_creation.input_tokens',
  SERVER_ADDRESS: 'server.address',
  SERVER_PORT: 'server.port',
  ERROR_TYPE: 'error.type',
} as const;

/** compactor's attribute names. */
export const COMPACTOR = {
  TENANT_ID: 'compactor.tenant.id',
  SESSION_ID: 'compactor.session.id',
  /** The ledger row's id (`compactions.id`) the job left. */
  COMPACTION_ID: 'compactor.compaction.id',
  /** `applied`, `skipped`, `failed`, `duplicate`, or `batched` (queued for a message batch). */
  COMPACTION_STATUS: 'compactor.compaction.status',
  STRATEGY: 'compactor.strategy',
  SUMMARIZER: 'compactor.summarizer',
  TRIGGER: 'compactor.trigger',
  EVENT_ID: 'compactor.event.id',
  JOB_ID: 'compactor.job.id',
  JOB_ATTEMPT: 'compactor.job.attempt',
  /** True when the attempt ended by putting the job back (the session's lease busy, the tenant at its share). */
  JOB_RESCHEDULED: 'compactor.job.rescheduled',
  MESSAGES_BEFORE: 'compactor.messages.before',
  MESSAGES_AFTER: 'compactor.messages.after',
  TOKENS_BEFORE: 'compactor.tokens.before',
  TOKENS_AFTER: 'compactor.tokens.after',
  /** The ledger row's `cost_usd`. */
  COST_USD: 'compactor.cost_usd',
  STAGE: 'compactor.stage',
  STAGE_DURATION_MS: 'compactor.stage.duration_ms',
  FIDELITY_SCORE: 'compactor.fidelity.score',
  BUDGET_ACTION: 'compactor.budget.action',
  BUDGET_SCOPE: 'compactor.budget.scope',
  BUDGET_PERIOD: 'compactor.budget.period',
} as const;
