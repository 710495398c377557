/**
 * The AI SDK's provider-level prompt (`LanguageModelV2Prompt`, `V3`, `V4`: what Mastra hands a model
 * and shows a `processLLMRequest` processor), typed here by its shape so that this adapter needs
 * none of the three `@ai-sdk/provider` majors: the messages and parts the codecs read and write,
 * the conversation part of a prompt, and a comparison that tells whether two prompts hold the same
 * messages. Pure: no I/O.
 *
 * The shapes follow `@ai-sdk/provider`'s `LanguageModelV{2,3,4}Prompt` (its `dist/index.d.ts`):
 * - roles `system` (a string), `user` (text and file parts), `assistant` (text, file, reasoning,
 *   tool-call and provider-executed tool-result parts), `tool` (tool results and, from V3, tool
 *   approval responses); every message and part may carry `providerOptions`;
 * - a file part's `data` is a base64 string, bytes or a `URL` up to V3, and a tagged union from V4
 *   (`{type: 'data', data}`, `{type: 'url', url}`, `{type: 'reference', reference}`, `{type: 'text', text}`);
 * - a tool result's `output` is `text`, `json`, `error-text`, `error-json`, `content` or (V3 on)
 *   `execution-denied`.
 */

/** Provider-specific options of a message or a part, by provider name. */
export type ProviderOptions = Record<string, Record<string, unknown>>;

/** The AI SDK prompt versions Mastra builds (by the model's `specificationVersion`). */
export type PromptVersion = 'v2' | 'v3' | 'v4';

/** A text part. */
export interface TextPart {
  type: 'text';
  text: string;
  providerOptions?: ProviderOptions;
}

/** A file part (an image, a PDF, audio), its `data` in the shape of its prompt version. */
export interface FilePart {
  type: 'file';
  mediaType: string;
  filename?: string;
  data: unknown;
  providerOptions?: ProviderOptions;
}

/** A file part's data as {@link fileDataOf} reads it: base64 text, or a URL. */
export type FileData = { base64: string; url?: undefined } | { url: string; base64?: undefined };

/**
 * A file part's data as base64 text or a URL, from any prompt version's shape: a base64 string,
 * bytes (encoded here) or a `URL` up to V3; V4's `{type: 'data'}` and `{type: 'url'}`. Null for what
 * is neither (a V4 `reference` to a provider's file, a V4 `text`, anything else); {@link fileDataKind}
 * names it for the codec's refusal.
 */
export function fileDataOf(file: FilePart): FileData | null {
  const data = file.data;
  if (data instanceof URL) return { url: data.href };
  if (data instanceof Uint8Array) return { base64: Buffer.from(data).toString('base64') };
  if (typeof data === 'string') return { base64: data };
  const tagged = data as { type?: unknown; data?: unknown; url?: unknown } | null;
  if (tagged?.type === 'data') {
    if (tagged.data instanceof Uint8Array) return { base64: Buffer.from(tagged.data).toString('base64') };
    if (typeof tagged.data === 'string') return { base64: tagged.data };
  }
  if (tagged?.type === 'url' && (tagged.url instanceof URL || typeof tagged.url === 'string')) {
    return { url: tagged.url instanceof URL ? tagged.url.href : tagged.url };
  }
  return null;
}

/** What a file part's data is, for an error: its V4 tag (`a "reference" file`) or its JS type. */
export function fileDataKind(file: FilePart): string {
  const tagged = file.data as { type?: unknown } | null;
  return tagged?.type === undefined ? typeof file.data : `a "${String(tagged.type)}" file`;
}

/** Model reasoning (thinking), signed or redacted through `providerOptions`. */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: ProviderOptions;
}

/** A call of a tool, as the model made it. */
export interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerExecuted?: boolean;
  providerOptions?: ProviderOptions;
}

/** What a tool returned, by kind. */
export type ToolResultOutput =
  | { type: 'text'; value: string; providerOptions?: ProviderOptions }
  | { type: 'json'; value: unknown; providerOptions?: ProviderOptions }
  | { type: 'error-text'; value: string; providerOptions?: ProviderOptions }
  | { type: 'error-json'; value: unknown; providerOptions?: ProviderOptions }
  | { type: 'execution-denied'; reason?: string; providerOptions?: ProviderOptions }
  | { type: 'content'; value: unknown[]; providerOptions?: ProviderOptions };

/** The answer to one tool call. */
export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: ToolResultOutput;
  providerOptions?: ProviderOptions;
}

/** Any part of a prompt message; the types above, or one this adapter does not know. */
export type PromptPart =
  | TextPart
  | FilePart
  | ReasoningPart
  | ToolCallPart
  | ToolResultPart
  | { type: string; providerOptions?: ProviderOptions; [key: string]: unknown };

/** One message of a provider-level prompt. */
export type PromptMessage =
  | { role: 'system'; content: string; providerOptions?: ProviderOptions }
  | { role: 'user' | 'assistant' | 'tool'; content: PromptPart[]; providerOptions?: ProviderOptions };

/** A non-system message of a prompt: what a compactor session holds. */
export type ConversationMessage = Extract<PromptMessage, { role: 'user' | 'assistant' | 'tool' }>;

/**
 * The provider options Mastra writes on the messages it converts (`mastra.createdAt`, when the
 * message was written): its own bookkeeping, read by no provider, so not part of what is stored.
 */
export const MASTRA_PROVIDER_KEY = 'mastra';

/** The prompt version of a model's `specificationVersion` (`v4` → V4; `v3` → V3; else V2). */
export function promptVersionOf(specificationVersion: unknown): PromptVersion {
  return specificationVersion === 'v4' ? 'v4' : specificationVersion === 'v3' ? 'v3' : 'v2';
}

/**
 * Splits a prompt into its leading system messages (the agent's instructions, which Mastra builds
 * again for every step and this adapter passes through) and the conversation after them (what a
 * compactor session holds; a system message inside it stays where it is).
 */
export function splitPrompt(prompt: readonly PromptMessage[]): {
  system: PromptMessage[];
  conversation: PromptMessage[];
} {
  let lead = 0;
  while (lead < prompt.length && prompt[lead]?.role === 'system') lead++;
  return { system: prompt.slice(0, lead), conversation: prompt.slice(lead) };
}

/**
 * A canonical JSON text of a prompt message, for telling whether two are the same: bytes as
 * base64, a `URL` as its text; everything else as `JSON.stringify` writes it (key order included:
 * both sides come from the same conversion).
 */
export function promptKey(message: PromptMessage): string {
  return JSON.stringify(message, (_key, value: unknown) => {
    if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString('base64') };
    if (value instanceof URL) return { $url: value.href };
    return value;
  });
}

/**
 * The provider options of a message or part without Mastra's own (`mastra`); undefined when none
 * is left.
 */
export function foreignOptions(options: ProviderOptions | undefined): ProviderOptions | undefined {
  if (!options) return undefined;
  const rest = Object.fromEntries(Object.entries(options).filter(([name]) => name !== MASTRA_PROVIDER_KEY));
  return Object.keys(rest).length > 0 ? rest : undefined;
}
