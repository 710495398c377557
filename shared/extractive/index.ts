/**
 * The `extractive` summarizer: offline, deterministic, no LLM; the default when no API key is set.
 * It builds the same checkpoint shape as `anthropic` from the previous checkpoint and the leaving
 * messages, with plain heuristics that hold for any agent (SWE-agent, mini-swe-agent, OpenHands,
 * Claude Code, ...):
 *
 * - goal: the previous goal, else the first user message, clipped to {@link GOAL_CHARS};
 * - lastUserRequest: the last user message, verbatim;
 * - workingSet: {@link extractWorkingSet}, every path;
 * - blockers: the first meaningful error line of each failed tool result, dropped once the same call
 *   later succeeds;
 * - decisions: assistant sentences that state a decision or a cause ("the fix is", "instead of");
 * - completed: short descriptions of tool calls that succeeded (`edited src/a.py`, `ran: pytest`);
 * - inProgress / pending: calls still waiting for a result, the agent's todo list, and the intents the
 *   agent stated after its last tool result;
 * - openQuestions: questions nobody answered afterwards.
 *
 * Lists merge with the previous checkpoint (newest kept), and the oldest items go first when the
 * rendered checkpoint would exceed `maxSummaryTokens`. Pure: no I/O, no clock, no randomness.
 *
 * The strategy's summary `instructions` are ignored: heuristics cannot follow free text. The ledger
 * row still records them, beside `extractive` as its summarizer.
 *
 * This file assembles the checkpoint; each heuristic lives in its own module beside it (`tool-runs`,
 * `describe-call`, `shell`, `error-lines`, `blockers`, `completed`, `state`, `intents`, `budget`).
 */

import type { Message } from '../contract/message.ts';
import { type Checkpoint, checkpointSchema, emptyCheckpoint } from '../summary/checkpoint.ts';
import { lastUserRequestOf } from '../summary/last-request.ts';
import {
  collectLeaving,
  noUsage,
  type SummarizeInput,
  type Summarizer,
  type SummaryResult,
} from '../summary/summarizer.ts';
import { extractWorkingSet } from '../working-set/working-set.ts';
import { mergeBlockers } from './blockers.ts';
import { fitBudget } from './budget.ts';
import { completedItems } from './completed.ts';
import { isUsable, safePrevious } from './input.ts';
import { decisionItems, questionItems } from './intents.ts';
import { type Item, merge } from './items.ts';
import { GOAL_CHARS, LIST_CAPS, type ListKey, MAX_WORKING_SET } from './limits.ts';
import { currentState } from './state.ts';
import { clipWords, collapse } from './text.ts';
import { pairToolCalls } from './tool-runs.ts';

/** Longest last user request kept verbatim, in characters (the checkpoint schema's bound). */
export { REQUEST_CHARS } from '../summary/last-request.ts';
export { GOAL_CHARS, ITEM_CHARS, LIST_CAPS } from './limits.ts';

/**
 * Creates the `extractive` summarizer. Its `summarize` reports {@link noUsage} and never rejects on
 * bad input; an error reading paged leaving messages (the database) is passed on.
 */
export function createExtractiveSummarizer(): Summarizer {
  return {
    name: 'extractive',
    async summarize(input: SummarizeInput): Promise<SummaryResult> {
      // Reads the leaving messages whole: its rules (state at the cutoff, first request as goal)
      // look across all of them, and it pays no LLM for their size.
      const given = input?.leaving;
      const pages = given !== null && typeof given === 'object' && Symbol.asyncIterator in given;
      const leaving = Array.isArray(given) || pages ? await collectLeaving(given) : [];
      const checkpoint = extractCheckpoint(input?.previous ?? null, leaving, input?.maxSummaryTokens);
      return { checkpoint, usage: noUsage() };
    },
  };
}

/**
 * The checkpoint of `previous` merged with `leaving` (ascending seq), within about `maxSummaryTokens`
 * tokens of {@link renderCheckpoint} text (goal, last request and working set are never trimmed, so
 * they alone may exceed it). Always passes `checkpointSchema`; never throws: with no usable message it
 * returns the previous checkpoint (or an empty one), and an unexpected failure returns the same.
 */
export function extractCheckpoint(
  previous: Checkpoint | null,
  leaving: Message[],
  maxSummaryTokens: number = Number.POSITIVE_INFINITY,
): Checkpoint {
  let prior = emptyCheckpoint();
  try {
    prior = safePrevious(previous);
    const messages = (Array.isArray(leaving) ? leaving : []).filter(isUsable);
    if (messages.length === 0) return prior;
    return checkpointSchema.parse(build(prior, messages, maxSummaryTokens));
  } catch {
    return prior;
  }
}

function build(prior: Checkpoint, messages: Message[], maxSummaryTokens: number): Checkpoint {
  const runs = pairToolCalls(messages);
  const state = currentState(messages, runs);
  const hasState = state.inProgress.length + state.pending.length > 0;
  const lists: Record<ListKey, Item[]> = {
    completed: merge(prior.completed, completedItems(runs, state.todosDone), LIST_CAPS.completed),
    // The state at the cutoff replaces the previous one; with nothing new, the previous one still holds.
    inProgress: hasState
      ? merge([], state.inProgress, LIST_CAPS.inProgress)
      : merge(prior.inProgress, [], LIST_CAPS.inProgress),
    pending: hasState
      ? merge([], state.pending, LIST_CAPS.pending)
      : merge(prior.pending, [], LIST_CAPS.pending),
    blockers: mergeBlockers(prior.blockers, messages, runs),
    decisions: merge(prior.decisions, decisionItems(messages), LIST_CAPS.decisions),
    openQuestions: merge(prior.openQuestions, questionItems(messages), LIST_CAPS.openQuestions),
  };
  const fixed = {
    goal: prior.goal.trim() ? prior.goal : goalFrom(messages),
    lastUserRequest: lastUserRequestOf(messages) ?? prior.lastUserRequest,
    workingSet: extractWorkingSet(messages, prior.workingSet).slice(0, MAX_WORKING_SET),
  };
  const coveredThroughSeq = messages[messages.length - 1]?.seq ?? 0;
  return fitBudget(fixed, lists, maxSummaryTokens, coveredThroughSeq);
}

/** The goal from the first user message: framing tags removed, clipped to {@link GOAL_CHARS}. */
function goalFrom(messages: Message[]): string {
  const first = messages.find((m) => m.role === 'user' && m.kind === 'message' && m.content.trim());
  // Tags that frame a request (`<pr_description>`, `<issue>`) are markup, not words of the goal.
  return first ? clipWords(collapse(first.content.replace(/<\/?[\w-]+>/g, ' ')), GOAL_CHARS) : '';
}
