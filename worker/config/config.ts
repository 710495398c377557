/**
 * The one place that reads `process.env`. Parsed once with zod; a bad value stops start-up with a
 * message naming the variable. Everything else receives the typed {@link Config}.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import {
  assertClusterPrefix,
  type RedisClusterSeed,
  readClusterNodes,
} from '../../producer/redis/cluster-seeds.ts';
import type { RedisTarget } from '../../producer/redis/redis.ts';
import { ConfigError } from '../../shared/contract/errors.ts';
import { DEFAULT_LIMITS, type Limits, limitsSchema } from '../../shared/policy/limits.ts';
import {
  DEFAULT_DATABASE_URL,
  DEFAULT_QUEUE_SCHEMA,
  DEFAULT_REDIS_URL,
  QUEUE_BACKENDS,
  type QueueBackendKind,
  queueSettingsOf,
} from '../../shared/protocol/queue-backend.ts';
import { modelPricesSchema, type OperatorModelPrices } from '../../shared/summary/pricing.ts';
import { DEFAULT_HISTORY_PARTITIONS, MAX_HISTORY_PARTITIONS } from './partitions.ts';

const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL starting with ${protocols.join(' or ')}//` },
  );

/** A duration in ms between 100 ms and one hour, from its decimal text. */
const ms = (fallback: number) =>
  z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(100, 'must be at least 100 ms')
    .max(3_600_000, 'must be at most 3,600,000 ms (one hour)')
    .default(fallback);

/** A TCP port, 0 (any free port) to 65535. */
const port = () =>
  z.coerce
    .number({ message: 'must be a port number' })
    .int('must be a whole port number')
    .min(0, 'must be 0 to 65535')
    .max(65_535, 'must be 0 to 65535');

/**
 * A process-wide default of one field of a tenant's limits (shared/policy/limits.ts), from its
 * decimal text, within the bounds a policy's value has.
 */
const limitValue = (field: keyof Limits, unit: string) =>
  z.coerce.number({ message: `must be a number of ${unit}` }).pipe(limitsSchema.shape[field].unwrap());
const limit = (field: keyof Limits, unit: string) => limitValue(field, unit).default(DEFAULT_LIMITS[field]);

/** A secret: long enough not to be guessed, printable ASCII without spaces. */
const secret = () =>
  z
    .string()
    .min(16, 'must be at least 16 characters')
    .max(1_000, 'must be at most 1,000 characters')
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/**
 * `tenantA:tokenA,tenantB:tokenB` → token per tenant. Split at the last `:` of each entry (tenant
 * ids may hold `:`, tokens may not); a tenant or a token given twice is refused as ambiguous.
 */
function parseTenantTokens(text: string, ctx: z.RefinementCtx): TenantToken[] {
  const out: TenantToken[] = [];
  for (const [i, entry] of text.split(',').entries()) {
    const at = entry.trim().lastIndexOf(':');
    const tenantId = entry.trim().slice(0, Math.max(at, 0));
    const token = entry.trim().slice(at + 1);
    const problem =
      at < 1
        ? 'must be tenant:token pairs separated by commas'
        : !secret().safeParse(token).success
          ? `the token of tenant "${tenantId}" must be 16-1,000 printable ASCII characters without spaces`
          : out.some((t) => t.tenantId === tenantId)
            ? `tenant "${tenantId}" is given twice`
            : out.some((t) => t.token === token)
              ? `entry ${i + 1} reuses another tenant's token`
              : null;
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    out.push({ tenantId, token });
  }
  return out;
}

/**
 * `COMPACTOR_WEBHOOK_ALLOWED_HOSTS`: comma-separated host names, IP addresses and CIDR ranges
 * (`hooks.corp.example,10.20.0.0/16,127.0.0.1`), lower-cased; an entry that is none of them is
 * refused, naming it.
 */
function parseAllowedHosts(text: string, ctx: z.RefinementCtx): string[] {
  const out: string[] = [];
  for (const raw of text.split(',')) {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, '');
    if (entry === '') continue;
    const [address, bits, extra] = entry.split('/');
    const kind = isIP(address ?? '');
    const valid =
      bits === undefined
        ? kind !== 0 ||
          /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(entry)
        : kind !== 0 &&
          extra === undefined &&
          /^\d{1,3}$/.test(bits) &&
          Number(bits) <= (kind === 4 ? 32 : 128);
    if (!valid) {
      ctx.addIssue({
        code: 'custom',
        message: `"${raw.trim()}" is not a host name, an IP address or a CIDR range (10.0.0.0/8)`,
      });
      return z.NEVER;
    }
    out.push(entry);
  }
  return out;
}

/**
 * The model of LLM summaries when `COMPACTOR_MODEL` is unset: Claude Haiku 5.5, the current Haiku
 * (Anthropic's models overview, checked November 2026; Haiku 4.5 is still active and can be set).
 * Haiku 5.5 counts the same text as about 30% more tokens than Haiku 4.5 and is priced from
 * $0.10 / $0.50 per MTok (shared/summary/pricing.ts). test/unit/models.test.ts checks that it is
 * not on the deprecated list of the installed @anthropic-ai/sdk.
 */
export const DEFAULT_SUMMARY_MODEL = 'claude-haiku-5-5';

/** Where the anthropic summarizers reach Claude (`COMPACTOR_ANTHROPIC_PLATFORM`). */
export const ANTHROPIC_PLATFORMS = ['anthropic', 'bedrock', 'vertex'] as const;

/**
 * Where the `anthropic` and `anthropic-compaction` summarizers reach Claude: Anthropic's own API
 * (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`), Amazon Bedrock, or Google Cloud's Vertex AI, through
 * @anthropic-ai/bedrock-sdk and @anthropic-ai/vertex-sdk (docs/guide/summarizers.md, "Anthropic on
 * Bedrock and Vertex").
 * - `bedrock`: `region` (`AWS_REGION`); credentials from the AWS SDK's usual chain (the
 *   environment's `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, a profile, SSO,
 *   the instance or task role) or a Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`), both read by the
 *   SDK itself; `credentials` only from code (tests); `baseURL` (`ANTHROPIC_BEDROCK_BASE_URL`)
 *   instead of `https://bedrock-runtime.{region}.amazonaws.com`.
 * - `vertex`: `region` (`CLOUD_ML_REGION`, or `global`) and `projectId`
 *   (`ANTHROPIC_VERTEX_PROJECT_ID`); an OAuth `accessToken` (`COMPACTOR_VERTEX_ACCESS_TOKEN`), else
 *   Google's Application Default Credentials; `baseURL` (`ANTHROPIC_VERTEX_BASE_URL`) instead of the
 *   region's `aiplatform.googleapis.com` endpoint.
 */
export type AnthropicPlatformConfig =
  | { platform: 'anthropic' }
  | {
      platform: 'bedrock';
      region: string;
      baseURL?: string | undefined;
      credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
    }
  | {
      platform: 'vertex';
      region: string;
      projectId: string;
      accessToken?: string | undefined;
      baseURL?: string | undefined;
    };

/**
 * The model of the `openai` summarizer when `COMPACTOR_OPENAI_MODEL` is unset: GPT-5.4 mini, the
 * small model of the GPT-5.4 family that OpenAI's pricing page lists beside GPT-5.5 (copies of the
 * page dated April to June 2026), priced in shared/summary/pricing.ts, with Structured Outputs
 * (supported from gpt-4o-mini on, per the Structured Outputs guide). Cheap, as a summarizer should
 * be; GPT-5.6, newer, is left out until a price page lists it.
 */
export const DEFAULT_OPENAI_MODEL = 'gpt-5.4-mini';

/** The process's primary summarizer (`COMPACTOR_SUMMARIZER`). */
export const PRIMARY_SUMMARIZERS = ['extractive', 'anthropic', 'openai'] as const;
export type PrimarySummarizer = (typeof PRIMARY_SUMMARIZERS)[number];

/**
 * How the `openai` summarizer forces its answer (`COMPACTOR_OPENAI_STRUCTURED_OUTPUTS`):
 * `json_schema` (a strict `response_format`), `tool` (a forced strict function), or `auto`
 * (`json_schema`, then `tool` for a model whose server refuses `response_format`).
 */
export const OPENAI_STRUCTURED_OUTPUTS = ['auto', 'json_schema', 'tool'] as const;

/** The `openai` summarizer's settings (worker/summarizers/openai.ts). */
export interface OpenAIConfig {
  /** `OPENAI_API_KEY`; any non-empty value for a server that checks none. */
  apiKey: string;
  /** `OPENAI_BASE_URL` (ending in `/v1` for most servers); unset: OpenAI's. */
  baseURL: string | undefined;
  /** `COMPACTOR_OPENAI_MODEL`, default {@link DEFAULT_OPENAI_MODEL}. */
  model: string;
  /** `COMPACTOR_OPENAI_STRUCTURED_OUTPUTS`, default `auto`. */
  structuredOutputs: (typeof OPENAI_STRUCTURED_OUTPUTS)[number];
  /**
   * `COMPACTOR_OPENAI_PROVIDER_NAME`: the OpenTelemetry GenAI conventions' `gen_ai.provider.name`
   * of the server, default `openai`; `azure.ai.openai` for Azure OpenAI.
   */
  providerName: string;
}

/** Largest request body `compactor api` reads by default, bytes (10 MiB: messages may carry base64 images). */
export const DEFAULT_API_MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * The V8 old-space bound `compactor api` serves under by default, MB: the API's heap is mostly
 * garbage of large requests, which V8 collects lazily up to its bound (about a quarter of the
 * machine's memory without one). With it, `npm run bench:noisy`'s flood kept the API at 380-414 MB.
 */
export const DEFAULT_API_MAX_HEAP_MB = 256;

/** The environment variables compactor reads, with their rules and defaults (`compactor --help` lists them). */
export const envSchema = z.object({
  DATABASE_URL: url(['postgres:', 'postgresql:']).default(DEFAULT_DATABASE_URL),
  COMPACTOR_SCHEMA: z
    .string()
    .regex(
      /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/,
      'must be 1-63 lower-case letters, digits and _, not starting with a digit or pg_',
    )
    .default('compactor'),
  // No default here: unset, `migrate` makes the default count on a new install and accepts any
  // count on a partitioned one (worker/postgres/migrate.ts).
  COMPACTOR_HISTORY_PARTITIONS: z.coerce
    .number({ message: 'must be a number of partitions' })
    .int('must be a whole number of partitions')
    .min(1, 'must be at least 1')
    .max(MAX_HISTORY_PARTITIONS, `must be at most ${MAX_HISTORY_PARTITIONS}`)
    .optional(),
  COMPACTOR_EMBEDDED_DIR: z.string().min(1).optional(),
  COMPACTOR_EMBEDDED_PORT: port().optional(),
  // No default here: unset, the backend follows from whether a Redis is named (loadConfig).
  COMPACTOR_QUEUE_BACKEND: z
    .enum(QUEUE_BACKENDS, { message: `must be ${QUEUE_BACKENDS.join(' or ')}` })
    .optional(),
  COMPACTOR_QUEUE_SCHEMA: z
    .string()
    .regex(
      /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/,
      'must be 1-63 lower-case letters, digits and _, not starting with a digit or pg_',
    )
    .default(DEFAULT_QUEUE_SCHEMA),
  REDIS_URL: url(['redis:', 'rediss:']).default(DEFAULT_REDIS_URL),
  COMPACTOR_REDIS_CLUSTER_NODES: z
    .string()
    .transform((text, ctx) => {
      const seed = readClusterNodes(text);
      if (typeof seed !== 'string') return seed;
      ctx.addIssue({ code: 'custom', message: seed });
      return z.NEVER;
    })
    .optional(),
  // No default here: it depends on the cluster setting (loadConfig).
  COMPACTOR_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.{}-]{1,64}$/, 'must be 1-64 characters of A-Z a-z 0-9 _ . - { }')
    .optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: url(['http:', 'https:']).optional(),
  COMPACTOR_ANTHROPIC_PLATFORM: z
    .enum(ANTHROPIC_PLATFORMS, { message: `must be ${ANTHROPIC_PLATFORMS.join(', ')}` })
    .default('anthropic'),
  AWS_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as us-east-1')
    .optional(),
  ANTHROPIC_BEDROCK_BASE_URL: url(['http:', 'https:']).optional(),
  CLOUD_ML_REGION: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'must be a Google Cloud region such as us-east5, or global')
    .optional(),
  ANTHROPIC_VERTEX_PROJECT_ID: z
    .string()
    .regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'must be a Google Cloud project id (6-30 characters a-z 0-9 -)')
    .optional(),
  ANTHROPIC_VERTEX_BASE_URL: url(['http:', 'https:']).optional(),
  COMPACTOR_VERTEX_ACCESS_TOKEN: z.string().min(1).optional(),
  COMPACTOR_MODEL: z.string().min(1).default(DEFAULT_SUMMARY_MODEL),
  // No default here: unset, it follows from the API keys set (loadConfig).
  COMPACTOR_SUMMARIZER: z
    .enum(PRIMARY_SUMMARIZERS, { message: `must be ${PRIMARY_SUMMARIZERS.join(', ')}` })
    .optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: url(['http:', 'https:']).optional(),
  COMPACTOR_OPENAI_MODEL: z.string().min(1).max(200).default(DEFAULT_OPENAI_MODEL),
  COMPACTOR_OPENAI_STRUCTURED_OUTPUTS: z
    .enum(OPENAI_STRUCTURED_OUTPUTS, { message: `must be ${OPENAI_STRUCTURED_OUTPUTS.join(', ')}` })
    .default('auto'),
  COMPACTOR_OPENAI_PROVIDER_NAME: z
    .string()
    .regex(
      /^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*$/,
      'must be lower-case words joined by dots, as the GenAI conventions name providers (openai, azure.ai.openai)',
    )
    .default('openai'),
  COMPACTOR_MODEL_PRICES: z
    .string()
    .transform((text, ctx) => {
      const rows = readModelPrices(text);
      if (typeof rows !== 'string') return rows;
      ctx.addIssue({ code: 'custom', message: rows });
      return z.NEVER;
    })
    .optional(),
  COMPACTOR_MAX_INPUT_TOKENS: z.coerce
    .number({ message: 'must be a number of tokens' })
    .int('must be a whole number of tokens')
    .min(4_000, 'must be at least 4,000 tokens')
    .max(2_000_000, 'must be at most 2,000,000 tokens')
    .default(100_000),
  COMPACTOR_SWEEP_EVERY_MS: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .refine(
      (v) => v === 0 || (v >= 1_000 && v <= 7 * 24 * 3_600_000),
      'must be 0 (off) or 1,000 ms to 7 days',
    )
    .default(300_000),
  COMPACTOR_BATCH_POLL_MS: ms(60_000),
  COMPACTOR_LEASE_TTL_MS: ms(30_000),
  COMPACTOR_DB_POOL_SIZE: z.coerce
    .number({ message: 'must be a number of connections' })
    .int('must be a whole number of connections')
    .min(1, 'must be at least 1')
    .max(1_000, 'must be at most 1,000')
    .optional(),
  COMPACTOR_LOCK_DURATION_MS: ms(30_000),
  COMPACTOR_TENANT_ACTIVE_WINDOW_MS: ms(5_000),
  COMPACTOR_TENANT_MAX_ACTIVE_JOBS: z.coerce
    .number({ message: 'must be a number of jobs' })
    .int('must be a whole number of jobs')
    .min(1, 'must be at least 1')
    .max(100_000, 'must be at most 100,000')
    .optional(),
  COMPACTOR_WEBHOOK_TIMEOUT_MS: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(100, 'must be at least 100 ms')
    .max(120_000, 'must be at most 120,000 ms (two minutes)')
    .default(10_000),
  COMPACTOR_WEBHOOK_BACKOFF_MS: ms(10_000),
  COMPACTOR_WEBHOOK_ALLOWED_HOSTS: z.string().transform(parseAllowedHosts).optional(),
  COMPACTOR_WEBHOOK_ALLOW_HTTP: z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .transform((v) => v === 'true' || v === '1')
    .default(false),
  COMPACTOR_STALLED_INTERVAL_MS: ms(30_000),
  COMPACTOR_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  COMPACTOR_METRICS_PORT: port().optional(),
  COMPACTOR_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  COMPACTOR_METRICS_TOKEN: secret().optional(),
  COMPACTOR_DASHBOARD_PORT: port().default(3000),
  COMPACTOR_DASHBOARD_HOST: z.string().min(1).default('127.0.0.1'),
  COMPACTOR_DASHBOARD_TOKEN: secret().optional(),
  COMPACTOR_DASHBOARD_USER: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^:]+$/, 'must not contain ":"')
    .optional(),
  COMPACTOR_DASHBOARD_PASSWORD: secret().optional(),
  COMPACTOR_DASHBOARD_TOKENS: z.string().transform(parseTenantTokens).optional(),
  COMPACTOR_API_PORT: port().default(3100),
  COMPACTOR_API_HOST: z.string().min(1).default('127.0.0.1'),
  COMPACTOR_API_MAX_BODY_BYTES: z.coerce
    .number({ message: 'must be a number of bytes' })
    .int('must be a whole number of bytes')
    .min(1_024, 'must be at least 1,024 bytes')
    .max(1_073_741_824, 'must be at most 1,073,741,824 bytes (1 GiB)')
    .default(DEFAULT_API_MAX_BODY_BYTES),
  COMPACTOR_API_MAX_HEAP_MB: z.coerce
    .number({ message: 'must be a number of megabytes' })
    .int('must be a whole number of megabytes')
    .refine(
      (mb) => mb === 0 || (mb >= 64 && mb <= 65_536),
      'must be 0 (no bound of its own) or 64 to 65,536 MB',
    )
    .default(DEFAULT_API_MAX_HEAP_MB),
  COMPACTOR_LIMIT_REQUESTS_PER_SECOND: limit('requestsPerSecond', 'requests per second'),
  COMPACTOR_LIMIT_BURST: limit('burst', 'requests'),
  COMPACTOR_LIMIT_SESSION_MESSAGES: limit('maxSessionMessages', 'messages'),
  // Unset: COMPACTOR_LIMIT_CONTEXT_TOKENS's value (sessionTokensOf).
  COMPACTOR_LIMIT_SESSION_TOKENS: limitValue('maxSessionTokens', 'tokens').optional(),
  COMPACTOR_LIMIT_CONTEXT_BYTES: limit('maxContextBytes', 'bytes'),
  COMPACTOR_LIMIT_CONTEXT_TOKENS: limit('maxContextTokens', 'tokens'),
  COMPACTOR_LIMIT_CONTEXT_READS: limit('maxConcurrentContextReads', 'reads'),
});

/** Typed configuration of one compactor process. */
export interface Config {
  /** postgres:// URL of the database holding sessions, messages and the ledger. */
  databaseUrl: string;
  /** The Postgres schema of that database holding compactor's tables and migrations journal. */
  databaseSchema: string;
  /**
   * Hash partitions of `messages` and `archived_messages` by tenant (`COMPACTOR_HISTORY_PARTITIONS`,
   * 1 to 1024), made by the migration that partitions them; unset: {@link DEFAULT_HISTORY_PARTITIONS}
   * on a new install, and whatever an existing install has. Fixed once made: `migrate` refuses
   * another count. Optional so that a config built in code may leave it out.
   */
  historyPartitions?: number | undefined;
  /**
   * Where BullMQ's queues live (`COMPACTOR_QUEUE_BACKEND`): `redis` (REDIS_URL or the cluster), or
   * `postgres` (BullMQ's PostgreSQL backend, in schema {@link queueSchema} of the `databaseUrl`
   * database; the session leases, the tenants' fair order and the API's rate counts then live in
   * compactor's schema too). Unset in the environment: `redis` when `REDIS_URL` or
   * `COMPACTOR_REDIS_CLUSTER_NODES` is set, else `postgres` ({@link queueBackendOf}). Optional so
   * that a config built in code may leave it out (then `redis`, as before the setting existed).
   */
  queueBackend?: QueueBackendKind | undefined;
  /**
   * The Postgres schema of BullMQ's tables on the `postgres` backend (`COMPACTOR_QUEUE_SCHEMA`,
   * default `compactor_queue`; created by `compactor migrate`). Must differ from
   * {@link databaseSchema}. Optional so that a config built in code may leave it out.
   */
  queueSchema?: string | undefined;
  /**
   * The embedded PostgreSQL of `compactor demo` and `compactor dev` when no database is given
   * (worker/runtime/embedded-postgres.ts): its folder (`COMPACTOR_EMBEDDED_DIR`; unset:
   * `.compactor/postgres` of the current directory) and port on 127.0.0.1 (`COMPACTOR_EMBEDDED_PORT`;
   * unset or 0: a free one). Optional so that a config built in code may leave it out.
   */
  embeddedPostgres?: { dir: string | undefined; port: number | undefined };
  /** redis:// URL of the BullMQ Redis (unused when {@link redisCluster} is set). */
  redisUrl: string;
  /**
   * The seed nodes of a Redis Cluster (`COMPACTOR_REDIS_CLUSTER_NODES`); set, it replaces
   * `redisUrl` and the queue prefix carries a hash tag. Optional so that a config built in code
   * may leave it out (a single Redis).
   */
  redisCluster?: RedisClusterSeed | undefined;
  /**
   * BullMQ key prefix; tests and tenants of one Redis keep apart by it. Default `compactor`, and
   * `{compactor}` on a cluster, where it must hold a hash tag (producer/redis/redis.ts).
   */
  queuePrefix: string;
  /** Set: the `anthropic` summarizer is used; unset: `extractive` (unless {@link anthropicPlatform} is a cloud platform). */
  anthropicApiKey: string | undefined;
  /** Overrides the Messages API endpoint (tests point it at a local fake server). */
  anthropicBaseUrl: string | undefined;
  /**
   * Where the anthropic summarizers reach Claude (`COMPACTOR_ANTHROPIC_PLATFORM` and the platform's
   * settings, {@link AnthropicPlatformConfig}); on `bedrock` or `vertex` the LLM summarizer runs
   * without `ANTHROPIC_API_KEY`. Optional so that a config built in code may leave it out (then
   * `anthropic`).
   */
  anthropicPlatform?: AnthropicPlatformConfig | undefined;
  /**
   * The primary summarizer (`COMPACTOR_SUMMARIZER`); unset in the environment: `anthropic` with an
   * Anthropic key, else `openai` with an OpenAI key, else `extractive`. Optional so that a config
   * built in code may leave it out: then `anthropic` with an Anthropic key, else `extractive`.
   */
  summarizer?: PrimarySummarizer | undefined;
  /**
   * The `openai` summarizer's settings, when `OPENAI_API_KEY` is set; strategies may then name
   * `summarizer: 'openai'`. Optional so that a config built in code may leave it out.
   */
  openai?: OpenAIConfig | undefined;
  /**
   * The operator's model prices (`COMPACTOR_MODEL_PRICES`), USD per million tokens, added to the
   * built-in table for the ledger's cost, budgets and payback (shared/summary/pricing.ts).
   */
  modelPrices?: OperatorModelPrices | undefined;
  /** Model id for LLM summaries (on Bedrock and Vertex, the platform's id of the model). */
  model: string;
  /** Most input tokens of one LLM summary request; longer transcripts are summarized in chunks. */
  maxInputTokens: number;
  /** Cadence of the scheduled sweep, ms; 0 turns the scheduler off. */
  sweepEveryMs: number;
  /** How often message batches are submitted and collected, ms (only with an Anthropic key). */
  batchPollMs: number;
  /** Per-session lease TTL, ms (renewed every third of it while held). */
  leaseTtlMs: number;
  /**
   * Postgres pool size of a process that runs compactions (`COMPACTOR_DB_POOL_SIZE`); unset: 10,
   * whatever the worker's concurrency (`DEFAULT_POOL_SIZE` in worker/runtime/services.ts says why).
   * Every process's pool counts against Postgres's `max_connections` (100 by default). Optional so
   * that a config built in code may leave it out.
   */
  dbPoolSize?: number | undefined;
  /** BullMQ job lock duration, ms: a job whose lock is not renewed for this long is stalled. */
  lockDurationMs: number;
  /**
   * Compaction jobs of one tenant that may run at once, across all workers, while another tenant
   * is active (`COMPACTOR_TENANT_MAX_ACTIVE_JOBS`; worker/redis/tenant-slots.ts). Unset: a quarter
   * of the worker's concurrency, rounded up. Optional so that a config built in code may leave it out.
   */
  tenantMaxActiveJobs?: number | undefined;
  /**
   * How long a tenant counts as active after it last sent an event, ms
   * (`COMPACTOR_TENANT_ACTIVE_WINDOW_MS`; worker/redis/tenant-slots.ts). Optional so that a config
   * built in code may leave it out (then 5,000).
   */
  tenantActiveWindowMs?: number | undefined;
  /** How often a worker looks for stalled jobs, ms. */
  stalledIntervalMs: number;
  /** How long one webhook delivery waits for the receiver's response, ms; then it is retried. */
  webhookTimeoutMs: number;
  /**
   * First delay before a failed webhook delivery is retried, ms; each retry waits twice as long
   * as the one before (BullMQ's exponential backoff), over 8 attempts in all.
   */
  webhookBackoffMs: number;
  /**
   * Where webhooks may point beyond public https receivers (`COMPACTOR_WEBHOOK_ALLOWED_HOSTS`,
   * `COMPACTOR_WEBHOOK_ALLOW_HTTP`); see worker/outbound/webhook-targets.ts. Optional so that a
   * config built in code may leave it out (then: public https only).
   */
  webhookTargets?: { allowedHosts: string[]; allowHttp: boolean } | undefined;
  logLevel: z.infer<typeof envSchema>['COMPACTOR_LOG_LEVEL'];
  /**
   * The worker's /metrics, /healthz, /readyz server; port null: off. On loopback by default; bound
   * elsewhere it needs `token` (`COMPACTOR_METRICS_TOKEN`), the bearer token /metrics and /readyz's
   * details then ask for (worker/http/metrics-server.ts).
   */
  metrics: { port: number | null; host: string; token?: string | undefined };
  /** `compactor dashboard`: where it listens and who may use it. */
  dashboard: DashboardConfig;
  /**
   * `compactor api`: where it listens and the largest request body it reads. Its credentials are
   * the dashboard's ({@link DashboardConfig}). Optional so that a config built in code may leave
   * it out (then the defaults apply).
   */
  api?: ApiConfig;
}

/** Where `compactor api` listens, its request size limit, and its tenants' default limits. */
export interface ApiConfig {
  port: number;
  host: string;
  /** Largest request body, bytes; a larger one is answered 413. */
  maxBodyBytes: number;
  /**
   * V8's old-space bound of the process serving `compactor api`, MB (`COMPACTOR_API_MAX_HEAP_MB`;
   * worker/cli/heap.ts starts that process); 0: none of compactor's own. Optional so that a config
   * built in code may leave it out (then {@link DEFAULT_API_MAX_HEAP_MB}).
   */
  maxHeapMb?: number;
  /**
   * The limits of a tenant whose policy sets none (`COMPACTOR_LIMIT_*`; each field a tenant policy's
   * `limits` sets wins). Optional so that a config built in code may leave it out
   * (then `DEFAULT_LIMITS` of shared/policy/limits.ts).
   */
  limits?: Limits;
}

/** One tenant's bearer token for the dashboard's ledger API and pages. */
export interface TenantToken {
  tenantId: string;
  token: string;
}

/** Where the dashboard listens and its credentials (all secrets; never log them). */
export interface DashboardConfig {
  port: number;
  host: string;
  /** Admin bearer token: Bull Board, /metrics, and every tenant's sessions. */
  adminToken: string | undefined;
  /** Admin basic-auth credentials (both or neither), for browsers. */
  adminUser: string | undefined;
  adminPassword: string | undefined;
  /** Tenant-scoped credentials: a bearer token, or basic auth with the tenant id as user. */
  tenantTokens: TenantToken[];
}

export { ConfigError };

/**
 * The queue backend of an environment: the rule both sides of a queue share
 * ({@link queueSettingsOf}, shared/protocol/queue-backend.ts): `COMPACTOR_QUEUE_BACKEND` when set;
 * else `redis` when the environment names a Redis (`REDIS_URL` or `COMPACTOR_REDIS_CLUSTER_NODES`),
 * else `postgres`. A deployment that relied on the implicit `redis://127.0.0.1:6379` must say so
 * (CHANGELOG, upgrade note).
 */
export function queueBackendOf(env: {
  COMPACTOR_QUEUE_BACKEND?: QueueBackendKind | undefined;
  REDIS_URL?: string | undefined;
  COMPACTOR_REDIS_CLUSTER_NODES?: string | undefined;
}): QueueBackendKind {
  return queueSettingsOf(env).backend;
}

/** The queue backend of a config: `redis` unless it says `postgres`. */
export function queueBackendOfConfig(config: Pick<Config, 'queueBackend'>): QueueBackendKind {
  return config.queueBackend ?? 'redis';
}

/** The Redis a config names: its cluster when it has one, else its URL. */
export function redisTargetOf(config: Pick<Config, 'redisUrl' | 'redisCluster'>): RedisTarget {
  return config.redisCluster ? { cluster: config.redisCluster } : { url: config.redisUrl };
}

/**
 * The platform settings of a parsed environment. On `bedrock` and `vertex` the model must be named
 * (`COMPACTOR_MODEL`: the default is Anthropic's id, which neither platform serves), the region
 * (and on Vertex the project) must be set, and `ANTHROPIC_API_KEY` must not be: it would be unused.
 * @throws {ConfigError} naming the variable to set or unset.
 */
function anthropicPlatformOf(
  e: z.infer<typeof envSchema>,
  present: Record<string, string | undefined>,
): AnthropicPlatformConfig {
  const platform = e.COMPACTOR_ANTHROPIC_PLATFORM;
  if (platform === 'anthropic') return { platform };
  const problem = (what: string) =>
    new ConfigError(`invalid environment: COMPACTOR_ANTHROPIC_PLATFORM is ${platform}: ${what}`);
  if (e.ANTHROPIC_API_KEY !== undefined)
    throw problem('unset ANTHROPIC_API_KEY (the platform authenticates with its own credentials)');
  if (present.COMPACTOR_MODEL === undefined) {
    const example =
      platform === 'bedrock' ? 'anthropic.claude-haiku-4-5-20251001-v1:0' : 'claude-haiku-4-5@20251001';
    throw problem(`set COMPACTOR_MODEL to the platform's model id (e.g. ${example})`);
  }
  if (platform === 'bedrock') {
    if (!e.AWS_REGION) throw problem('set AWS_REGION (the Bedrock region, e.g. us-east-1)');
    return { platform, region: e.AWS_REGION, baseURL: e.ANTHROPIC_BEDROCK_BASE_URL };
  }
  if (!e.CLOUD_ML_REGION)
    throw problem('set CLOUD_ML_REGION (the Vertex AI region, e.g. us-east5, or global)');
  if (!e.ANTHROPIC_VERTEX_PROJECT_ID)
    throw problem('set ANTHROPIC_VERTEX_PROJECT_ID (the Google Cloud project)');
  return {
    platform,
    region: e.CLOUD_ML_REGION,
    projectId: e.ANTHROPIC_VERTEX_PROJECT_ID,
    accessToken: e.COMPACTOR_VERTEX_ACCESS_TOKEN,
    baseURL: e.ANTHROPIC_VERTEX_BASE_URL,
  };
}

/**
 * The primary summarizer the environment names or implies: `COMPACTOR_SUMMARIZER`, else `anthropic`
 * with `ANTHROPIC_API_KEY`, `openai` with `OPENAI_API_KEY`, `extractive` with neither.
 * @throws {ConfigError} when `COMPACTOR_SUMMARIZER` names an LLM summarizer whose key is unset.
 */
function primarySummarizerOf(e: {
  COMPACTOR_SUMMARIZER?: PrimarySummarizer | undefined;
  ANTHROPIC_API_KEY?: string | undefined;
  OPENAI_API_KEY?: string | undefined;
}): PrimarySummarizer {
  const named = e.COMPACTOR_SUMMARIZER;
  if (named === 'anthropic' && !e.ANTHROPIC_API_KEY) {
    throw new ConfigError(
      'invalid environment: COMPACTOR_SUMMARIZER is anthropic and ANTHROPIC_API_KEY is unset; set the key, or choose another summarizer',
    );
  }
  if (named === 'openai' && !e.OPENAI_API_KEY) {
    throw new ConfigError(
      'invalid environment: COMPACTOR_SUMMARIZER is openai and OPENAI_API_KEY is unset; set the key ' +
        '(any non-empty value for a server that checks none, such as a local vLLM or Ollama)',
    );
  }
  return named ?? (e.ANTHROPIC_API_KEY ? 'anthropic' : e.OPENAI_API_KEY ? 'openai' : 'extractive');
}

/**
 * Parses the environment (default: `process.env`). Empty strings count as unset.
 * @throws {ConfigError} naming each bad variable and what it must be.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  if ((e.COMPACTOR_DASHBOARD_USER === undefined) !== (e.COMPACTOR_DASHBOARD_PASSWORD === undefined)) {
    throw new ConfigError(
      'invalid environment: COMPACTOR_DASHBOARD_USER and COMPACTOR_DASHBOARD_PASSWORD go together; set both or neither',
    );
  }
  const redisCluster = e.COMPACTOR_REDIS_CLUSTER_NODES;
  if (redisCluster && present.REDIS_URL !== undefined) {
    throw new ConfigError(
      'invalid environment: REDIS_URL and COMPACTOR_REDIS_CLUSTER_NODES are both set; a Redis Cluster is ' +
        'reached through its seed nodes alone: unset REDIS_URL (credentials go in the nodes, as redis://user:password@host:port)',
    );
  }
  // The queue's place by the rule a producer without queue options follows too, on the values
  // checked above (the environment as given: unset and empty alike).
  const queue = queueSettingsOf(present);
  const queuePrefix = queue.prefix;
  if (redisCluster) {
    try {
      assertClusterPrefix(queuePrefix, 'COMPACTOR_QUEUE_PREFIX');
    } catch (error) {
      throw new ConfigError(
        `invalid environment: ${(error as Error).message} (COMPACTOR_REDIS_CLUSTER_NODES is set)`,
      );
    }
  }
  const queueBackend = queue.backend;
  if (queueBackend === 'postgres' && e.COMPACTOR_QUEUE_SCHEMA === e.COMPACTOR_SCHEMA) {
    throw new ConfigError(
      `invalid environment: COMPACTOR_QUEUE_SCHEMA and COMPACTOR_SCHEMA are both "${e.COMPACTOR_SCHEMA}"; ` +
        "BullMQ's tables need a schema of their own: give COMPACTOR_QUEUE_SCHEMA another name",
    );
  }
  const summarizer = primarySummarizerOf(e);
  const tenantTokens = e.COMPACTOR_DASHBOARD_TOKENS ?? [];
  const adminSecrets = [e.COMPACTOR_DASHBOARD_TOKEN, e.COMPACTOR_DASHBOARD_PASSWORD];
  if (tenantTokens.some((t) => adminSecrets.includes(t.token))) {
    throw new ConfigError(
      'invalid environment: COMPACTOR_DASHBOARD_TOKENS: a tenant token equals an admin secret',
    );
  }
  return {
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.COMPACTOR_SCHEMA,
    historyPartitions: e.COMPACTOR_HISTORY_PARTITIONS,
    queueBackend,
    queueSchema: e.COMPACTOR_QUEUE_SCHEMA,
    embeddedPostgres: {
      dir: e.COMPACTOR_EMBEDDED_DIR,
      port: e.COMPACTOR_EMBEDDED_PORT === 0 ? undefined : e.COMPACTOR_EMBEDDED_PORT,
    },
    redisUrl: e.REDIS_URL,
    redisCluster,
    queuePrefix,
    anthropicApiKey: e.ANTHROPIC_API_KEY,
    anthropicBaseUrl: e.ANTHROPIC_BASE_URL,
    anthropicPlatform: anthropicPlatformOf(e, present),
    summarizer,
    openai: e.OPENAI_API_KEY
      ? {
          apiKey: e.OPENAI_API_KEY,
          baseURL: e.OPENAI_BASE_URL,
          model: e.COMPACTOR_OPENAI_MODEL,
          structuredOutputs: e.COMPACTOR_OPENAI_STRUCTURED_OUTPUTS,
          providerName: e.COMPACTOR_OPENAI_PROVIDER_NAME,
        }
      : undefined,
    model: e.COMPACTOR_MODEL,
    maxInputTokens: e.COMPACTOR_MAX_INPUT_TOKENS,
    modelPrices: e.COMPACTOR_MODEL_PRICES,
    sweepEveryMs: e.COMPACTOR_SWEEP_EVERY_MS,
    batchPollMs: e.COMPACTOR_BATCH_POLL_MS,
    leaseTtlMs: e.COMPACTOR_LEASE_TTL_MS,
    dbPoolSize: e.COMPACTOR_DB_POOL_SIZE,
    lockDurationMs: e.COMPACTOR_LOCK_DURATION_MS,
    tenantMaxActiveJobs: e.COMPACTOR_TENANT_MAX_ACTIVE_JOBS,
    tenantActiveWindowMs: e.COMPACTOR_TENANT_ACTIVE_WINDOW_MS,
    stalledIntervalMs: e.COMPACTOR_STALLED_INTERVAL_MS,
    webhookTimeoutMs: e.COMPACTOR_WEBHOOK_TIMEOUT_MS,
    webhookBackoffMs: e.COMPACTOR_WEBHOOK_BACKOFF_MS,
    webhookTargets: {
      allowedHosts: e.COMPACTOR_WEBHOOK_ALLOWED_HOSTS ?? [],
      allowHttp: e.COMPACTOR_WEBHOOK_ALLOW_HTTP,
    },
    logLevel: e.COMPACTOR_LOG_LEVEL,
    metrics: {
      port: e.COMPACTOR_METRICS_PORT ?? null,
      host: e.COMPACTOR_METRICS_HOST,
      token: e.COMPACTOR_METRICS_TOKEN,
    },
    dashboard: {
      port: e.COMPACTOR_DASHBOARD_PORT,
      host: e.COMPACTOR_DASHBOARD_HOST,
      adminToken: e.COMPACTOR_DASHBOARD_TOKEN,
      adminUser: e.COMPACTOR_DASHBOARD_USER,
      adminPassword: e.COMPACTOR_DASHBOARD_PASSWORD,
      tenantTokens,
    },
    api: {
      port: e.COMPACTOR_API_PORT,
      host: e.COMPACTOR_API_HOST,
      maxBodyBytes: e.COMPACTOR_API_MAX_BODY_BYTES,
      maxHeapMb: e.COMPACTOR_API_MAX_HEAP_MB,
      limits: {
        requestsPerSecond: e.COMPACTOR_LIMIT_REQUESTS_PER_SECOND,
        burst: e.COMPACTOR_LIMIT_BURST,
        maxSessionMessages: e.COMPACTOR_LIMIT_SESSION_MESSAGES,
        maxSessionTokens: sessionTokensOf(e),
        maxContextBytes: e.COMPACTOR_LIMIT_CONTEXT_BYTES,
        maxContextTokens: e.COMPACTOR_LIMIT_CONTEXT_TOKENS,
        maxConcurrentContextReads: e.COMPACTOR_LIMIT_CONTEXT_READS,
      },
    },
  };
}

/**
 * The default `maxSessionTokens`: `COMPACTOR_LIMIT_SESSION_TOKENS`, else the read limit
 * `COMPACTOR_LIMIT_CONTEXT_TOKENS` (a session may hold what a read returns, no more:
 * shared/policy/limits.ts).
 * @throws {ConfigError} naming both when the session limit is above the read limit.
 */
function sessionTokensOf(e: {
  COMPACTOR_LIMIT_SESSION_TOKENS?: number | undefined;
  COMPACTOR_LIMIT_CONTEXT_TOKENS: number;
}): number {
  const session = e.COMPACTOR_LIMIT_SESSION_TOKENS;
  const context = e.COMPACTOR_LIMIT_CONTEXT_TOKENS;
  if (session === undefined) return context;
  if (session > context) {
    throw new ConfigError(
      `invalid environment: COMPACTOR_LIMIT_SESSION_TOKENS (${session}) is above COMPACTOR_LIMIT_CONTEXT_TOKENS ` +
        `(${context}): a session larger than the largest context a read returns could never be read; ` +
        'lower the first, raise the second, or unset the first (it then follows the second)',
    );
  }
  return session;
}

/**
 * `COMPACTOR_MODEL_PRICES` read: a JSON object of model id → `{ input, output, cacheRead?,
 * cacheWrite? }` in USD per million tokens, e.g. `{"my-vllm-model": {"input": 0.2, "output": 0.6}}`.
 * @returns the rows, or a sentence naming what is wrong (the field, for a bad row).
 */
function readModelPrices(text: string): OperatorModelPrices | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'must be a JSON object of model id to { input, output, cacheRead?, cacheWrite? } (USD per million tokens)';
  }
  const parsed = modelPricesSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.map(String).join('.') ?? '';
  return `${where ? `${where}: ` : ''}${issue?.message ?? 'invalid'} (USD per million tokens)`;
}
