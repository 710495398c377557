/**
 * Messages built by hand for tests of prompts and summarizers.
 */
import { legacyToolIds, type Message } from '../../shared/contract/message.ts';
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
