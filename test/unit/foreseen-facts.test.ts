/**
 * What an apply's effects will report, known before they run (worker/postgres/effects.ts
 * `foreseenFacts`), so the ledger statement can go with them: archives and a summary written into
 * the session, counted from the metadata read under the row lock; nothing foreseen when an effect
 * needs the database's answer (a rewrite, a child session) or an archive is bound to fence.
 */
import { describe, expect, it } from 'vitest';
import type { MessageMeta } from '../../shared/contract/message.ts';
import type { Effect } from '../../shared/planning/effects.ts';
import type { Checkpoint } from '../../shared/summary/checkpoint.ts';
import { foreseenFacts } from '../../worker/postgres/effects.ts';
import type { LockedSession } from '../../worker/postgres/lock.ts';

const meta = (seq: number, tokenCount: number, pinned = false): MessageMeta => ({
  seq,
  role: 'user',
  kind: 'message',
  toolCallId: null,
  toolName: null,
  tokenCount,
  pinned,
  toolUseIds: [],
  toolResultIds: [],
  thinking: false,
});

const locked = (messages: MessageMeta[]): LockedSession => ({
  format: 'anthropic',
  messageCount: messages.length,
  tokenCount: messages.reduce((n, m) => n + m.tokenCount, 0),
  compactionVersion: 3,
  checkpoint: null,
  lastSeq: messages.at(-1)?.seq ?? 0,
  agentId: null,
  contextWindow: null,
  keyUsed: false,
  messages,
});

const session = locked([meta(1, 10), meta(2, 20), meta(3, 30, true), meta(4, 40), meta(5, 50)]);
const checkpoint = { goal: 'ship it' } as unknown as Checkpoint;
const summary: Effect = {
  type: 'writeSummary',
  into: 'session',
  seq: 4,
  text: 'summary',
  tokenCount: 7,
  checkpoint,
};

describe('foreseenFacts', () => {
  it('counts an archive and a summary into the session from the locked metadata', () => {
    const facts = foreseenFacts([{ type: 'archive', seqs: [1, 2, 4], cutoffSeq: 4 }, summary], session);
    expect(facts).toEqual({
      messagesAfter: 3,
      tokensAfter: 150 - 70 + 7,
      archived: 3,
      blocksCleared: null,
      childSessionId: null,
      session: { messageCount: 3, tokenCount: 87, checkpoint },
      written: checkpoint,
    });
  });

  it('foresees nothing for an archive bound to fence: a seq pinned, gone, or past the cutoff', () => {
    expect(foreseenFacts([{ type: 'archive', seqs: [2, 3], cutoffSeq: 4 }], session)).toBeNull();
    expect(foreseenFacts([{ type: 'archive', seqs: [2, 9], cutoffSeq: 9 }], session)).toBeNull();
    expect(foreseenFacts([{ type: 'archive', seqs: [4, 5], cutoffSeq: 4 }], session)).toBeNull();
  });

  it('foresees nothing for an effect that needs the database to answer, or without the metadata', () => {
    const child: Effect = { type: 'continueInChild', childSessionId: 'c', withoutSeqs: [1] };
    expect(foreseenFacts([child, { ...summary, into: 'child' }], session)).toBeNull();
    expect(foreseenFacts([{ type: 'archive', seqs: [1], cutoffSeq: 1 }], locked([]))).toBeNull();
  });
});
