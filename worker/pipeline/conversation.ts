/**
 * The conversation an `anthropic-compaction` summary sends (an `openai-compaction` summary: the
 * Responses input items), and what its answer means for the thinking of the turns it keeps. Pure:
 * the rows come from the `loadConversation` read.
 */
import type { ContextRead } from '../../producer/postgres/context-query.ts';
import { renderContext } from '../../shared/context/render.ts';
import type { Block } from '../../shared/contract/blocks.ts';
import { SummarizerConfigError } from '../../shared/contract/errors.ts';
import type { MessageMeta } from '../../shared/contract/message.ts';
import { SESSION_FORMAT_RULES } from '../../shared/formats/registry.ts';
import type { CompactPlan } from '../../shared/planning/types.ts';
import type { KeptThinkingFacts } from '../../shared/summary/compaction-block.ts';
import type { ConversationRequest } from '../../shared/summary/summarizer.ts';

/** Stand-in description of a tool the history calls when the session declared none. */
const STAND_IN_DESCRIPTION =
  'A tool this conversation called (its definition was not declared to compactor).';

/**
 * The compaction request's conversation: the leaving rows (the previous summary or compaction block
 * first) rendered exactly as `loadContext` renders them, with the session's `system`, and its
 * declared tools, or stand-ins named after the tools the messages call (a request whose messages
 * hold tool calls must define tools).
 * For the `openai-compaction` summarizer, the leaving items of an `openai-responses` session as
 * its context renders them (shared/formats/openai-responses/context.ts), in `input`.
 * @param summarizer the name of the summarizer that sends it.
 * @throws {SummarizerConfigError} for a session not in the format the summarizer's API takes
 *   (`anthropic` for `anthropic-compaction`, `openai-responses` for `openai-compaction`).
 */
export function conversationOf(read: ContextRead, summarizer = 'anthropic-compaction'): ConversationRequest {
  if (summarizer === 'openai-compaction') {
    if (read.format !== 'openai-responses') {
      throw new SummarizerConfigError(
        `the openai-compaction summarizer sends the conversation to the Responses API's /responses/compact, and session "${read.liveId}" has format "${read.format}": summarize it with another summarizer`,
      );
    }
    const { input } = SESSION_FORMAT_RULES[read.format].renderContext(read.render);
    return {
      system: undefined,
      messages: [],
      tools: [],
      toolsDeclared: false,
      input: input as NonNullable<ConversationRequest['input']>,
    };
  }
  if (read.format !== 'anthropic') {
    // Its request is the Messages API's, and its block is sent back to that API only.
    throw new SummarizerConfigError(
      `the anthropic-compaction summarizer sends the conversation to the Messages API, and session "${read.liveId}" has format "${read.format}": summarize it with the anthropic or extractive summarizer${read.format === 'openai-responses' ? ' (or openai-compaction)' : ''}`,
    );
  }
  const rendered = renderContext({ ...read.render, thinking: 'keep', compactionBlock: 'native' });
  // The Messages API's request, as the `anthropic` format renders it.
  const messages = rendered.messages as unknown as ConversationRequest['messages'];
  if (read.tools !== null) {
    return {
      system: rendered.system as Block[] | undefined,
      messages,
      tools: read.tools,
      toolsDeclared: true,
    };
  }
  // The tools the messages call, as the format reads its calls.
  const names = new Set<string>();
  for (const m of messages) {
    for (const [, name] of SESSION_FORMAT_RULES[read.format].toolNames(m.content)) names.add(name);
  }
  const tools = [...names].map((name) => ({
    name,
    description: STAND_IN_DESCRIPTION,
    input_schema: { type: 'object' },
  }));
  return { system: rendered.system as Block[] | undefined, messages, tools, toolsDeclared: false };
}

/**
 * The facts the kept-thinking conditions are checked on (shared/summary/compaction-block.ts), but
 * the model, which the answer names: from the plan and the session's metadata as planned.
 * @param messages the session's live messages (metadata), ascending seq, as the plan saw them.
 */
export function keptFactsOf(
  request: ConversationRequest,
  plan: CompactPlan,
  messages: readonly MessageMeta[],
): Omit<KeptThinkingFacts, 'model'> {
  const leaving = new Set(plan.leavingSeqs);
  let lead = 0;
  while (lead < messages.length && messages[lead]?.role === 'system') lead++;
  const kept = messages
    .slice(lead)
    .filter((m) => !leaving.has(m.seq) && m.kind !== 'summary')
    .map((m) => ({ role: m.role, belowCut: m.seq < plan.cutoffSeq }));
  const last = request.messages[request.messages.length - 1];
  const lastRole =
    last?.role === 'user' || last?.role === 'assistant' || last?.role === 'system' ? last.role : null;
  return {
    toolsDeclared: request.toolsDeclared,
    systemSummarized: messages.slice(lead).some((m) => leaving.has(m.seq) && m.role === 'system'),
    lastSummarizedRole: lastRole,
    kept,
  };
}
