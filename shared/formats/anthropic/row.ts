/**
 * An `anthropic` session's append: a Messages API `MessageParam` validated (its role, each content
 * block by the rules of ./content-rules.ts) and turned into its row, the content kept exactly as
 * the agent wrote it. Pure.
 */
import { type AnthropicContent, contentFacts, type StoredContent } from '../../contract/blocks.ts';
import { contentProblem, toolUseIdsAt } from '../../contract/content-checks.ts';
import { InvalidInputError } from '../../contract/errors.ts';
import type { Role } from '../../contract/message.ts';
import { storableText } from '../../contract/unicode.ts';
import type { MessageRow, RowOptions } from '../format.ts';
import { anthropicContentProblem } from './content-rules.ts';

const ROLES = new Set(['user', 'assistant', 'system']);

/**
 * Validates a `MessageParam` (`{ role, content }`; `system` holds a system prompt) and derives its
 * row. Fields beside `role` and `content` (an Anthropic `Message`'s `id`, `model`, …) are not stored.
 * @param where the message's field, for errors (`messages[3]`).
 * @throws {InvalidInputError} naming the field: no message object, a role the API has not, content
 *   neither a string nor a list of blocks, or a block the API refuses (./content-rules.ts).
 */
export function anthropicRow(message: unknown, where: string, options: RowOptions = {}): MessageRow {
  if (typeof message !== 'object' || message === null) {
    throw new InvalidInputError(`${where}.message: expected a MessageParam ({ role, content })`);
  }
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (typeof role !== 'string' || !ROLES.has(role)) {
    throw new InvalidInputError(
      `${where}.role: expected "user", "assistant" or "system", got ${JSON.stringify(role) ?? 'nothing'}`,
    );
  }
  assertBlockList(content, where);
  // Before anything walks the content (the rendering recurses, the driver serializes it).
  const problem = contentProblem(content, where) ?? anthropicContentProblem(role, content, where);
  if (problem) throw new InvalidInputError(`${problem.field}: ${problem.message}`);
  const facts = contentFacts(content as AnthropicContent, options.pdfPages);
  return {
    role: role as Role,
    kind: facts.kind,
    // The rendering as Postgres `text` can hold it; the native content keeps every character.
    content: storableText(facts.text),
    contentBlocks: content as StoredContent,
    toolCallId: facts.toolResultIds[0] ?? facts.toolUseIds[0] ?? null,
    toolName: facts.toolName,
    toolUseIds: facts.toolUseIds,
    toolResultIds: facts.toolResultIds,
    hasThinking: facts.thinking,
    tokenCount: options.tokenCount ?? facts.tokenCount,
    pinned: options.pinned ?? false,
    createdAt: options.createdAt ?? null,
    toolUseIdsAt: toolUseIdsAt(content, where),
  };
}

/**
 * Refuses content that is neither a string nor a list of block objects each with a `type`.
 * @throws {InvalidInputError} naming the content or the block.
 */
function assertBlockList(content: unknown, where: string): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) {
    throw new InvalidInputError(`${where}.content: expected a string or a list of content blocks`);
  }
  content.forEach((block, j) => {
    if (typeof block !== 'object' || block === null || Array.isArray(block)) {
      throw new InvalidInputError(`${where}.content[${j}]: expected a content block object`);
    }
    const type = (block as { type?: unknown }).type;
    if (typeof type !== 'string' || type === '') {
      throw new InvalidInputError(`${where}.content[${j}].type: expected a block type`);
    }
  });
}
