/**
 * Every environment variable compactor reads, for `compactor --help`. The names and defaults come
 * from the config schema itself, and the descriptions are keyed by the schema's names, so a
 * variable added to the schema without a description fails the type check, and its default can
 * never disagree with the help. test/unit/cli-environment.test.ts also greps the sources for
 * `process.env` reads that bypass the schema.
 */
import type { z } from 'zod';
import { envSchema } from '../config/config.ts';

/** A variable of the config schema. */
export type ConfigVariable = keyof typeof envSchema.shape;

/** One variable as the help lists it. */
export interface EnvironmentVariable {
  name: string;
  /** What it does, one line. */
  description: string;
  /** The default (`default 3000`), or what leaving it unset means (`unset: off`). */
  default: string;
}

interface Described {
  description: string;
  /** What leaving it unset means, when the schema has no default value. Default `unset`. */
  unset?: string;
}

const CONFIG_VARIABLES: Record<ConfigVariable, Described> = {
  DATABASE_URL: { description: 'Postgres holding sessions, messages, the archive and the ledger' },
  COMPACTOR_SCHEMA: {
    description: "Postgres schema of compactor's tables and migrations journal (created by migrate)",
  },
  COMPACTOR_HISTORY_PARTITIONS: {
    description:
      'hash partitions by tenant of messages and of archived_messages, 1 to 1024 (fixed by migrate)',
    unset: 'unset: 16 on a new install, as is on an existing one',
  },
  COMPACTOR_EMBEDDED_DIR: {
    description: 'folder of the embedded PostgreSQL of demo and dev when no database is given',
    unset: 'unset: .compactor/postgres in the current directory',
  },
  COMPACTOR_EMBEDDED_PORT: {
    description: 'port on 127.0.0.1 of the embedded PostgreSQL of demo and dev',
    unset: 'unset: a free one',
  },
  COMPACTOR_QUEUE_BACKEND: {
    description: 'where the queues and session leases live: redis, or postgres (the DATABASE_URL database)',
    unset: 'unset: redis when REDIS_URL or COMPACTOR_REDIS_CLUSTER_NODES is set, else postgres',
  },
  COMPACTOR_QUEUE_SCHEMA: {
    description: "Postgres schema of BullMQ's tables on the postgres backend (created by migrate)",
  },
  REDIS_URL: { description: 'Redis of BullMQ and the session leases (setting it picks the redis backend)' },
  COMPACTOR_REDIS_CLUSTER_NODES: {
    description: 'host:port,host:port… seed nodes of a Redis Cluster (instead of REDIS_URL)',
    unset: 'unset: REDIS_URL, one server',
  },
  COMPACTOR_QUEUE_PREFIX: {
    description: 'BullMQ key prefix (deployments sharing one Redis keep apart by it)',
    unset: 'unset: compactor; {compactor} on a cluster, where it needs a {hash tag}',
  },
  ANTHROPIC_API_KEY: {
    description: 'set: summaries by the anthropic summarizer',
    unset: 'unset: extractive summaries, or openai ones with OPENAI_API_KEY',
  },
  ANTHROPIC_BASE_URL: { description: 'another Messages API endpoint', unset: "unset: Anthropic's API" },
  COMPACTOR_ANTHROPIC_PLATFORM: {
    description:
      'where the anthropic summarizers reach Claude: anthropic, bedrock (Amazon) or vertex (Google)',
  },
  AWS_REGION: { description: 'Bedrock region (platform bedrock; credentials: the AWS SDK chain)' },
  ANTHROPIC_BEDROCK_BASE_URL: {
    description: 'another Bedrock runtime endpoint',
    unset: 'unset: bedrock-runtime.{AWS_REGION}.amazonaws.com',
  },
  CLOUD_ML_REGION: { description: 'Vertex AI region, or global (platform vertex)' },
  ANTHROPIC_VERTEX_PROJECT_ID: { description: 'Google Cloud project of Vertex AI (platform vertex)' },
  ANTHROPIC_VERTEX_BASE_URL: {
    description: 'another Vertex AI endpoint',
    unset: "unset: the region's aiplatform.googleapis.com",
  },
  COMPACTOR_VERTEX_ACCESS_TOKEN: {
    description: 'Google OAuth access token for Vertex AI',
    unset: 'unset: Application Default Credentials',
  },
  COMPACTOR_MODEL: { description: 'model of LLM summaries (on Bedrock and Vertex, the platform model id)' },
  COMPACTOR_SUMMARIZER: {
    description: 'the primary summarizer: extractive, anthropic or openai',
    unset: 'unset: anthropic with an Anthropic key, else openai with an OpenAI key, else extractive',
  },
  OPENAI_API_KEY: {
    description: 'set: the openai summarizer is available (any value for a server that checks none)',
    unset: 'unset: no openai summarizer',
  },
  OPENAI_BASE_URL: {
    description: 'an OpenAI-compatible endpoint (Azure OpenAI, vLLM, Ollama, LiteLLM, OpenRouter)',
    unset: "unset: OpenAI's API",
  },
  COMPACTOR_OPENAI_MODEL: { description: 'model of the openai summarizer' },
  COMPACTOR_OPENAI_STRUCTURED_OUTPUTS: {
    description: 'how the openai summarizer forces its answer: auto, json_schema or tool',
  },
  COMPACTOR_OPENAI_PROVIDER_NAME: {
    description: 'gen_ai.provider.name of the openai summarizer spans (azure.ai.openai for Azure)',
  },
  COMPACTOR_MODEL_PRICES: {
    description:
      'JSON of model id to { input, output, cacheRead?, cacheWrite? } in USD per million tokens: prices the table lacks',
    unset: 'unset: the built-in prices only (a model without one costs 0, known: false)',
  },
  COMPACTOR_MAX_INPUT_TOKENS: {
    description: 'input tokens of one LLM request; longer transcripts are summarized in chunks',
  },
  COMPACTOR_SWEEP_EVERY_MS: { description: 'ms between scheduled sweeps; 0 turns them off' },
  COMPACTOR_BATCH_POLL_MS: { description: 'ms between submitting and collecting message batches' },
  COMPACTOR_LEASE_TTL_MS: { description: 'ms a session lease lives unless renewed (every third of it)' },
  COMPACTOR_DB_POOL_SIZE: {
    description: 'Postgres connections of a process that compacts',
    unset: 'unset: 10',
  },
  COMPACTOR_LOCK_DURATION_MS: { description: 'ms a BullMQ job lock lasts unrenewed before the job stalls' },
  COMPACTOR_STALLED_INTERVAL_MS: { description: 'ms between a worker’s checks for stalled jobs' },
  COMPACTOR_TENANT_ACTIVE_WINDOW_MS: {
    description:
      'ms a tenant counts as active after its last event (other tenants are then held to their share)',
  },
  COMPACTOR_TENANT_MAX_ACTIVE_JOBS: {
    description:
      'jobs of one tenant running at once, across workers, while another tenant is active (has work, or sent an event lately)',
    unset: 'a quarter of the worker’s concurrency, rounded up',
  },
  COMPACTOR_WEBHOOK_TIMEOUT_MS: {
    description: 'ms a webhook delivery waits for a response before it is retried',
  },
  COMPACTOR_WEBHOOK_BACKOFF_MS: {
    description: 'ms before the first retry of a failed webhook delivery (then doubling, 8 attempts)',
  },
  COMPACTOR_WEBHOOK_ALLOWED_HOSTS: {
    description: 'host names, IPs and CIDR ranges webhooks may reach though internal (comma-separated)',
    unset: 'unset: public addresses only',
  },
  COMPACTOR_WEBHOOK_ALLOW_HTTP: { description: 'true: webhook URLs may be http:// (default https only)' },
  COMPACTOR_LOG_LEVEL: {
    description: 'fatal, error, warn, info, debug, trace or silent (JSON logs on stderr)',
  },
  COMPACTOR_METRICS_PORT: {
    description: 'worker serves /metrics, /healthz, /readyz on this port (0: any free one)',
    unset: 'unset: off',
  },
  COMPACTOR_METRICS_HOST: {
    description: 'address of the metrics server (not loopback: COMPACTOR_METRICS_TOKEN is required)',
  },
  COMPACTOR_METRICS_TOKEN: {
    description: 'bearer token of /metrics and /readyz details, 16+ characters',
    unset: 'unset: /metrics open on loopback, /readyz without details',
  },
  COMPACTOR_DASHBOARD_PORT: { description: 'port of compactor dashboard (--port overrides)' },
  COMPACTOR_DASHBOARD_HOST: { description: 'address of compactor dashboard (--host overrides)' },
  COMPACTOR_DASHBOARD_TOKEN: {
    description: 'bootstrap admin bearer token (every scope) of the dashboard and the API, 16+ characters',
  },
  COMPACTOR_DASHBOARD_USER: { description: 'dashboard admin basic-auth user (with _PASSWORD)' },
  COMPACTOR_DASHBOARD_PASSWORD: { description: 'dashboard admin basic-auth password (with _USER)' },
  COMPACTOR_DASHBOARD_TOKENS: {
    description:
      'tenantA:tokenA,tenantB:tokenB: dashboard and API access, every tenant scope (compactor key: scoped)',
  },
  COMPACTOR_API_PORT: { description: 'port of compactor api (--port overrides)' },
  COMPACTOR_API_HOST: { description: 'address of compactor api (--host overrides)' },
  COMPACTOR_API_MAX_BODY_BYTES: { description: 'largest request body compactor api reads; larger: 413' },
  COMPACTOR_API_MAX_HEAP_MB: {
    description:
      "V8 heap bound (--max-old-space-size) of the process serving compactor api, MB; 0: node's own",
  },
  COMPACTOR_LIMIT_REQUESTS_PER_SECOND: {
    description: "a tenant's API requests per second, unless its policy's limits say otherwise; more: 429",
  },
  COMPACTOR_LIMIT_BURST: { description: 'requests above that rate a tenant may send in any 10 s' },
  COMPACTOR_LIMIT_SESSION_MESSAGES: {
    description: 'live messages a session may hold; an API append past it: 413',
  },
  COMPACTOR_LIMIT_SESSION_TOKENS: {
    description:
      'live estimated tokens a session may hold, at most COMPACTOR_LIMIT_CONTEXT_TOKENS; past it: 413',
    unset: 'unset: COMPACTOR_LIMIT_CONTEXT_TOKENS',
  },
  COMPACTOR_LIMIT_CONTEXT_BYTES: {
    description: 'largest context a read returns (stored content bytes); larger: 422',
  },
  COMPACTOR_LIMIT_CONTEXT_TOKENS: {
    description:
      'largest context a read returns (estimated tokens), and so the most a session may hold; larger: 422',
  },
  COMPACTOR_LIMIT_CONTEXT_READS: {
    description: "a tenant's context reads served at once by one API process; more: 429",
  },
};

/**
 * Variables read outside the config schema: terminal settings the command line itself looks at,
 * which are not configuration of compactor.
 */
const OTHER_VARIABLES: EnvironmentVariable[] = [
  {
    name: 'COLUMNS',
    description: 'width tables fit when stdout is not a terminal (a terminal’s own width wins)',
    default: 'unset: no limit',
  },
];

/** The default a schema field gives when the variable is unset, or undefined when it has none. */
function schemaDefault(field: z.ZodType): unknown {
  const parsed = field.safeParse(undefined);
  return parsed.success ? parsed.data : undefined;
}

/** Every variable compactor reads: the config schema's in its order, then {@link OTHER_VARIABLES}. */
export function environmentVariables(): EnvironmentVariable[] {
  const fromSchema = (Object.keys(envSchema.shape) as ConfigVariable[]).map((name) => {
    const described = CONFIG_VARIABLES[name];
    const value = schemaDefault(envSchema.shape[name] as z.ZodType);
    return {
      name,
      description: described.description,
      default: value === undefined ? (described.unset ?? 'unset') : `default ${String(value)}`,
    };
  });
  return [...fromSchema, ...OTHER_VARIABLES];
}

/**
 * The help's environment section: one variable per line, `NAME  description (default …)`.
 * @returns lines without newlines.
 */
export function environmentHelp(): string[] {
  const variables = environmentVariables();
  const width = Math.max(...variables.map((v) => v.name.length));
  return variables.map((v) => `  ${v.name.padEnd(width)}  ${v.description} (${v.default})`);
}
