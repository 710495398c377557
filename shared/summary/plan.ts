/**
 * What every LLM summarizer does around its API call, whichever API it is: the prompt of one call
 * (summary budget grown with the leaving tokens, old tool output pruned so the input stays under
 * what leaves), the input budget left for the transcript, the chunks a long transcript is folded
 * in, and the token ceiling of a summary. The `anthropic` and `openai` summarizers share it, so a
 * session is summarized the same way by either; only the request's wrapping differs. Pure but for
 * {@link foldLeaving}, which awaits the caller's calls.
 */
import { SummarizerConfigError, SummaryRejectedError } from '../contract/errors.ts';
import type { Message } from '../contract/message.ts';
import { estimateMessageTokens, estimateTextTokens } from '../contract/tokens.ts';
import { summaryBudgetTokens, summaryMaxTokens } from './budget.ts';
import type { Checkpoint } from './checkpoint.ts';
import { chunkByBudget } from './chunks.ts';
import { lastUserRequestOf } from './last-request.ts';
import { type AnswerForm, buildSummaryPrompt, renderTranscript, type SummaryPrompt } from './prompt.ts';
import { pruneToolOutputs, SMALL_LEAVING_TOKENS } from './prune.ts';
import {
  addUsage,
  type EstimateInput,
  leavingArray,
  pagesOf,
  type SummarizeInput,
  type SummaryEstimate,
  type SummaryResult,
  type SummaryUsage,
} from './summarizer.ts';

/** A transcript budget below this is a configuration mistake, not something to chunk around. */
export const MIN_TRANSCRIPT_TOKENS = 1_000;

/** Room for the prompt's working set: 20 paths of up to 300 characters, escaped. */
const WORKING_SET_RESERVE_TOKENS = 2_000;

/**
 * Keep the request's input under this share of the leaving tokens: the estimate counts the text as
 * the request carries it, not the few blocks and fields around it.
 */
const PRUNE_TARGET_RATIO = 0.95;

/** How a summarizer's requests carry the answer's schema and the prompt. */
export interface RequestShape {
  /** The JSON the request adds for the answer (the tool definition, or the response format). */
  schemaJson: string;
  /** How the model answers; default `tool`. */
  answer?: AnswerForm | undefined;
}

/** Estimated tokens of leaving messages (their contents). */
export function leavingTokensOf(messages: Message[]): number {
  return messages.reduce((n, m) => n + estimateMessageTokens(m.content), 0);
}

/**
 * Estimated tokens of a text as a request carries it: JSON-escaped (a newline is `\n`, a quote
 * `\"`), about 4 characters a token. A little over what the API counts, so the budget errs safe.
 */
export const requestTokens = (text: string) => estimateTextTokens(JSON.stringify(text));

/**
 * The prompt of one summary call and its summary budget.
 *
 * - The summary budget grows with the leaving tokens ({@link summaryBudgetTokens}, from
 *   `input.leavingTokens`, else this chunk's); `max_tokens` adds the analysis allowance.
 * - Old tool output is pruned ({@link pruneToolOutputs}) until the estimated input (system, answer
 *   schema, previous checkpoint, working set, user messages, transcript, instructions) is at most
 *   95% of this chunk's leaving tokens. Under {@link SMALL_LEAVING_TOKENS} leaving tokens nothing
 *   is pruned: the fixed part of the request is larger than they are whatever is cut, and the
 *   transcript is small enough to send whole.
 */
export function summaryPromptOf(
  input: SummarizeInput,
  shape: RequestShape,
): { prompt: SummaryPrompt; budget: number } {
  const leaving = leavingArray(input.leaving);
  const chunkTokens = leavingTokensOf(leaving);
  const budget = summaryBudgetTokens(input.maxSummaryTokens, input.leavingTokens ?? chunkTokens);
  const base = {
    previous: input.previous,
    leaving,
    maxSummaryTokens: budget,
    instructions: input.instructions,
    answer: shape.answer,
  };
  let transcript = leaving;
  if (chunkTokens >= SMALL_LEAVING_TOKENS) {
    const shell = buildSummaryPrompt({ ...base, transcript: [] });
    const overhead =
      estimateTextTokens(shape.schemaJson) +
      requestTokens(shell.system) +
      requestTokens(shell.user) -
      requestTokens(renderTranscript([]));
    const target = Math.floor(chunkTokens * PRUNE_TARGET_RATIO) - overhead;
    transcript = pruneToolOutputs(leaving, target, requestTokens).messages;
  }
  return { prompt: buildSummaryPrompt({ ...base, transcript }), budget };
}

/**
 * Input tokens of a request besides its transcript, estimated: system prompt, answer schema, the
 * instructions and working set (20 paths of at most 300 characters), and the carried checkpoint,
 * which may grow up to the summary budget between chunks.
 */
export function fixedInputTokens(input: Omit<SummarizeInput, 'leaving'>, shape: RequestShape): number {
  const budget = summaryBudgetTokens(input.maxSummaryTokens, input.leavingTokens ?? 0);
  const shell = buildSummaryPrompt({
    previous: input.previous,
    leaving: [],
    maxSummaryTokens: budget,
    instructions: input.instructions,
    answer: shape.answer,
  });
  return (
    estimateTextTokens(shell.system + shell.user + shape.schemaJson) + WORKING_SET_RESERVE_TOKENS + budget
  );
}

/**
 * The tokens a request of `maxInputTokens` leaves for its transcript.
 * @param who names the summarizer in the error (`anthropic summarizer`).
 * @throws {SummarizerConfigError} when that is under {@link MIN_TRANSCRIPT_TOKENS}: the message says
 *   what to raise `maxInputTokens` above.
 */
export function transcriptBudget(
  input: Omit<SummarizeInput, 'leaving'>,
  shape: RequestShape,
  maxInputTokens: number,
  who: string,
): number {
  const budget = maxInputTokens - fixedInputTokens(input, shape);
  if (budget < MIN_TRANSCRIPT_TOKENS) {
    throw new SummarizerConfigError(
      `${who}: maxInputTokens ${maxInputTokens} leaves ${budget} tokens for the transcript ` +
        `after the system prompt, tool, previous checkpoint and summary; raise it above ${maxInputTokens - budget + MIN_TRANSCRIPT_TOKENS}`,
    );
  }
  return budget;
}

/**
 * Summarizes `input.leaving` in chunks of at most `budget` transcript tokens, folded in order: each
 * call merges one chunk into the checkpoint of those before it. Pages arrive in order and gather
 * until they hold about two chunks; then every chunk but the last, which may still grow, is folded.
 * Chunking greedily from a chunk's start, the boundaries come out as they would over the whole list
 * at once, with about two chunks and a page in memory. The result's `lastUserRequest` is the last
 * chunk's with one, else the previous checkpoint's; usage is summed over the calls.
 * @throws {SummaryRejectedError} when there are no leaving messages; what `once` throws.
 */
export async function foldLeaving(
  input: SummarizeInput,
  budget: number,
  once: (input: SummarizeInput) => Promise<SummaryResult>,
): Promise<SummaryResult> {
  let previous = input.previous;
  let total: SummaryUsage | null = null;
  let lastRequest: string | null = null;
  const fold = async (chunk: Message[]) => {
    const result = await once({ ...input, previous, leaving: chunk });
    previous = result.checkpoint;
    total = total ? addUsage(total, result.usage) : result.usage;
    lastRequest = lastUserRequestOf(chunk) ?? lastRequest;
  };
  let open: Message[] = [];
  let openTokens = 0;
  for await (const page of pagesOf(input.leaving)) {
    for (const m of page) open.push(m);
    openTokens += leavingTokensOf(page);
    if (openTokens < 2 * budget) continue;
    const chunks = chunkByBudget(open, budget);
    open = chunks.pop() ?? [];
    openTokens = leavingTokensOf(open);
    for (const chunk of chunks) await fold(chunk);
  }
  for (const chunk of chunkByBudget(open, budget)) await fold(chunk);
  if (!previous || !total) throw new SummaryRejectedError('nothing to summarize: no leaving messages');
  const checkpoint: Checkpoint = previous;
  return {
    checkpoint: {
      ...checkpoint,
      lastUserRequest: lastRequest ?? input.previous?.lastUserRequest ?? checkpoint.lastUserRequest,
    },
    usage: total,
  };
}

/**
 * The token ceiling of a summary: one call per chunk of the transcript; each call carries the
 * prompt, the answer schema and the previous checkpoint (the calls after the first, the checkpoint
 * of the chunks before, up to the summary budget), and may answer up to its `max_tokens` (the budget
 * and the analysis allowance). An upper bound for one request: pruning usually makes the input
 * smaller than the leaving tokens. Chunks end at message boundaries, so an input budget only a few
 * messages long can take more calls than counted here, each carrying the prompt again.
 */
export function estimateSummary(
  input: EstimateInput,
  model: string,
  maxInputTokens: number,
  shape: RequestShape,
): SummaryEstimate {
  const budget = summaryBudgetTokens(input.maxSummaryTokens, input.leavingTokens);
  const fixed = fixedInputTokens(input, shape);
  const perChunk = maxInputTokens - fixed;
  const calls = perChunk > 0 ? Math.max(1, Math.ceil(input.leavingTokens / perChunk)) : 1;
  const shell = fixed - budget;
  return {
    model,
    inputTokens: input.leavingTokens + calls * shell + (calls - 1) * budget,
    maxOutputTokens: calls * summaryMaxTokens(budget),
  };
}
