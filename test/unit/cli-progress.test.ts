/**
 * The progress bar: drawn on a terminal, with lines printed above it intact; nothing at all (no
 * bar, no escape code) when the stream is not a terminal.
 */
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../worker/cli/progress.ts';

function sink(isTTY: boolean) {
  const stream = {
    text: '',
    isTTY,
    columns: 100,
    write(t: string) {
      stream.text += t;
      return true;
    },
  };
  return stream;
}

describe('progress bar', () => {
  it('draws a bar with the count on a terminal, and prints lines above it whole', () => {
    const err = sink(true);
    const out = sink(true);
    const progress = createProgress(err);
    expect(progress.drawing).toBe(true);
    progress.start('importing', 3, 'files');
    progress.print(out, 'imported a: 10 messages');
    expect(out.text).toBe('imported a: 10 messages\n');
    expect(err.text).toContain('importing [');
    expect(err.text).toContain('0/3 files');
    progress.increment();
    progress.increment();
    progress.print(err, 'not imported: b.jsonl:2: role: invalid');
    expect(err.text).toContain('not imported: b.jsonl:2: role: invalid\n');
    expect(err.text).toMatch(/not imported: b\.jsonl:2: role: invalid\n[\s\S]*2\/3 files/);
    progress.stop();
  });

  it('grows the total rather than overflow when the work outruns its estimate', () => {
    const err = sink(true);
    const progress = createProgress(err);
    progress.start('sweeping', 10, 'sessions');
    progress.update(12);
    progress.print(err, 'line');
    expect(err.text).toContain('12/12 sessions');
    progress.stop();
  });

  it('writes nothing but the printed lines when the stream is not a terminal', () => {
    const err = sink(false);
    const out = sink(false);
    const progress = createProgress(err);
    expect(progress.drawing).toBe(false);
    progress.start('importing', 2, 'files');
    progress.print(out, 'imported a');
    progress.increment();
    progress.print(err, 'not imported: b');
    progress.update(2);
    progress.stop();
    expect(out.text).toBe('imported a\n');
    expect(err.text).toBe('not imported: b\n');
  });

  it('can be stopped when it never started, and twice', () => {
    const progress = createProgress(sink(true));
    progress.stop();
    progress.start('x', 1, 'y');
    progress.stop();
    progress.stop();
  });
});
