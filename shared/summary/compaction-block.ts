/**
 * Anthropic's on-demand compaction (beta `compact-2026-09-04`, as documented in 2026-09: "Compaction
 * on demand", "Compaction that keeps recent turns", "Compaction and preserved thinking"): the
 * signed `compaction` block the API returns, and the conditions under which the turns kept after it
 * keep their thinking valid. Pure.
 */
import type { Block } from '../contract/blocks.ts';
import type { Role } from '../contract/message.ts';

/** The beta header value of on-demand compaction: sent on the compaction request and on every later request carrying the block. */
export const COMPACTION_BETA = 'compact-2026-09-04';

/**
 * The block as the API returns it: `content` is the readable summary, `signature` binds it. Stored
 * and sent back exactly as returned (every field, in order): the API refuses an edited block
 * (`compaction_content_mismatch`, `compaction_signature_invalid`).
 */
export interface CompactionBlock extends Block {
  type: 'compaction';
  content: string;
  signature: string;
}

/** Whether `block` is a compaction block with its readable content and signature. */
export function isCompactionBlock(block: unknown): block is CompactionBlock {
  const b = block as Partial<CompactionBlock> | null;
  return (
    typeof b === 'object' &&
    b !== null &&
    b.type === 'compaction' &&
    typeof b.content === 'string' &&
    b.content.trim() !== '' &&
    typeof b.signature === 'string' &&
    b.signature !== ''
  );
}

/** The compaction block a stored content holds (a summary row's), or null. */
export function compactionBlockOf(content: unknown): CompactionBlock | null {
  if (!Array.isArray(content)) return null;
  return content.find(isCompactionBlock) ?? null;
}

/**
 * Whether a model keeps earlier turns' thinking ("Preserved thinking", 2026-09: Claude Opus 4.5
 * and later Opus models, Sonnet 4.6 and later Sonnet models, Fable 5 and 5.1, Mythos 5, 5.1 and
 * Preview; not earlier Opus or Sonnet models, nor Haiku). An id this rule cannot read counts as
 * not preserving: a wrong "no" only drops thinking, a wrong "yes" fails the agent's next request.
 * @param model a model id such as `claude-opus-4-5`, `claude-sonnet-4-6-20260101`, `claude-fable-5-1`.
 */
export function modelPreservesThinking(model: string): boolean {
  const match = /^claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2})(?!\d))?/.exec(model.trim());
  if (!match) return false;
  const [, family, majorText, minorText] = match;
  const version = Number(majorText) + Number(minorText ?? 0) / 10;
  switch (family) {
    case 'opus':
      return version >= 4.5;
    case 'sonnet':
      return version >= 4.6;
    case 'fable':
    case 'mythos':
      return true;
    default:
      return false;
  }
}

/** What the conditions are checked on: the compaction as it ran and the history it leaves. */
export interface KeptThinkingFacts {
  /** The model the compaction request ran on (the response's `model`). */
  model: string;
  /** Whether the request sent the agent's own declared `tools` (not tools made up from the history). */
  toolsDeclared: boolean;
  /** Whether a system message was among the summarized ones (its text is restated in `system`, which changes it). */
  systemSummarized: boolean;
  /** Role of the last message of the compaction request (`user` or `assistant`). */
  lastSummarizedRole: 'user' | 'assistant' | 'system' | null;
  /**
   * The live rows kept after the block, ascending seq, with whether each sits below the cut (a
   * pinned message or a tool pair's partner kept from among the summarized ones).
   */
  kept: ReadonlyArray<{ role: Role; belowCut: boolean }>;
}

/** Whether kept turns keep their thinking after the compaction, and why (one sentence). */
export interface KeptThinkingVerdict {
  preserved: boolean;
  note: string;
}

/**
 * The documented conditions ("Compaction and preserved thinking") under which thinking in the turns
 * kept after a compaction block stays valid: (1) the compaction ran on a model with preserved
 * thinking; (2) the kept turns directly follow the summarized messages, unchanged, and the first
 * one has a different role from the last summarized message and is not a system message; (3)
 * `system` and `tools` are the same on the compaction request and afterwards (compactor sends the
 * session's own system text and declared tools, so this holds while the agent keeps sending them
 * and no system message was summarized, whose text compactor restates in `system`).
 */
export function keptThinkingVerdict(facts: KeptThinkingFacts): KeptThinkingVerdict {
  const no = (note: string): KeptThinkingVerdict => ({ preserved: false, note });
  if (!modelPreservesThinking(facts.model))
    return no(`the compaction ran on ${facts.model}, which does not keep earlier turns' thinking`);
  if (!facts.toolsDeclared)
    return no(
      "the session's tools are not declared (setSessionTools), so the compaction request could not carry the agent's tools",
    );
  if (facts.systemSummarized)
    return no('a system message was summarized; its text is restated in system, which changes system');
  if (facts.kept.some((k) => k.belowCut))
    return no(
      'messages kept from before the cut (pinned, or a tool pair) stand between the block and the kept turns',
    );
  const first = facts.kept[0];
  if (first === undefined) return { preserved: true, note: 'no turn was kept after the block' };
  const firstRole = first.role === 'tool' ? 'user' : first.role;
  if (firstRole === 'system') return no('the first kept message is a system message');
  if (firstRole === facts.lastSummarizedRole)
    return no(
      `the first kept message has the role of the last summarized one (${firstRole}), so the API merges them`,
    );
  return {
    preserved: true,
    note: 'kept turns keep their thinking while the agent sends the same system and tools as the compaction request',
  };
}
