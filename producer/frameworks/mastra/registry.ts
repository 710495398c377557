/**
 * The session formats a Mastra agent's conversation may be stored in, each with its codec
 * (./codec.ts), and the one a new session takes by default. Adding a format is one entry here.
 * Pure: no I/O.
 */
import type { SessionFormat } from '../../../shared/contract/session-format.ts';
import { anthropicCodec } from './anthropic.ts';
import type { SessionCodec } from './codec.ts';
import { openaiChatCodec } from './openai-chat.ts';

/** The codecs by session format: the formats a Mastra agent's session may be in. */
export const CODECS: Partial<Record<SessionFormat, SessionCodec>> = {
  'openai-chat': openaiChatCodec,
  anthropic: anthropicCodec,
};

/** The formats a Mastra agent's session may be in, as {@link CODECS} lists them. */
export type MastraSessionFormat = 'openai-chat' | 'anthropic';

/**
 * The format a new session takes when the adapter is given none: `anthropic` for a model of
 * Anthropic's (its provider id starts with `anthropic`, as `@ai-sdk/anthropic`, Amazon Bedrock's
 * and Vertex's Anthropic providers name themselves, or `bedrock` / `vertex.anthropic` ids naming
 * a Claude model), whose thinking is signed and must go back signed; `openai-chat` for any other.
 */
export function defaultFormatFor(model: { provider?: unknown; modelId?: unknown }): MastraSessionFormat {
  const provider = String(model.provider ?? '');
  const id = String(model.modelId ?? '');
  if (provider.startsWith('anthropic') || provider.includes('.anthropic')) return 'anthropic';
  if (/claude/i.test(id) && /bedrock|vertex/.test(provider)) return 'anthropic';
  return 'openai-chat';
}

/**
 * The codec of `format`.
 * @throws {Error} for a format no codec of this adapter writes (`openai-responses`).
 */
export function codecFor(format: SessionFormat): SessionCodec {
  const codec = CODECS[format];
  if (!codec) {
    throw new Error(
      `format: a Mastra agent's session is ${Object.keys(CODECS)
        .map((f) => `"${f}"`)
        .join(' or ')}, not "${format}"`,
    );
  }
  return codec;
}
