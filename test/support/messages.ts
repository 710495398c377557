/**
 * Messages built by hand for tests of prompts and summarizers.
 */
import { asAnthropicContent, contentFacts, type StoredContent } from '../../shared/contract/blocks.ts';
import { legacyToolIds, type Message, type MessageMeta, type Role } from '../../shared/contract/message.ts';
import { estimateTextTokens } from '../../shared/contract/tokens.ts';

/**
 * A plain text message (`kind: 'message'`, no tool ids, not pinned) at `seq`, its token count
 * estimated as compactor does (`estimateTextTokens`, 4 characters per token).
 */
export function textMessage(seq: number, role: Message['role'], content: string): Message {
  return {
    seq,
    role,
    kind: 'message',
    content,
    toolCallId: null,
    toolName: null,
    tokenCount: estimateTextTokens(content),
    pinned: false,
    ...legacyToolIds('message', null),
  };
}

/**
 * What the planner knows of a stored message at `seq`: its kind, tool ids, thinking and tokens read
 * from its native `content` (`contentFacts`, as an append stores them).
 */
export function metaOfContent(seq: number, role: Role, content: StoredContent, pinned = false): MessageMeta {
  const facts = contentFacts(asAnthropicContent(content));
  return {
    seq,
    role,
    kind: facts.kind,
    toolCallId: facts.toolUseIds[0] ?? facts.toolResultIds[0] ?? null,
    toolName: facts.toolName,
    toolUseIds: facts.toolUseIds,
    toolResultIds: facts.toolResultIds,
    thinking: facts.thinking,
    tokenCount: facts.tokenCount,
    pinned,
  };
}
