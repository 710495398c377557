/**
 * How the archive statement describes the leaving seqs: their range minus the seqs inside it that
 * stay, or, when that is not shorter, the list itself.
 */
import { describe, expect, it } from 'vitest';
import { seqRange } from '../../worker/postgres/effects.ts';

describe('seqRange', () => {
  it('describes a contiguous run by its ends, with no exceptions', () => {
    expect(seqRange([5, 6, 7, 8])).toEqual({ first: 5, last: 8, exceptions: [] });
    expect(seqRange([0])).toEqual({ first: 0, last: 0, exceptions: [] });
  });

  it('lists the seqs inside the range that stay (pinned, system, a summary)', () => {
    expect(seqRange([0, 1, 3, 4, 7, 9])).toEqual({ first: 0, last: 9, exceptions: [2, 5, 6, 8] });
  });

  it('selects exactly the given seqs: the range minus the exceptions is the input', () => {
    const seqs = [2, 3, 5, 8, 13, 21, 34];
    const range = seqRange(seqs);
    if (range === null) throw new Error('expected a range');
    const selected = [];
    for (let seq = range.first; seq <= range.last; seq++)
      if (!range.exceptions.includes(seq)) selected.push(seq);
    expect(selected).toEqual(seqs);
  });

  it('gives up on an empty list, an unsorted one, or one with more gaps than the list needs', () => {
    expect(seqRange([])).toBeNull();
    expect(seqRange([3, 1])).toBeNull();
    expect(seqRange([1, 1, 2])).toBeNull();
    expect(seqRange([0, 1_000])).toBeNull();
  });
});
