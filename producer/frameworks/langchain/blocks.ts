/**
 * What both session formats ask of a LangChain message's content: its blocks as plain objects, the
 * blocks only LangChain writes (its standard content blocks, which no provider API takes as they
 * are), and where a message sits, for errors. Pure: no I/O.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { InvalidInputError } from '../../../shared/contract/errors.ts';

/** A content block as LangChain holds it: an object with a string `type`, any other fields. */
export type Block = { type: string } & Record<string, unknown>;

/**
 * Standard content block types of `@langchain/core` (its `ContentBlock` union and the v0 data
 * blocks) that no provider's wire format has under the same name and shape: a chat model's adapter
 * translates them before sending. Stored as they are, they would come back as blocks the API
 * refuses, so the adapters refuse them instead.
 */
const LANGCHAIN_ONLY = new Set([
  'reasoning',
  'tool_call',
  'tool_call_chunk',
  'invalid_tool_call',
  'server_tool_call',
  'server_tool_call_chunk',
  'server_tool_call_result',
  'non_standard',
  'text-plain',
  'audio',
  'video',
  'file',
  'input_json_delta',
]);

/**
 * Whether `block` is one of LangChain's own content blocks rather than a provider's: a type only
 * LangChain uses, a v0 data block (`source_type`), or an `image` in LangChain's shape (`url`,
 * `data` or `fileId` instead of Anthropic's `source`).
 */
export function isLangChainBlock(block: Block): boolean {
  if (LANGCHAIN_ONLY.has(block.type) || 'source_type' in block) return true;
  return block.type === 'image' && !('source' in block);
}

/**
 * A message's content as a list of blocks, or its string.
 * @throws {InvalidInputError} naming `where` when the content is neither a string nor a list of
 *   objects with a string `type`.
 */
export function contentOf(message: BaseMessage, where: string): string | Block[] {
  const content: unknown = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    throw new InvalidInputError(`${where}.content: expected a string or a list of content blocks`);
  }
  return content.map((block: unknown, i) => {
    if (typeof block !== 'object' || block === null || typeof (block as Block).type !== 'string') {
      throw new InvalidInputError(`${where}.content[${i}]: expected a content block with a string "type"`);
    }
    return block as Block;
  });
}

/** `messages[3] (ai)`: where a message is in the list handed to the adapter, and its type. */
export function placeOf(message: BaseMessage, index: number): string {
  return `messages[${index}] (${message.getType()})`;
}

/**
 * The error for a block the session's format cannot hold: names the block, the format, and what to
 * do instead.
 */
export function unstorable(where: string, block: Block, format: string, why: string): InvalidInputError {
  return new InvalidInputError(
    `${where}: a ${JSON.stringify(block.type)} block, which the ${format} session format cannot hold (${why}); nothing was stored`,
  );
}
