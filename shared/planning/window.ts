/**
 * The window rule every compacting strategy plans with: keep the newest `keep` messages, or the
 * newest `keepTokens` estimated tokens if that keeps more; then move the cutoff down so that no
 * tool call is separated from its result and no call still waiting for its result leaves, no
 * assistant turn carrying thinking is split, and (when asked) the kept tail begins with a user
 * turn; pinned messages (and the other half of a pinned tool pair) never leave; a plan whose leaving
 * messages are all system messages (their text is restated, so the context would not shrink) is a
 * skip. Tool pairs are matched by the ids of the `tool_use` and `tool_result` blocks each message
 * holds (several per message in native content). Pure: no I/O, no clock. Each rule but the user-turn cut is an
 * invariant of compaction (see docs/architecture.md, "Invariants").
 */
import type { MessageMeta } from '../contract/message.ts';
import type { Plan, SessionSnapshot, SkipPlan } from './types.ts';

/** How a strategy uses the window. */
export interface WindowRule {
  /** The strategy's name, recorded in the plan. */
  strategy: string;
  /** Newest messages kept verbatim (pinned ones are kept on top of these). */
  keep: number;
  /**
   * Estimated tokens (the messages' `tokenCount`) the kept tail holds at least, or the whole session
   * if it holds fewer; the larger of this tail and the `keep`-message one wins. Absent: messages only.
   */
  keepTokens?: number | undefined;
  /**
   * The kept tail begins with a user turn (see {@link startsUserTurn}): the cutoff moves down to the
   * nearest one, so only more is kept. Absent: false.
   */
  cutAtUserTurn?: boolean | undefined;
  /** Earlier summary messages stay (`slidingWindow`) or leave to be superseded (`summarize`). */
  keepSummaries: boolean;
  /** Whether a summary replaces what leaves: then the plan says what it covers and where it goes. */
  summarizes: boolean;
}

/**
 * Plans one compaction by the window rule.
 * @param messages the snapshot's live messages in ascending seq (checked by the caller).
 */
export function planWindow(_snapshot: SessionSnapshot, messages: MessageMeta[], rule: WindowRule): Plan {
  const { keep, keepTokens, strategy } = rule;
  const byCount = Math.max(0, messages.length - keep);
  const start = keepTokens === undefined ? byCount : Math.min(byCount, tokenTailStart(messages, keepTokens));
  if (start === 0) {
    if (keepTokens === undefined) {
      return skip(strategy, `${messages.length} messages, not more than the ${keep} kept`);
    }
    return skip(
      strategy,
      `${messages.length} messages of ${fmt(tokensOf(messages))} tokens, within the kept tail ` +
        `(${messagesText(keep)} or ${fmt(keepTokens)} tokens, whichever keeps more)`,
    );
  }

  const notes: string[] = [];
  const firstKept = messages[start];
  let cutoff = firstKept ? firstKept.seq - 1 : (messages[messages.length - 1]?.seq ?? -1);
  if (keepTokens === undefined) {
    notes.push(`window: newest ${keep} messages stay, cutoff at seq ${cutoff}`);
  } else {
    const tail = messages.slice(start);
    notes.push(
      `window: newest ${tail.length} messages (${fmt(tokensOf(tail))} tokens) stay, the larger of the ` +
        `${keep}-message and ${fmt(keepTokens)}-token tails, cutoff at seq ${cutoff}`,
    );
  }

  const pairs = indexToolPairs(messages);
  const abandoned = abandonedCalls(messages, pairs);
  cutoff = stopBeforePendingCalls(cutoff, pairs, abandoned, notes);
  // Every rule only moves the cutoff down, and each fall can give another something to do.
  for (let before = Number.NaN; before !== cutoff; ) {
    before = cutoff;
    cutoff = keepToolPairsWhole(cutoff, messages, pairs, notes);
    cutoff = keepThinkingTurnsWhole(cutoff, messages, notes);
    if (rule.cutAtUserTurn) cutoff = startAtUserTurn(cutoff, messages, notes);
  }

  const stay = partnersOfPinned(messages, pairs);
  const leaving = messages.filter(
    (m) => m.seq <= cutoff && !m.pinned && !stay.has(m.seq) && !(rule.keepSummaries && m.kind === 'summary'),
  );
  if (leaving.length === 0) return skip(strategy, `nothing can leave: ${notes[notes.length - 1]}`);

  const cover = rule.summarizes ? leaving.filter((m) => m.kind !== 'summary') : [];
  if (rule.summarizes && cover.length === 0) {
    return skip(strategy, 'only earlier summaries would leave; nothing new to summarize');
  }
  // A leaving system message's text is restated in the context: it frees nothing there.
  const restatedTokens = tokensOf(leaving.filter((m) => m.role === 'system'));
  const leavingTokens = tokensOf(leaving);
  if (leaving.every((m) => m.role === 'system')) {
    return skip(
      strategy,
      `only system messages would leave (${fmt(leavingTokens)} tokens), and the context restates their ` +
        'text: it would not get smaller',
    );
  }
  const leavingSeqs = leaving.map((m) => m.seq);
  const last = leavingSeqs[leavingSeqs.length - 1] as number;
  const leftUnanswered = leaving.flatMap((m) =>
    m.toolUseIds.filter((id) => abandoned.has(id)).map((id) => ({ toolCallId: id, seq: m.seq })),
  );
  for (const call of leftUnanswered) {
    notes.push(
      `tool call ${call.toolCallId} at seq ${call.seq} never got its result and the session moved on: ` +
        'it leaves with no result recorded',
    );
  }
  return {
    action: 'compact',
    strategy,
    cutoffSeq: last,
    leavingSeqs,
    coverSeqs: cover.map((m) => m.seq),
    summarySeq: rule.summarizes ? last : null,
    leavingTokens,
    restatedTokens,
    keptCount: messages.length - leaving.length,
    abandonedCalls: leftUnanswered,
    notes,
  };
}

/** A count for people: `20,000`. */
function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

/** `1 message`, `10 messages`. */
function messagesText(n: number): string {
  return `${fmt(n)} ${n === 1 ? 'message' : 'messages'}`;
}

/** Estimated tokens of some messages. */
function tokensOf(messages: MessageMeta[]): number {
  return messages.reduce((sum, m) => sum + m.tokenCount, 0);
}

/**
 * Index of the first message of the shortest tail holding at least `tokens` estimated tokens;
 * 0 when the whole session holds fewer.
 */
function tokenTailStart(messages: MessageMeta[], tokens: number): number {
  let sum = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    sum += (messages[i] as MessageMeta).tokenCount;
    if (sum >= tokens) return i;
  }
  return 0;
}

/**
 * Whether a message starts a user turn: a user message holding no tool result (kind `message`; a
 * user message carrying tool results is kind `tool_result`, a summary compactor wrote `summary`).
 */
export function startsUserTurn(m: MessageMeta): boolean {
  return m.role === 'user' && m.kind === 'message';
}

/**
 * Moves the cutoff down until the first message above it starts a user turn; below the oldest such
 * message, everything stays. An empty kept tail (everything leaves) is left as is: it begins nowhere.
 */
function startAtUserTurn(cutoff: number, messages: MessageMeta[], notes: string[]): number {
  const firstKept = messages.findIndex((m) => m.seq > cutoff);
  if (firstKept < 0 || startsUserTurn(messages[firstKept] as MessageMeta)) return cutoff;
  let start = firstKept - 1;
  while (start >= 0 && !startsUserTurn(messages[start] as MessageMeta)) start--;
  if (start < 0) {
    const result = (messages[0] as MessageMeta).seq - 1;
    notes.push(
      `no user turn starts at or below seq ${(messages[firstKept] as MessageMeta).seq}: everything stays`,
    );
    return result;
  }
  const result = (messages[start] as MessageMeta).seq - 1;
  notes.push(
    `the kept tail begins with the user turn at seq ${(messages[start] as MessageMeta).seq}: cutoff at seq ${result}`,
  );
  return result;
}

interface ToolPairs {
  /** tool_call_id -> seq of the call. */
  callSeq: Map<string, number>;
  /** tool_call_id -> seq of the (first) result. */
  resultSeq: Map<string, number>;
}

function indexToolPairs(messages: MessageMeta[]): ToolPairs {
  const callSeq = new Map<string, number>();
  const resultSeq = new Map<string, number>();
  for (const m of messages) {
    for (const id of m.toolUseIds) if (!callSeq.has(id)) callSeq.set(id, m.seq);
    for (const id of m.toolResultIds) if (!resultSeq.has(id)) resultSeq.set(id, m.seq);
  }
  return { callSeq, resultSeq };
}

/**
 * Calls that will never get their result: the tool's process died, and the session moved on — a
 * user message came after the call, or a later assistant turn made new calls (a turn ends at the
 * first row that is neither an assistant message nor a call). A call of the newest assistant turn
 * is not abandoned: the agent may still be waiting on it.
 */
function abandonedCalls(messages: MessageMeta[], pairs: ToolPairs): Set<string> {
  const abandoned = new Set<string>();
  // Walking back from the newest message: whether a user message, or a call of a later turn, has
  // been seen above the current position.
  let movedOn = false;
  let callsAbove = false;
  let turnHasCalls = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as MessageMeta;
    const assistantSide = m.role === 'assistant' || m.toolUseIds.length > 0;
    if (!assistantSide) {
      // The turn above this row has ended: its calls count as a later turn's from here down.
      if (turnHasCalls) callsAbove = true;
      turnHasCalls = false;
      if (m.role === 'user' && m.kind === 'message') movedOn = true;
      continue;
    }
    for (const id of m.toolUseIds) {
      if ((movedOn || callsAbove) && !pairs.resultSeq.has(id)) abandoned.add(id);
      turnHasCalls = true;
    }
  }
  return abandoned;
}

/** A call still waiting for its result pins the cutoff below it: the agent may be waiting on it. */
function stopBeforePendingCalls(
  cutoff: number,
  pairs: ToolPairs,
  abandoned: Set<string>,
  notes: string[],
): number {
  let result = cutoff;
  for (const [id, seq] of pairs.callSeq) {
    if (seq <= result && !pairs.resultSeq.has(id) && !abandoned.has(id)) {
      result = seq - 1;
      notes.push(`tool call ${id} at seq ${seq} still waits for its result: cutoff at seq ${result}`);
    }
  }
  return result;
}

/** Moves the cutoff down until no kept result has its call leaving (a fixpoint; the cutoff only falls). */
function keepToolPairsWhole(
  cutoff: number,
  messages: MessageMeta[],
  pairs: ToolPairs,
  notes: string[],
): number {
  let result = cutoff;
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i] as MessageMeta;
      if (m.seq <= result) break;
      for (const id of m.toolResultIds) {
        const call = pairs.callSeq.get(id);
        if (call !== undefined && call <= result) {
          result = call - 1;
          changed = true;
          notes.push(
            `tool result at seq ${m.seq} stays, so its call at seq ${call} stays: cutoff at seq ${result}`,
          );
        }
      }
    }
  }
  return result;
}

/**
 * Moves the cutoff below an assistant turn it would split when the turn carries thinking: adjacent
 * assistant messages are one turn, and its thinking blocks stay with the rest of it (a thinking
 * block signs the turn it opens; the Messages API wants the turn's blocks back together).
 */
function keepThinkingTurnsWhole(cutoff: number, messages: MessageMeta[], notes: string[]): number {
  const firstKept = messages.findIndex((m) => m.seq > cutoff);
  if (firstKept <= 0) return cutoff;
  const kept = messages[firstKept] as MessageMeta;
  if (kept.role !== 'assistant' || (messages[firstKept - 1] as MessageMeta).role !== 'assistant')
    return cutoff;
  let start = firstKept - 1;
  while (start > 0 && (messages[start - 1] as MessageMeta).role === 'assistant') start--;
  let end = firstKept;
  while (end + 1 < messages.length && (messages[end + 1] as MessageMeta).role === 'assistant') end++;
  if (!messages.slice(start, end + 1).some((m) => m.thinking)) return cutoff;
  const result = (messages[start] as MessageMeta).seq - 1;
  notes.push(
    `assistant turn from seq ${(messages[start] as MessageMeta).seq} carries thinking: cutoff at seq ${result}`,
  );
  return result;
}

/** Seqs that stay because the other half of their tool pair is pinned. */
function partnersOfPinned(messages: MessageMeta[], pairs: ToolPairs): Set<number> {
  const stay = new Set<number>();
  for (const m of messages) {
    if (!m.pinned) continue;
    for (const id of m.toolUseIds) {
      const partner = pairs.resultSeq.get(id);
      if (partner !== undefined) stay.add(partner);
    }
    for (const id of m.toolResultIds) {
      const partner = pairs.callSeq.get(id);
      if (partner !== undefined) stay.add(partner);
    }
  }
  return stay;
}

/** A plan that changes nothing, with the reason the ledger records. */
export function skip(strategy: string, reason: string): SkipPlan {
  return { action: 'skip', strategy, reason };
}
