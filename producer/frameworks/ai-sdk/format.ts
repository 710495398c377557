/**
 * The `ai-sdk` session format as the middleware uses it: the format's name, its reversible JSON
 * encoding of AI SDK prompt messages (shared/formats/ai-sdk/encoding.ts: a file's `Uint8Array` or
 * `URL` data, which JSON cannot carry, as `{ $bytes }` or `{ $url }`), and where a loaded context
 * keeps its messages (`prompt`). Pure.
 */
import {
  type AiSdkStoredMessage,
  decodeAiSdkMessage,
  encodeAiSdkMessage,
} from '../../../shared/formats/ai-sdk/encoding.ts';
import type { AnyMessage } from './reply.ts';

/** The session format the middleware stores in. */
export const AI_SDK_FORMAT = 'ai-sdk' as const;

/** A prompt message as stored: the same message, its file data encoded. */
export function encodeMessage(message: AnyMessage): AiSdkStoredMessage {
  return encodeAiSdkMessage(message);
}

/**
 * The messages of a loaded `ai-sdk` context (`loadContext(…, { format: 'ai-sdk' })`), decoded as
 * the model's `doGenerate`/`doStream` takes them.
 * @throws {Error} when the context has no `prompt` (not an `ai-sdk` context).
 */
export function contextMessages(context: { prompt: readonly AiSdkStoredMessage[] }): AnyMessage[] {
  const prompt: unknown = context.prompt;
  if (!Array.isArray(prompt)) throw new Error('loadContext: an ai-sdk context has no prompt');
  return context.prompt.map((m) => decodeAiSdkMessage(m) as AnyMessage);
}
