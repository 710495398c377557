/**
 * What every strategy that rewrites messages in place (`clearToolResults`, `clearThinking`) plans
 * with: a {@link Rewrite} from a message's new content, and the plan of a set of rewrites, skipped
 * when it frees fewer tokens than the strategy's `clearAtLeast` (the prompt cache it breaks would
 * cost more than it saves). Pure: no I/O, no clock.
 */
import { type AnthropicContent, contentFacts, type StoredContent } from '../contract/blocks.ts';
import type { MessageMeta } from '../contract/message.ts';
import type { Plan, Rewrite } from './types.ts';
import { skip } from './window.ts';

/** A count for people: `20,000`. */
export function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

/** The rewrite of `meta` into Anthropic `content`: its rendering, token estimate and thinking flag recomputed. */
export function rewriteOf(meta: MessageMeta, content: AnthropicContent): Rewrite {
  const facts = contentFacts(content);
  return {
    seq: meta.seq,
    content,
    text: facts.text,
    tokenCount: facts.tokenCount,
    tokensBefore: meta.tokenCount,
    thinking: facts.thinking,
  };
}

/**
 * The stored content of `seq` from the snapshot's contents.
 * @throws {Error} when it was not read: the strategy's `reads` and `plan` disagree (a bug, never data).
 */
export function contentOf(
  contents: ReadonlyMap<number, StoredContent> | undefined,
  seq: number,
): StoredContent {
  const content = contents?.get(seq);
  if (content === undefined) throw new Error(`plan: the content of seq ${seq} was not read`);
  return content;
}

/** How a clearing plan is described and bounded. */
export interface ClearingRule {
  /** The strategy's name, recorded in the plan. */
  strategy: string;
  /** What a cleared block is called in reasons and notes: `tool result`, `thinking block`. */
  what: string;
  /** Skip when the rewrites free fewer estimated tokens than this. */
  clearAtLeast: number;
  /** Messages in the snapshot (all stay). */
  messageCount: number;
}

/**
 * The plan of `rewrites` (ascending by seq) that clear `blocks` blocks: a skip when there is
 * nothing to clear, when the placeholders would make the context larger (the reason says by how
 * much it would grow, never a negative number freed), or when it frees fewer than `clearAtLeast`
 * tokens; else a compact plan that moves no message out.
 */
export function clearingPlan(rule: ClearingRule, rewrites: Rewrite[], blocks: number, notes: string[]): Plan {
  const plural = (n: number) => `${fmt(n)} ${rule.what}${n === 1 ? '' : 's'}`;
  if (rewrites.length === 0) return skip(rule.strategy, `nothing to clear: ${notes[notes.length - 1] ?? ''}`);
  const tokensFreed = rewrites.reduce((sum, r) => sum + (r.tokensBefore - r.tokenCount), 0);
  if (tokensFreed < 0) {
    // Placeholders longer than what they replace: said as what would happen, not as a negative saving.
    return skip(
      rule.strategy,
      `clearing ${plural(blocks)} would grow the context by ${fmt(-tokensFreed)} tokens: ` +
        'the placeholders are longer than what they replace',
    );
  }
  if (tokensFreed < rule.clearAtLeast) {
    return skip(
      rule.strategy,
      `clearing ${plural(blocks)} would free ${fmt(tokensFreed)} tokens, less than clearAtLeast ` +
        `(${fmt(rule.clearAtLeast)}): not worth breaking the prompt cache`,
    );
  }
  notes.push(
    `${plural(blocks)} cleared in ${fmt(rewrites.length)} message(s): ${fmt(tokensFreed)} tokens freed`,
  );
  const last = rewrites[rewrites.length - 1] as Rewrite;
  return {
    action: 'compact',
    strategy: rule.strategy,
    cutoffSeq: last.seq,
    leavingSeqs: [],
    coverSeqs: [],
    summarySeq: null,
    leavingTokens: 0,
    keptCount: rule.messageCount,
    abandonedCalls: [],
    clearing: { rewrites, blocks, tokensFreed },
    notes,
  };
}
