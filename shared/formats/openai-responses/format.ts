/**
 * The `openai-responses` session format's row rules (format.ts): a row holds one Responses API
 * input item; clearing as clearing.ts says. Pure.
 */
import { MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import type { SessionFormat } from '../format.ts';
import {
  clearedReasoning,
  clearedResponsesInput,
  clearedResponsesOutput,
  responsesOutputStartsWith,
  responsesRewriteOf,
  responsesToolNames,
} from './clearing.ts';
import { isOutputItem, isTypedResponsesItem, responsesFacts } from './item.ts';

export const openaiResponsesFormat: SessionFormat = {
  name: 'openai-responses',
  toolNames: responsesToolNames,
  clearToolResults(content, clearing) {
    // A call output answers one call (its `call_id`).
    if (!isTypedResponsesItem(content) || !isOutputItem(content))
      return { content: null, answered: [], cleared: [] };
    const id = String(content.call_id);
    if (!clearing.clearable.has(id)) return { content: null, answered: [], cleared: [] };
    if (responsesOutputStartsWith(content, clearing.clearedPrefix))
      return { content: null, answered: [id], cleared: [] };
    const tokens = responsesFacts(content).tokenCount - MESSAGE_OVERHEAD_TOKENS;
    const cleared = clearedResponsesOutput(content, clearing.placeholder(id, tokens));
    return cleared === null
      ? { content: null, answered: [id], cleared: [] }
      : { content: cleared, answered: [id], cleared: [id] };
  },
  clearToolInputs(content, ids) {
    const cleared = clearedResponsesInput(content, ids);
    return cleared === null ? null : { content: cleared, cleared: [String(cleared.call_id)] };
  },
  clearThinking(content) {
    const cleared = clearedReasoning(content);
    return cleared === null ? null : { content: cleared, dropped: 1 };
  },
  rewriteOf(meta, content) {
    if (!isTypedResponsesItem(content))
      throw new Error(`openai-responses: seq ${meta.seq} holds no Responses item`);
    return responsesRewriteOf(meta, content);
  },
};
