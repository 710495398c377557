/**
 * `clearToolResults { keep, clearAtLeast, clearToolInputs, excludeTools }`: no summary and no LLM
 * call (like the Messages API's context editing `clear_tool_uses_20250919`). Beyond the `keep`
 * newest tool uses, each older tool result's content is replaced by a short placeholder that says
 * what was there and that compactor archived it; the `tool_result` block itself stays (its
 * `tool_use_id`, and `is_error` if present), so every tool pair stays whole and the context stays
 * valid. With `clearToolInputs`, the matching `tool_use` blocks' `input` becomes `{}` too. The
 * original messages are archived whole and the live ones rewritten in place (same seq), so a
 * restore puts them back exactly. Skipped, with the reason, when it would free fewer than
 * `clearAtLeast` estimated tokens. Pinned messages, and results whose call is pinned, are never
 * touched. In an `openai-chat` session the same holds for Chat Completions messages
 * (shared/formats/openai-chat/clearing.ts): a tool message's `content` becomes the placeholder, its
 * `tool_call_id` stays, and `clearToolInputs` empties a call's `function.arguments` to `"{}"`; in
 * an `openai-responses` session (shared/formats/openai-responses/clearing.ts) a call output item's
 * `output` becomes the placeholder, its `call_id` stays, and `clearToolInputs` empties a
 * `function_call`'s `arguments` to `"{}"`.
 * Pure: planning only.
 */
import { z } from 'zod';
import type { StoredContent } from '../contract/blocks.ts';
import type { MessageMeta } from '../contract/message.ts';
import type { SessionFormat } from '../formats/format.ts';
import { SESSION_FORMAT_RULES } from '../formats/registry.ts';
import { clearingPlan, contentOf, fmt } from '../planning/clearing.ts';
import type { Rewrite } from '../planning/types.ts';
import { skip } from '../planning/window.ts';
import type { StrategyUnit } from './unit.ts';

/** Tool uses whose results stay when the shorthand names no number. */
export const DEFAULT_KEEP_TOOL_USES = 3;
/** Tokens a clearing must free at least when none is given. */
export const DEFAULT_CLEAR_AT_LEAST = 1_000;

export const clearToolResultsStrategySchema = z
  .object({
    type: z.literal('clearToolResults'),
    /** The newest tool uses (counted over every tool, excluded ones too) whose results stay. */
    keep: z.number().int().min(0).max(100_000).default(DEFAULT_KEEP_TOOL_USES),
    /**
     * Estimated tokens a clearing must free, else it is skipped (recorded with the reason): a
     * cleared block changes the prompt, so the agent's prompt cache is written again.
     */
    clearAtLeast: z.number().int().min(0).max(10_000_000).default(DEFAULT_CLEAR_AT_LEAST),
    /** Also replace the cleared calls' `tool_use` input with `{}`. */
    clearToolInputs: z.boolean().default(false),
    /** Tool names whose calls and results are never touched. */
    excludeTools: z.array(z.string().min(1).max(200)).max(200).default([]),
  })
  .strict();

export type ClearToolResultsStrategy = z.infer<typeof clearToolResultsStrategySchema>;

/** How every placeholder begins: a result that begins so was cleared already. */
export const CLEARED_RESULT_PREFIX = '[tool result cleared: ';

/**
 * The placeholder of a cleared tool result, e.g.
 * `[tool result cleared: bash, 4,210 tokens, archived by compactor (compaction <id>)]`.
 * @param tokens the estimated tokens of the result's content.
 * @param compactionId the compaction that archives it; absent in a dry run.
 */
export function clearedResultText(
  toolName: string,
  tokens: number,
  compactionId: string | undefined,
): string {
  const where = compactionId === undefined ? '' : ` (compaction ${compactionId})`;
  return `${CLEARED_RESULT_PREFIX}${toolName}, ${fmt(tokens)} tokens, archived by compactor${where}]`;
}

/** The client tool uses of a session in order (by seq, then block order), with the seq of each. */
function toolUses(messages: MessageMeta[]): Array<{ id: string; seq: number }> {
  const seen = new Set<string>();
  const out: Array<{ id: string; seq: number }> = [];
  for (const m of messages) {
    for (const id of m.toolUseIds) {
      if (seen.has(id)) continue;
      seen.add(id);
      out.push({ id, seq: m.seq });
    }
  }
  return out;
}

/** The ids of the tool uses older than the `keep` newest. */
function olderCalls(messages: MessageMeta[], keep: number): Array<{ id: string; seq: number }> {
  const calls = toolUses(messages);
  return calls.slice(0, Math.max(0, calls.length - keep));
}

/** The tool name of each call, from the calls' stored blocks, else the row's first tool name. */
function toolNames(
  messages: MessageMeta[],
  ids: ReadonlySet<string>,
  contents: ReadonlyMap<number, StoredContent> | undefined,
  format: SessionFormat,
): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (!m.toolUseIds.some((id) => ids.has(id))) continue;
    const content = contentOf(contents, m.seq);
    for (const [id, name] of format.toolNames(content)) names.set(id, name);
    for (const id of m.toolUseIds) if (!names.has(id) && m.toolName !== null) names.set(id, m.toolName);
  }
  return names;
}

export const clearToolResults: StrategyUnit<ClearToolResultsStrategy> = {
  type: 'clearToolResults',
  // The schema's input allows the defaulted options to be absent; its output is the type.
  schema: clearToolResultsStrategySchema as unknown as z.ZodType<ClearToolResultsStrategy>,
  usage: 'clearToolResults[:N]',
  // Tail options are passed on for the strict schema to refuse: it keeps tool uses, not a tail.
  shorthand: (n, tail) => ({ type: 'clearToolResults', keep: n ?? DEFAULT_KEEP_TOOL_USES, ...tail }),
  describe: (strategy) => {
    const extras = [
      `at least ${fmt(strategy.clearAtLeast)} tokens`,
      ...(strategy.clearToolInputs ? ['inputs too'] : []),
      ...(strategy.excludeTools.length > 0 ? [`except ${strategy.excludeTools.join(', ')}`] : []),
    ];
    return `clearToolResults:${strategy.keep} (${extras.join(', ')})`;
  },
  // Each tool use is a call and a result: after a clearing that could not help, that many new
  // messages bring `keep` new tool uses.
  kept: (strategy) => strategy.keep * 2,
  summarizes: false,
  summaryOptions: () => null,
  reads: (messages, strategy) => {
    const older = new Set(olderCalls(messages, strategy.keep).map((c) => c.id));
    return messages
      .filter((m) => m.toolUseIds.some((id) => older.has(id)) || m.toolResultIds.some((id) => older.has(id)))
      .map((m) => m.seq);
  },
  plan: (snapshot, messages, strategy) => {
    const name = 'clearToolResults';
    const calls = toolUses(messages);
    if (calls.length <= strategy.keep) {
      return skip(name, `${fmt(calls.length)} tool uses, not more than the ${fmt(strategy.keep)} kept`);
    }
    const older = olderCalls(messages, strategy.keep);
    const olderIds = new Set(older.map((c) => c.id));
    // The session's format rewrites its rows: a strategy never reads a block type itself.
    const format = SESSION_FORMAT_RULES[snapshot.format];
    const names = toolNames(messages, olderIds, snapshot.contents, format);
    const excluded = new Set(strategy.excludeTools);
    const pinnedCalls = new Set(messages.filter((m) => m.pinned).flatMap((m) => m.toolUseIds));
    const clearable = new Set(
      older.filter((c) => !excluded.has(names.get(c.id) ?? '') && !pinnedCalls.has(c.id)).map((c) => c.id),
    );
    const firstKept = calls[calls.length - strategy.keep];
    const notes = [
      firstKept === undefined
        ? 'no tool use keeps its result (keep 0)'
        : `the newest ${fmt(strategy.keep)} tool uses keep their results (from seq ${firstKept.seq})`,
    ];
    const skippedByName = older.length - clearable.size;
    if (skippedByName > 0) {
      notes.push(`${fmt(skippedByName)} older tool use(s) stay: an excluded tool, or a pinned call`);
    }

    // Results to clear, then (with clearToolInputs) the inputs of calls whose results are cleared.
    const rewritten = new Map<number, StoredContent>();
    const answered = new Set<string>();
    // Tool uses whose result or input this plan clears: what the ledger counts.
    const touched = new Set<string>();
    const clearing = {
      clearable,
      placeholder: (id: string, tokens: number) =>
        clearedResultText(names.get(id) ?? 'tool', tokens, snapshot.compactionId),
      clearedPrefix: CLEARED_RESULT_PREFIX,
    };
    for (const m of messages) {
      if (m.pinned || !m.toolResultIds.some((id) => clearable.has(id))) continue;
      const content = contentOf(snapshot.contents, m.seq);
      const result = format.clearToolResults(content, clearing);
      for (const id of result.answered) answered.add(id);
      for (const id of result.cleared) touched.add(id);
      if (result.content !== null) rewritten.set(m.seq, result.content);
    }
    if (strategy.clearToolInputs) {
      for (const m of messages) {
        if (m.pinned || !m.toolUseIds.some((id) => answered.has(id))) continue;
        const content = rewritten.get(m.seq) ?? contentOf(snapshot.contents, m.seq);
        const result = format.clearToolInputs(content, answered);
        if (!result) continue;
        for (const id of result.cleared) touched.add(id);
        rewritten.set(m.seq, result.content);
      }
    }
    if (rewritten.size === 0) {
      notes.push(`the ${fmt(clearable.size)} older tool use(s) that may be cleared are cleared already`);
    }
    const rewrites: Rewrite[] = messages
      .filter((m) => rewritten.has(m.seq))
      .map((m) => format.rewriteOf(m, rewritten.get(m.seq) as StoredContent));
    return clearingPlan(
      {
        strategy: name,
        what: 'tool use',
        clearAtLeast: strategy.clearAtLeast,
        messageCount: messages.length,
      },
      rewrites,
      touched.size,
      notes,
    );
  },
};
