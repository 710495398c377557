/**
 * The `extractive` summarizer: offline, deterministic, no LLM; the default when no API key is set.
 * It builds the same checkpoint shape as `anthropic` from the previous checkpoint and the leaving
 * messages, with plain heuristics that hold for any agent (SWE-agent, mini-swe-agent, OpenHands,
 * Claude Code, ...). Every item names the seq of the message it comes from.
 *
 * - goal: the previous goal, else the first user request: slash commands, IDE notices, harness
 *   complaints, interruption markers and demonstrations are not requests
 *   (shared/text/user-messages.ts); a later correction by the user is appended;
 * - lastUserRequest: the last user request or short answer, verbatim; condensed (head kept, a marker
 *   naming its seq) past {@link REQUEST_SHARE} of the budget. When it is also the goal's message (a
 *   copied task prompt), the goal is shortened to its opening, so the prompt shows once;
 * - userInstructions: the user's rule sentences and short corrections verbatim (a rule ending with a
 *   colon carries the command or list it introduces), each short answer with the question it
 *   answers; the newest wins on conflict (`instructions`);
 * - currentWork / nextStep: the todo in progress, a call still running, or the agent's last thought
 *   and the call it led to, with the code names its last messages keep naming (`focus`); the first
 *   open todo or stated intent, with what it points back at ("Let me fix this:") when it names
 *   nothing (`intents`). A previous next step is dropped once the agent has worked on (`state`);
 * - completed: calls that succeeded (exit code 0 when stated) and changed something, finished todos;
 *   a call that failed, was rejected or interrupted never is, nor a failure hidden behind a pipe
 *   into a filter (`x | tail` exits 0) (`completed`, `error-lines`); a rejection is a decision; a
 *   change a later message undid (`git checkout`/`restore`/`stash`/`reset --hard`, an edit swapping
 *   an earlier one back, the user asking to undo it) is not completed (`reverted`);
 * - blockers: the first meaningful error line of each failed result, expired once the same call (its
 *   command in normal form; a script written again as `fix2.py`) later succeeds, or fails again
 *   without that error in its output (it got past it), or a later edit or install names what the
 *   error names; expired ones become errorsAndFixes (`blockers`). Then reconciled with the command
 *   and test threads (`threads`, `run-state`): an error whose command or test last ran green is
 *   gone, and each one whose last run failed is listed as still failing, kept first by the budget;
 *   an error resolved through one call is resolved where the same message showed earlier through
 *   others (`same-error`); a one-off call's failure (a script written and run at once, an editor or
 *   harness tool) is behind once a test or build of the project passed after it (`moved-past`);
 * - commands: each build, test or run command once (program, subcommand, target), with its last
 *   outcome and the seq of its last run (`run-state`);
 * - decisions: choices between alternatives by the assistant or the user, with the reason given in
 *   the same message, and picks from a listed set of options (`decisions`); discoveries: assistant
 *   sentences stating a fact found (`intents`);
 * - files: paths with what was done to them and what changed (the lines an edit changed, a diff the
 *   agent printed, a script of its own that rewrote the file), changed files first and the scripts
 *   it wrote and ran after the files it ran (`files`); workingSet: every path;
 * - inProgress / pending: calls waiting for a result, the latest todo list (a tool's `todos`, or a
 *   printed ☐/☒/`- [ ]` checklist), the intents stated after the last tool result;
 * - openQuestions: questions nobody answered afterwards;
 * - summaries already in the transcript (a harness's compaction summary, an agent's structured
 *   summary) feed these fields by their headings (`summaries`);
 * - suspectedInjections: the leaving messages that read as prompt injections, quoted with their
 *   seq; a user message that reads as one gives no goal, rule or correction (`instructions`), and
 *   the finished checkpoint passes the guard both summarizers share (shared/summary/guard.ts).
 *
 * Lists merge with the previous checkpoint: over a list's cap, the oldest items are condensed into
 * one `Earlier:` item rather than dropped. Each list is guaranteed a share of `maxSummaryTokens`
 * (`budget`). Pure: no I/O, no clock, no randomness.
 *
 * The strategy's summary `instructions` are ignored: heuristics cannot follow free text. The ledger
 * row still records them, beside `extractive` as its summarizer.
 */

import type { Message } from '../contract/message.ts';
import {
  type Checkpoint,
  type CheckpointEntry,
  checkpointSchema,
  type ErrorFix,
  emptyCheckpoint,
  renderErrorFix,
  type StoredCheckpoint,
} from '../summary/checkpoint.ts';
import { guardCheckpoint } from '../summary/guard.ts';
import { clipRequest, lastUserRequestMessage } from '../summary/last-request.ts';
import {
  collectLeaving,
  noUsage,
  type SummarizeInput,
  type Summarizer,
  type SummaryResult,
} from '../summary/summarizer.ts';
import { detectError } from '../text/error-lines.ts';
import { cleanItem, clipWords, normalizeKey } from '../text/text.ts';
import { extractWorkingSet } from '../working-set/working-set.ts';
import { mergeBlockers, writtenNames } from './blockers.ts';
import { fitBudget } from './budget.ts';
import { completedItems, outcomes, rejectedItems } from './completed.ts';
import { decisionItems } from './decisions.ts';
import { describeCall } from './describe-call.ts';
import { fileItems } from './files.ts';
import { isUsable, safePrevious } from './input.ts';
import { goalOf, instructionItems } from './instructions.ts';
import { discoveryItems, questionItems } from './intents.ts';
import { type Item, merge } from './items.ts';
import {
  ITEM_CHARS,
  LIST_CAPS,
  type ListKey,
  MAX_WORKING_SET,
  REQUEST_SHARE,
  SHORT_GOAL_CHARS,
} from './limits.ts';
import { withoutMovedPast } from './moved-past.ts';
import { findReverts, revertItems, withoutReverted } from './reverted.ts';
import { commandItems, reconcileBlockers } from './run-state.ts';
import { withoutFixedTwins } from './same-error.ts';
import { currentState } from './state.ts';
import { transcriptSummaryItems } from './summaries.ts';
import { commandThreads, testThreads } from './threads.ts';
import { pairToolCalls, stringArgument, type ToolRun } from './tool-runs.ts';

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
  previous: Checkpoint | StoredCheckpoint | null,
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
  const ended = outcomes(runs);
  const state = currentState(messages, runs, ended);
  const told = transcriptSummaryItems(messages);
  const hasState = state.inProgress.length + state.pending.length > 0;
  const reverts = findReverts(messages, runs, ended);
  const { blockers: merged, fixed } = mergeBlockers(prior.blockers, messages, runs, ended);
  const written = writtenNames(runs);
  const commands = commandThreads(runs, ended, errorLine, written);
  const fixedSeqs = new Set(fixed.flatMap((f) => (f.fix?.seq == null ? [] : [f.fix.seq])));
  const reconciled = reconcileBlockers(merged, commands, testThreads(runs, ended), fixedSeqs, written);
  const twins = withoutFixedTwins(reconciled.blockers, [...fixed, ...reconciled.resolved]);
  const movedPast = withoutMovedPast(twins.blockers, commands);
  const blockers = movedPast.blockers;
  const lists: Record<ListKey, Item[]> = {
    userInstructions: instructionItems(prior.userInstructions, messages).concat(told.userInstructions ?? []),
    completed: withoutReverted(
      merge(
        prior.completed,
        [...(told.completed ?? []), ...completedItems(runs, ended, state.todosDone)],
        LIST_CAPS.completed,
      ),
      reverts,
    ),
    // The state at the cutoff replaces the previous one; with nothing new, the previous one still holds.
    inProgress: hasState
      ? merge([], state.inProgress, LIST_CAPS.inProgress)
      : merge(prior.inProgress, [], LIST_CAPS.inProgress),
    pending: hasState
      ? merge([], [...(told.pending ?? []), ...state.pending], LIST_CAPS.pending)
      : merge(prior.pending, told.pending ?? [], LIST_CAPS.pending),
    blockers: [...blockers, ...(told.blockers ?? [])],
    decisions: merge(
      prior.decisions,
      [
        ...(told.decisions ?? []),
        ...decisionItems(messages),
        ...rejectedItems(runs, ended),
        ...revertItems(reverts),
      ].sort(bySeq),
      LIST_CAPS.decisions,
    ),
    openQuestions: merge(prior.openQuestions, questionItems(messages), LIST_CAPS.openQuestions),
    commands: commandItems(prior.commands, commands, written),
    errorsAndFixes: mergeFixes(prior.errorsAndFixes, [
      ...summaryFixes(told.errorsAndFixes),
      ...fixed,
      ...reconciled.resolved,
      ...twins.resolved,
      ...movedPast.resolved,
    ]),
    discoveries: merge(
      prior.discoveries,
      [...(told.discoveries ?? []), ...discoveryItems(messages)],
      LIST_CAPS.discoveries,
    ),
    files: fileItems(prior.files, runs, ended),
  };
  const request = lastUserRequestMessage(messages);
  const requestChars = Number.isFinite(maxSummaryTokens)
    ? Math.max(1_200, Math.floor(maxSummaryTokens * REQUEST_SHARE * 4))
    : Number.POSITIVE_INFINITY;
  const lastUserRequest = request ? condenseRequest(request, requestChars) : prior.lastUserRequest;
  let { goal, seq: goalSeq } = goalOf(prior.goal, messages);
  if (!goal && told.goal?.[0]) goal = told.goal[0].text;
  // A copied task prompt is both the goal and the last request: the goal only names it.
  if (request && goalSeq === request.seq && lastUserRequest.length > SHORT_GOAL_CHARS)
    goal = goalOf('', messages, SHORT_GOAL_CHARS).goal;
  const fixedParts = {
    goal,
    lastUserRequest,
    currentWork: entryOf(state.currentWork ?? told.currentWork?.[0]) ?? prior.currentWork,
    // A previous next step is stale once the agent has worked on since: only kept when nothing new is known.
    nextStep:
      entryOf(state.nextStep ?? told.nextStep?.[0]) ??
      (hasState || state.currentWork ? null : prior.nextStep),
    workingSet: extractWorkingSet(messages, prior.workingSet, priorUserWords(prior)).slice(
      0,
      MAX_WORKING_SET,
    ),
  };
  const coveredThroughSeq = messages[messages.length - 1]?.seq ?? 0;
  const fitted = fitBudget(fixedParts, lists, maxSummaryTokens, coveredThroughSeq);
  return guardCheckpoint(fitted, { leaving: messages, previous: prior });
}

/** A failed call's first error line, as blockers read it. */
function errorLine(run: ToolRun): string | null {
  if (!run.result) return null;
  const command = stringArgument(run.args, ['command', 'cmd', 'script']);
  return detectError(run.result.content, describeCall(run).inspect, command);
}

/** What a previous checkpoint kept of the user's words: they still say what the user asked for. */
function priorUserWords(prior: Checkpoint): string[] {
  return [prior.goal, prior.lastUserRequest, ...prior.userInstructions.map((e) => e.text)];
}

function bySeq(a: Item, b: Item): number {
  return (a.seq ?? -1) - (b.seq ?? -1);
}

function entryOf(item: Item | null | undefined): CheckpointEntry | null {
  if (!item) return null;
  const text = cleanItem(item.text, ITEM_CHARS);
  return text ? { text, seq: item.seq } : null;
}

/** The request verbatim, or past `max` characters its head and a marker naming its seq and length. */
function condenseRequest(request: Message, max: number): string {
  const text = clipRequest(request.content);
  if (text.length <= max) return text;
  const marker = `\n[… condensed: the request has ${request.content.length} characters; read message seq ${request.seq} for all of it]`;
  return clipWords(text, Math.max(200, max - marker.length)) + marker;
}

/** Previous errors and fixes, then new ones (a newer one for the same error replaces it), newest kept. */
function mergeFixes(previous: ErrorFix[], fresh: Item[]): Item[] {
  const all: Item[] = [
    ...previous.map((fix) => ({ text: renderErrorFix(fix), seq: fix.seq, prev: true, fix })),
    ...fresh,
  ];
  const last = new Map<string, number>();
  all.forEach((item, i) => {
    last.set(normalizeKey(item.fix?.error ?? item.text), i);
  });
  return all
    .filter((item, i) => last.get(normalizeKey(item.fix?.error ?? item.text)) === i)
    .slice(-LIST_CAPS.errorsAndFixes);
}

/** A transcript summary's "errors and fixes" lines: `error: fix` / `error → fix` split when they can be. */
function summaryFixes(items: Item[] | undefined): Item[] {
  return (items ?? []).map((item) => {
    const [error = item.text, fix] = item.text.split(
      /\s+(?:→|->|—|–)\s+|:\s+(?:fixed by|fix(?:ed)?:?)\s+/i,
      2,
    );
    const entry: ErrorFix = {
      error: cleanItem(error, ITEM_CHARS) || item.text,
      fix: fix ? cleanItem(fix, ITEM_CHARS) : 'resolved (from a summary in the transcript)',
      seq: item.seq,
    };
    return { text: renderErrorFix(entry), seq: item.seq, fix: entry };
  });
}
