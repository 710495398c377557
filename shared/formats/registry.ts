/**
 * The session formats' row rules, by name: a session's snapshot carries its format
 * (`sessions.format`), and the strategies take the rules from here. The registry, not each format,
 * knows the formats: a format's module never names another's block or item types.
 */

import type { SessionFormat as SessionFormatName } from '../contract/session-format.ts';
import { anthropicFormat } from './anthropic/format.ts';
import type { SessionFormat } from './format.ts';
import { openaiChatFormat } from './openai-chat/format.ts';
import { openaiResponsesFormat } from './openai-responses/format.ts';

/** Every session format's row rules, by name. */
export const SESSION_FORMAT_RULES: Readonly<Record<SessionFormatName, SessionFormat>> = {
  anthropic: anthropicFormat,
  'openai-chat': openaiChatFormat,
  'openai-responses': openaiResponsesFormat,
};
