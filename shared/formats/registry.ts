/**
 * The session formats, by name, and which one a stored row is in. The registry, not each format,
 * knows the formats: a format's module never names another's block or item types.
 */
import type { StoredContent } from '../contract/blocks.ts';
import { anthropicFormat } from './anthropic/format.ts';
import type { SessionFormat } from './format.ts';
import { openaiChatFormat } from './openai-chat/format.ts';
import { openaiResponsesFormat } from './openai-responses/format.ts';
import type { SessionFormat as SessionFormatName } from './session-format.ts';

/** Every session format's row rules, by name. */
export const SESSION_FORMAT_RULES: Readonly<Record<SessionFormatName, SessionFormat>> = {
  anthropic: anthropicFormat,
  'openai-chat': openaiChatFormat,
  'openai-responses': openaiResponsesFormat,
};

/**
 * The format whose row `content` is: Anthropic content is a string or an array; a Responses item
 * has a `type` of its own; a Chat Completions message has a `role` and no such `type`. Checked in
 * that order (a Responses `message` item has a `role` too).
 * @returns null for an object of no format (never stored: every append is validated).
 */
export function formatOfContent(content: StoredContent): SessionFormat | null {
  for (const format of [anthropicFormat, openaiResponsesFormat, openaiChatFormat]) {
    if (format.owns(content)) return format;
  }
  return null;
}
