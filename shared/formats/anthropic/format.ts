/**
 * The `anthropic` session format (format.ts): a row holds a Messages API message's content, a
 * string or a list of content blocks; appended as ./row.ts checks it; its context rendered by
 * shared/context/render.ts (the core renders Anthropic content, into which corpus rows are also
 * read); its transcripts a JSONL of `MessageParam`s and Claude Code session files
 * (shared/contract/native-transcripts.ts). Row rules:
 * - `clearToolResults`: a `tool_result` block's `content` becomes the placeholder; the block stays
 *   (its `tool_use_id`, and `is_error` if present), so every tool pair stays whole.
 * - `clearToolInputs`: a `tool_use` block's `input` becomes `{}`.
 * - `clearThinking`: `thinking` and `redacted_thinking` blocks are dropped; a row of nothing but
 *   thinking keeps it (the API refuses an empty message).
 * Pure.
 */

import { renderContext } from '../../context/render.ts';
import {
  type Block,
  estimateContentTokens,
  isAnthropicContent,
  type StoredContent,
  THINKING_TYPES,
} from '../../contract/blocks.ts';
import { isClaudeCodeLine, parseAnthropicJsonl, parseClaudeCode } from '../../contract/native-transcripts.ts';
import { MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import { rewriteOf } from '../../planning/clearing.ts';
import type { FormatVocabulary, SessionFormat } from '../format.ts';
import { anthropicApiMessageSchema, anthropicContextSchema } from './api-schema.ts';
import { ANTHROPIC_BLOCK_TYPES } from './content-rules.ts';
import { anthropicImages, anthropicMedia } from './media.ts';
import { anthropicRow } from './row.ts';

/**
 * The Messages API's words: a `MessageParam` (`role`, `content`), and an Anthropic `Message` as the
 * API returns it (`id`, `type: "message"`, `model`, `stop_reason`, …), which an agent may append as
 * it came (only its role and content are stored).
 */
const VOCABULARY: FormatVocabulary = {
  messages: 'Anthropic Messages API MessageParams',
  itemTypes: new Set(['message']),
  roles: new Set(['user', 'assistant', 'system']),
  fields: new Set([
    'role',
    'content',
    'id',
    'type',
    'model',
    'stop_reason',
    'stop_sequence',
    'stop_details',
    'usage',
    'container',
    'context_management',
  ]),
  partTypes: ANTHROPIC_BLOCK_TYPES,
  nullContent: false,
  openItemTypes: false,
  names: {
    item: 'an Anthropic Message',
    role: 'an Anthropic Messages API role',
    field: 'an Anthropic Messages API field',
    part: 'an Anthropic Messages API content block',
    nullContent: "no Anthropic Messages API message's",
  },
};

/** The blocks of a row, or null for a string (which holds no tool call, result or thinking). */
function blocksOf(content: StoredContent): Block[] | null {
  return isAnthropicContent(content) && Array.isArray(content) ? content : null;
}

/** Whether a `tool_use` input is `{}` (or absent) already. */
function isEmptyInput(input: unknown): boolean {
  return (
    input === undefined ||
    (typeof input === 'object' && input !== null && !Array.isArray(input) && Object.keys(input).length === 0)
  );
}

/** The `anthropic` format, for the registry. */
export const anthropicFormat: SessionFormat = {
  name: 'anthropic',
  vocabulary: VOCABULARY,
  apiSchemas: { message: anthropicApiMessageSchema, context: anthropicContextSchema },
  rowOf: anthropicRow,
  renderContext: (input) => ({ ...renderContext(input) }),
  summaryTokens: (input) => renderContext({ ...input, compactedThroughSeq: null }).tokens,
  transcripts: {
    'claude-code': {
      detects: (first) => (isClaudeCodeLine(first) ? 'yes' : 'no'),
      looksLike: 'a Claude Code session line (type, uuid)',
      parse: (text, file, { sidechains }) =>
        parseClaudeCode(text, file, { sidechains }).map((m) => ({
          message: m.message,
          createdAt: m.createdAt,
        })),
    },
    anthropic: {
      detects: (first) => ('role' in first && 'content' in first ? 'maybe' : 'no'),
      looksLike: 'a MessageParam (role, content)',
      parse: (text, file) =>
        parseAnthropicJsonl(text, file).map((m) => ({ message: m.message, createdAt: m.createdAt })),
    },
  },
  toolNames(content) {
    return (blocksOf(content) ?? []).flatMap(
      (block): Array<[string, string]> =>
        block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string'
          ? [[block.id, block.name]]
          : [],
    );
  },
  clearToolResults(content, clearing) {
    const answered: string[] = [];
    const cleared: string[] = [];
    const blocks = blocksOf(content);
    if (blocks === null) return { content: null, answered, cleared };
    const next = blocks.map((block) => {
      if (block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') return block;
      if (!clearing.clearable.has(block.tool_use_id)) return block;
      answered.push(block.tool_use_id);
      if (typeof block.content === 'string' && block.content.startsWith(clearing.clearedPrefix)) return block;
      const tokens = estimateContentTokens([block]) - MESSAGE_OVERHEAD_TOKENS;
      cleared.push(block.tool_use_id);
      return { ...block, content: clearing.placeholder(block.tool_use_id, tokens) };
    });
    return { content: cleared.length > 0 ? next : null, answered, cleared };
  },
  clearToolInputs(content, ids) {
    const blocks = blocksOf(content);
    if (blocks === null) return null;
    const cleared: string[] = [];
    const next = blocks.map((block) => {
      if (block.type !== 'tool_use' || typeof block.id !== 'string' || !ids.has(block.id)) return block;
      if (isEmptyInput(block.input)) return block;
      cleared.push(block.id);
      return { ...block, input: {} };
    });
    return cleared.length > 0 ? { content: next, cleared } : null;
  },
  clearThinking(content) {
    const blocks = blocksOf(content);
    if (blocks === null) return null;
    const next = blocks.filter((b) => !THINKING_TYPES.has(b.type));
    if (next.length === blocks.length) return null;
    if (next.length === 0) return 'thinking only';
    return { content: next, dropped: blocks.length - next.length };
  },
  mediaOf: anthropicMedia,
  imagesOf: anthropicImages,
  rewriteOf(meta, content) {
    if (!isAnthropicContent(content))
      throw new Error(`anthropic: seq ${meta.seq} holds no Anthropic content`);
    return rewriteOf(meta, content);
  },
};
