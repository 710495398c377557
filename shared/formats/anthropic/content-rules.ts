/**
 * What the Anthropic Messages API refuses in a message it is sent back, checked before compactor
 * stores the message: a stored message goes into every later request of its session (the context
 * read renders it as is), so a message the API refuses would fail all of them. Only what the
 * provider documents as invalid is refused; a block type not known here is kept as it is (the API
 * adds types; the design stores "types not known yet" unchanged). Pure: no I/O, no recursion
 * deeper than a tool result's own blocks.
 *
 * The rules, each with where the provider states it (platform.claude.com/docs/en/…):
 * - Role: `thinking` and `redacted_thinking` blocks are the assistant's ("pass the thinking blocks
 *   from the assistant message back to the API", build-with-claude/extended-thinking); `tool_use`
 *   and `server_tool_use` are the assistant's calls and `tool_result` the user's answer ("the
 *   tool_result blocks … in the user message", agents-and-tools/tool-use/handle-tool-calls). A
 *   `role: "system"` message holds text only (`SystemMessageParam.content: string |
 *   TextBlockParam[]`, api/messages/create). From API version 2026-10-21, "a request that places a
 *   document block directly in an assistant message" and non-empty `citations` on a text block of a
 *   user message are refused (api/migration-2026-10-21, "Breaking changes").
 * - `tool_result.content` is optional; given, it is "a string or a list of" `text`, `image`,
 *   `document` or `search_result` blocks (agents-and-tools/tool-use/handle-tool-calls; the API
 *   reference adds `tool_reference` and `browser_state`). A number, an object, null, or a block of
 *   the message level (`tool_use`, `thinking`, …) inside it is refused. An empty list is not refused:
 *   the docs show a tool result with no content and state no minimum.
 * - Images: a base64 source's `media_type` is one of `image/jpeg`, `image/png`, `image/gif`,
 *   `image/webp` (build-with-claude/vision, "Supported image formats"; `Base64ImageSource` in
 *   api/messages/create); a `url` source has its `url`, a `file` source its `file_id`.
 * - Documents: a base64 source is `application/pdf` and a `text` source `text/plain`
 *   (build-with-claude/pdf-support; build-with-claude/citations, "Plain text documents"); a
 *   `content` source holds a string or blocks; `url` and `file` sources as for images.
 * - Blocks carry their required fields as the API reference types them: a `text` block's `text` is
 *   a string, a `tool_use` block has a non-empty `id` and `name` and an object `input`, a
 *   `tool_result` block a non-empty `tool_use_id`.
 */
import type { InputProblem } from '../../contract/content-checks.ts';

/** Media types of a base64 image source (build-with-claude/vision, "Supported image formats"). */
export const ANTHROPIC_IMAGE_MEDIA_TYPES: readonly string[] = [
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
];

/** Block types only an assistant message holds. */
const ASSISTANT_ONLY = new Set(['thinking', 'redacted_thinking', 'tool_use', 'server_tool_use']);

/** Block types a `tool_result`'s content may hold (handle-tool-calls; api/messages/create). */
const TOOL_RESULT_BLOCKS = new Set([
  'text',
  'image',
  'document',
  'search_result',
  'tool_reference',
  'browser_state',
]);

/**
 * Block types of the message level (api/messages/create, `ContentBlockParam`) that are not
 * allowed inside a `tool_result`. A type not known at all is kept, as at the message level.
 */
const MESSAGE_LEVEL_BLOCKS = new Set([
  'thinking',
  'redacted_thinking',
  'tool_use',
  'tool_result',
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
  'container_upload',
  'compaction',
]);

/** Every block type of the Messages API's content lists this module knows. */
export const ANTHROPIC_BLOCK_TYPES: ReadonlySet<string> = new Set([
  ...TOOL_RESULT_BLOCKS,
  ...MESSAGE_LEVEL_BLOCKS,
]);

type Block = Record<string, unknown> & { type: string };

/**
 * The first thing the Messages API would refuse in a message's content (see the file comment for
 * each rule and its source), as a field and a sentence.
 * @param role the message's role (`user`, `assistant` or `system`).
 * @param content the message's content, already a string or a list of objects with a string
 *   `type` (the shape checks of the append run first).
 * @param where the message's field name (`messages[2]`); fields are named below `<where>.content`.
 * @returns null when the API would take the content.
 */
export function anthropicContentProblem(role: string, content: unknown, where: string): InputProblem | null {
  if (!Array.isArray(content)) return null;
  for (let j = 0; j < content.length; j++) {
    const block = content[j] as Block;
    const at = `${where}.content[${j}]`;
    const problem = roleProblem(role, block, at) ?? blockProblem(block, at);
    if (problem) return problem;
  }
  return null;
}

/** A block in a message of a role that may not hold it. */
function roleProblem(role: string, block: Block, at: string): InputProblem | null {
  const { type } = block;
  if (role === 'system' && type !== 'text') {
    return {
      field: `${at}.type`,
      message: `a system message holds text blocks only (the Messages API's SystemMessageParam), not a "${type}" block`,
    };
  }
  if (role !== 'assistant' && ASSISTANT_ONLY.has(type)) {
    return {
      field: `${at}.type`,
      message: `a ${type} block belongs in an assistant message: the Messages API takes it back only where the model wrote it, not in a ${role} message`,
    };
  }
  if (role !== 'user' && type === 'tool_result') {
    return {
      field: `${at}.type`,
      message: `a tool_result block answers a tool call in the user message after it, not in a ${role} message`,
    };
  }
  if (role === 'assistant' && type === 'document') {
    return {
      field: `${at}.type`,
      message:
        'a document block directly in an assistant message is refused by the Messages API (version 2026-10-21): put the document in a user message or a tool_result',
    };
  }
  if (role === 'user' && type === 'text' && Array.isArray(block.citations) && block.citations.length > 0) {
    return {
      field: `${at}.citations`,
      message:
        'citations on a text block of a user message are refused by the Messages API (version 2026-10-21): leave them out (the assistant message that cited keeps its own)',
    };
  }
  return null;
}

/** A known block type without the fields the API requires of it. */
function blockProblem(block: Block, at: string): InputProblem | null {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? null : expected(`${at}.text`, 'a string', block.text);
    case 'image':
      return imageProblem(block, at);
    case 'document':
      return documentProblem(block, at);
    case 'tool_use':
      if (!nonEmptyString(block.id))
        return expected(`${at}.id`, "the tool call's id (a non-empty string)", block.id);
      if (!nonEmptyString(block.name))
        return expected(`${at}.name`, "the tool's name (a non-empty string)", block.name);
      return isObject(block.input)
        ? null
        : expected(`${at}.input`, "an object (the tool's arguments)", block.input);
    case 'tool_result':
      return toolResultProblem(block, at);
    default:
      return null;
  }
}

/** A `tool_result` block: its `tool_use_id`, then its optional content (a string or a list of blocks). */
function toolResultProblem(block: Block, at: string): InputProblem | null {
  if (!nonEmptyString(block.tool_use_id)) {
    return expected(
      `${at}.tool_use_id`,
      'the id of the tool_use block it answers (a non-empty string)',
      block.tool_use_id,
    );
  }
  if (block.is_error !== undefined && typeof block.is_error !== 'boolean') {
    return expected(`${at}.is_error`, 'true or false', block.is_error);
  }
  const content = block.content;
  if (content === undefined || typeof content === 'string') return null;
  if (!Array.isArray(content)) {
    return expected(
      `${at}.content`,
      'a string or a list of text, image, document or search_result blocks (or no content)',
      content,
    );
  }
  for (let k = 0; k < content.length; k++) {
    const inner = content[k] as unknown;
    const innerAt = `${at}.content[${k}]`;
    if (!isObject(inner) || typeof inner.type !== 'string' || inner.type === '') {
      return expected(innerAt, 'a content block object with a type', inner);
    }
    if (MESSAGE_LEVEL_BLOCKS.has(inner.type) && !TOOL_RESULT_BLOCKS.has(inner.type)) {
      return {
        field: `${innerAt}.type`,
        message: `a tool_result's content holds text, image, document or search_result blocks, not a "${inner.type}" block`,
      };
    }
    const problem = blockProblem(inner as Block, innerAt);
    if (problem) return problem;
  }
  return null;
}

/** An image block's source: a base64 image of a supported media type, a URL, or a file id. */
function imageProblem(block: Block, at: string): InputProblem | null {
  const source = block.source;
  if (!isObject(source) || typeof source.type !== 'string') {
    return expected(`${at}.source`, 'a source object ({ type: "base64" | "url" | "file", … })', source);
  }
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || !ANTHROPIC_IMAGE_MEDIA_TYPES.includes(source.media_type)) {
      return expected(
        `${at}.source.media_type`,
        `one of ${ANTHROPIC_IMAGE_MEDIA_TYPES.join(', ')} (the image formats the Messages API takes)`,
        source.media_type,
      );
    }
    return nonEmptyString(source.data) ? null : expected(`${at}.source.data`, 'the base64 data', source.data);
  }
  return referenceProblem(source, `${at}.source`);
}

/** A document block's source: a base64 PDF, plain text, content blocks, a URL or a file id. */
function documentProblem(block: Block, at: string): InputProblem | null {
  const source = block.source;
  if (!isObject(source) || typeof source.type !== 'string') {
    return expected(
      `${at}.source`,
      'a source object ({ type: "base64" | "text" | "content" | "url" | "file", … })',
      source,
    );
  }
  const mediaTypes: Record<string, string> = { base64: 'application/pdf', text: 'text/plain' };
  const mediaType = mediaTypes[source.type];
  if (mediaType !== undefined) {
    if (source.media_type !== mediaType) {
      return expected(
        `${at}.source.media_type`,
        `"${mediaType}" (a ${source.type} document source is ${source.type === 'base64' ? 'a PDF' : 'plain text'})`,
        source.media_type,
      );
    }
    return typeof source.data === 'string' ? null : expected(`${at}.source.data`, 'a string', source.data);
  }
  if (source.type === 'content') {
    return typeof source.content === 'string' || Array.isArray(source.content)
      ? null
      : expected(`${at}.source.content`, 'a string or a list of content blocks', source.content);
  }
  return referenceProblem(source, `${at}.source`);
}

/** A `url` source without its URL or a `file` source without its id; other source types are kept. */
function referenceProblem(source: Record<string, unknown>, at: string): InputProblem | null {
  if (source.type === 'url' && !nonEmptyString(source.url)) return expected(`${at}.url`, 'a URL', source.url);
  if (source.type === 'file' && !nonEmptyString(source.file_id)) {
    return expected(`${at}.file_id`, 'the id of a file uploaded with the Files API', source.file_id);
  }
  return null;
}

/** The problem "expected <what>, got <what the value is>". */
function expected(field: string, what: string, got: unknown): InputProblem {
  return { field, message: `expected ${what}, got ${describe(got)}` };
}

/** A short, safe description of a value that is wrong: its JSON when short, else its kind. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : `a list of ${value.length}`;
  if (isObject(value)) return 'an object';
  const json = JSON.stringify(value) ?? String(value);
  return json.length <= 60 ? json : `a ${typeof value} of ${json.length} characters`;
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
