/**
 * The Messages API client of the anthropic summarizers on each platform that serves Claude:
 * Anthropic's own API (@anthropic-ai/sdk), Amazon Bedrock (@anthropic-ai/bedrock-sdk) and Google
 * Cloud's Vertex AI (@anthropic-ai/vertex-sdk). The three clients share `messages.create`: the
 * platform SDKs take the same request and rewrite it to the platform's wire shape (Bedrock:
 * `POST /model/{model}/invoke`, SigV4-signed; Vertex: `POST /projects/{p}/locations/{r}/publishers/
 * anthropic/models/{model}:rawPredict`, Google OAuth), `anthropic_version` in the body.
 *
 * What the platforms do not serve (the SDKs' own types leave it out, @anthropic-ai/bedrock-sdk and
 * @anthropic-ai/vertex-sdk 1.1): the Message Batches API (neither) and token counting (Bedrock);
 * compactor counts no tokens through the API, and `"batch": true` sweeps summarize online there.
 * On-demand compaction (`anthropic-compaction`, beta `compact-2026-09-04`) is listed by Anthropic
 * on its API and Vertex AI, not on Bedrock (whose own guide documents only the older threshold
 * compaction, `compact-2026-01-12`): on Bedrock that summarizer refuses ({@link unavailableOn}).
 *
 * The platform SDKs are optional peer dependencies, loaded only when their platform is configured.
 */
import { createRequire } from 'node:module';
import type Anthropic from '@anthropic-ai/sdk';
import { SummarizerConfigError } from '../../shared/contract/errors.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import type { AnthropicPlatformConfig } from '../config/config.ts';

/** What the summarizers use of a Messages API client, on every platform. */
export interface AnthropicMessagesClient {
  /** The endpoint requests go to (named in errors and traces). */
  readonly baseURL: string;
  readonly messages: Pick<Anthropic.Messages, 'create'>;
}

/**
 * The GenAI semantic conventions' `gen_ai.provider.name` of each platform (OpenTelemetry semantic
 * conventions v1.41.0, its well-known values: `anthropic`, `aws.bedrock`, `gcp.vertex_ai`).
 */
export const PLATFORM_PROVIDER: Readonly<Record<AnthropicPlatformConfig['platform'], string>> = {
  anthropic: 'anthropic',
  bedrock: 'aws.bedrock',
  vertex: 'gcp.vertex_ai',
};

/** The platforms' names in messages. */
const PLATFORM_NAME = { bedrock: 'Amazon Bedrock', vertex: 'Google Vertex AI' } as const;

/** The package of each platform's SDK. */
const PLATFORM_PACKAGE = {
  bedrock: '@anthropic-ai/bedrock-sdk',
  vertex: '@anthropic-ai/vertex-sdk',
} as const;

/**
 * `anthropic_version` of a request body on each platform, as Bedrock's and Vertex AI's Claude
 * guides document it. The platform SDKs (1.1) copy the client's `anthropic-version` header into the
 * body, and that header is the first-party API's version (`2026-10-21` with @anthropic-ai/sdk 1.11),
 * which neither platform documents: the client's default header is set to the platform's.
 */
export const PLATFORM_API_VERSION = { bedrock: 'bedrock-2023-05-31', vertex: 'vertex-2023-10-16' } as const;

/** Settings of a platform client beside the platform's own. */
export interface PlatformClientOptions {
  maxRetries: number;
  timeoutMs: number;
  /** `fetchOptions` of the SDK client (the process's connection pool). */
  fetchOptions?: Record<string, unknown> | undefined;
}

/**
 * The client of a Bedrock or Vertex platform. Built at once, usable at once: the SDK is imported on
 * the first request (it is an optional peer dependency, and this keeps construction synchronous);
 * whether it is installed is checked here.
 * @throws {SummarizerConfigError} when the platform's SDK is not installed, naming the package.
 */
export function platformClient(
  platform: Exclude<AnthropicPlatformConfig, { platform: 'anthropic' }>,
  options: PlatformClientOptions,
): AnthropicMessagesClient {
  const pkg = PLATFORM_PACKAGE[platform.platform];
  try {
    createRequire(import.meta.url).resolve(pkg);
  } catch {
    throw new SummarizerConfigError(
      `COMPACTOR_ANTHROPIC_PLATFORM is ${platform.platform}, which needs ${pkg}: npm install ${pkg}`,
    );
  }
  let client: Promise<AnthropicMessagesClient> | null = null;
  const load = () => {
    client ??=
      platform.platform === 'bedrock' ? bedrockClient(platform, options) : vertexClient(platform, options);
    return client;
  };
  return {
    baseURL: platformBaseURL(platform),
    messages: {
      create: ((params: Anthropic.MessageCreateParams, requestOptions?: Anthropic.RequestOptions) =>
        load().then((c) => c.messages.create(params, requestOptions))) as Anthropic.Messages['create'],
    },
  };
}

/** The endpoint of a platform: its base URL setting, else the SDK's default for the region. */
export function platformBaseURL(
  platform: Exclude<AnthropicPlatformConfig, { platform: 'anthropic' }>,
): string {
  if (platform.baseURL) return platform.baseURL;
  if (platform.platform === 'bedrock') return `https://bedrock-runtime.${platform.region}.amazonaws.com`;
  const host: Record<string, string> = {
    global: 'aiplatform.googleapis.com',
    us: 'aiplatform.us.rep.googleapis.com',
    eu: 'aiplatform.eu.rep.googleapis.com',
  };
  return `https://${host[platform.region] ?? `${platform.region}-aiplatform.googleapis.com`}/v1`;
}

async function bedrockClient(
  platform: Extract<AnthropicPlatformConfig, { platform: 'bedrock' }>,
  options: PlatformClientOptions,
): Promise<AnthropicMessagesClient> {
  const { AnthropicBedrock } = await import('@anthropic-ai/bedrock-sdk');
  const settings = {
    ...common(options, 'bedrock'),
    baseURL: platformBaseURL(platform),
    awsRegion: platform.region,
  };
  const credentials = platform.credentials;
  // Without credentials: the SDK reads AWS_BEARER_TOKEN_BEDROCK, else signs with the AWS chain's.
  const client = credentials
    ? new AnthropicBedrock({
        ...settings,
        apiKey: null,
        awsAccessKey: credentials.accessKeyId,
        awsSecretKey: credentials.secretAccessKey,
        awsSessionToken: credentials.sessionToken ?? null,
      })
    : new AnthropicBedrock(settings);
  return client as unknown as AnthropicMessagesClient;
}

async function vertexClient(
  platform: Extract<AnthropicPlatformConfig, { platform: 'vertex' }>,
  options: PlatformClientOptions,
): Promise<AnthropicMessagesClient> {
  const { AnthropicVertex } = await import('@anthropic-ai/vertex-sdk');
  type AuthClient = NonNullable<ConstructorParameters<typeof AnthropicVertex>[0]>['authClient'];
  return new AnthropicVertex({
    ...common(options, 'vertex'),
    baseURL: platformBaseURL(platform),
    region: platform.region,
    projectId: platform.projectId,
    // Without a token, the SDK's GoogleAuth finds Application Default Credentials.
    ...(platform.accessToken
      ? { authClient: staticTokenClient(platform.accessToken, platform.projectId) as unknown as AuthClient }
      : {}),
  }) as unknown as AnthropicMessagesClient;
}

/** The options both platform SDKs take alike. */
function common(options: PlatformClientOptions, platform: 'bedrock' | 'vertex') {
  return {
    // As anthropicClient's: the summarizer's LlmCalls trace each request (./anthropic.ts).
    openTelemetry: false as const,
    maxRetries: options.maxRetries,
    timeout: options.timeoutMs,
    ...(options.fetchOptions ? { fetchOptions: options.fetchOptions } : {}),
    defaultHeaders: { 'anthropic-version': PLATFORM_API_VERSION[platform] },
  };
}

/**
 * An auth client that always presents one OAuth access token: what @anthropic-ai/vertex-sdk 1.1
 * reads of its `authClient` (`getRequestHeaders()` and `projectId`; it ignores its own
 * `accessToken` option). The token is not refreshed: when it expires, Vertex answers 401, which
 * fails the job naming the status; a long-running worker should use Application Default
 * Credentials instead.
 */
function staticTokenClient(token: string, projectId: string) {
  return {
    projectId,
    getRequestHeaders: async () => new Headers({ authorization: `Bearer ${token}` }),
  };
}

/**
 * A summarizer standing for `name` on a platform that does not serve it: every summary fails with
 * a {@link SummarizerConfigError} (permanent: the strategy's `fallback` runs on the job's last
 * attempt), saying what to name instead.
 */
export function unavailableOn(name: string, platform: 'bedrock' | 'vertex', why: string): Summarizer {
  const refuse = () =>
    new SummarizerConfigError(
      `the ${name} summarizer is not available on ${PLATFORM_NAME[platform]}: ${why}; name the anthropic summarizer in the strategy instead`,
    );
  return { name, summarize: () => Promise.reject(refuse()) };
}
