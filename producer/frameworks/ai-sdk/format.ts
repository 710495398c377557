/**
 * The `ai-sdk` session format as the middleware uses it: the format's name, its reversible JSON
 * encoding of AI SDK prompt messages (a `Uint8Array` or `URL` in a file part has no JSON form of its
 * own), and where a loaded context keeps its messages. Pure.
 */
import type { AnyMessage } from './reply.ts';

/** The session format the middleware stores in. */
export const AI_SDK_FORMAT = 'ai-sdk';

/** A prompt message as stored: JSON, with file data encoded. */
export function encodeMessage(message: AnyMessage): unknown {
  return message;
}

/** A stored message as the AI SDK takes it: file data decoded. */
export function decodeMessage(stored: unknown): AnyMessage {
  return stored as AnyMessage;
}

/** The messages of a loaded `ai-sdk` context, decoded. */
export function contextMessages(context: Record<string, unknown>): AnyMessage[] {
  const messages = context.prompt;
  if (!Array.isArray(messages)) throw new Error('loadContext: an ai-sdk context has no prompt');
  return messages.map(decodeMessage);
}
