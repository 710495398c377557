/**
 * The `openai-responses` session format's row rules (format.ts): a row holds one Responses API
 * input item; clearing as clearing.ts says. Pure.
 */
import { MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import { clearOneResult, type SessionFormat } from '../format.ts';
import {
  clearedReasoning,
  clearedResponsesInput,
  clearedResponsesOutput,
  responsesOutputStartsWith,
  responsesRewriteOf,
  responsesToolNames,
} from './clearing.ts';
import { isOutputItem, isTypedResponsesItem, responsesFacts } from './item.ts';

/** The `openai-responses` format's row rules, for the registry. */
export const openaiResponsesFormat: SessionFormat = {
  name: 'openai-responses',
  toolNames: responsesToolNames,
  clearToolResults(content, clearing) {
    // A call output answers one call (its `call_id`).
    const output = isTypedResponsesItem(content) && isOutputItem(content) ? content : null;
    return clearOneResult(
      clearing,
      output && {
        callId: String(output.call_id),
        cleared: (prefix) => responsesOutputStartsWith(output, prefix),
        tokens: () => responsesFacts(output).tokenCount - MESSAGE_OVERHEAD_TOKENS,
        replaced: (placeholder) => clearedResponsesOutput(output, placeholder),
      },
    );
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
