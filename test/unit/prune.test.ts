/**
 * Unit tests of old tool output pruning before a summary request (shared/summary/prune.ts).
 */
import { describe, expect, it } from 'vitest';
import { estimateTextTokens } from '../../shared/contract/tokens.ts';
import { renderTranscript } from '../../shared/summary/prompt.ts';
import {
  KEEP_NEWEST_TOOL_OUTPUTS,
  prunedMarker,
  pruneText,
  pruneToolOutputs,
} from '../../shared/summary/prune.ts';
import { transcript } from '../support/transcript-builder.ts';

/** A pytest run's output of about `lines` × 70 characters, ending in an error when `error` is given. */
function output(step: number, lines: number, error?: string): string {
  const body = Array.from(
    { length: lines },
    (_, i) => `tests/test_${step}.py::case_${i} PASSED ${'.'.repeat(40)}`,
  );
  if (error)
    body.splice(
      Math.floor(lines / 2),
      0,
      'Traceback (most recent call last):',
      '  File "x.py", line 3',
      error,
    );
  return body.join('\n');
}

function session(steps: number) {
  const t = transcript().user('Make the test suite pass.');
  for (let i = 0; i < steps; i++) {
    t.bash(
      `pytest tests/test_${i}.py`,
      output(i, 50, i % 3 === 0 ? `KeyError: 'col_${i}'` : undefined),
      i % 3 === 0 ? 1 : 0,
    );
    t.assistant(`Ran step ${i}.`);
  }
  return t.messages;
}

const tokens = (ms: ReturnType<typeof session>) => estimateTextTokens(renderTranscript(ms));

describe('pruneToolOutputs', () => {
  it('changes nothing when the transcript already fits', () => {
    const messages = session(3);
    const result = pruneToolOutputs(messages, tokens(messages));
    expect(result.messages).toBe(messages);
    expect(result).toMatchObject({ pruned: 0, prunedChars: 0, fits: true });
  });

  it('cuts old tool output until the transcript fits, and says where the full text is', () => {
    const messages = session(12);
    const target = Math.floor(tokens(messages) / 2);
    const result = pruneToolOutputs(messages, target);
    expect(result.fits).toBe(true);
    expect(result.transcriptTokens).toBeLessThanOrEqual(target);
    expect(tokens(result.messages)).toBe(result.transcriptTokens);
    expect(result.pruned).toBeGreaterThan(0);
    const cut = result.messages.filter((m) => m.content.includes('chars of old tool output'));
    expect(cut).toHaveLength(result.pruned);
    for (const m of cut)
      expect(m.content).toMatch(
        new RegExp(`pruned \\d+ chars of old tool output; seq ${m.seq} in the archive`),
      );
    // Only tool output is cut; user and assistant messages are as they were.
    for (const [i, m] of result.messages.entries()) {
      if (m.kind !== 'tool_result') expect(m).toBe(messages[i]);
    }
  });

  it(`leaves the newest ${KEEP_NEWEST_TOOL_OUTPUTS} tool outputs whole and cuts older ones harder`, () => {
    const messages = session(12);
    const result = pruneToolOutputs(messages, Math.floor(tokens(messages) * 0.6));
    const results = result.messages.filter((m) => m.kind === 'tool_result');
    const originals = messages.filter((m) => m.kind === 'tool_result');
    for (let i = results.length - KEEP_NEWEST_TOOL_OUTPUTS; i < results.length; i++) {
      expect(results[i]?.content).toBe(originals[i]?.content);
    }
    const lengths = results.slice(0, -KEEP_NEWEST_TOOL_OUTPUTS).map((m) => m.content.length);
    expect(lengths[0]).toBeLessThan(lengths[lengths.length - 1] as number);
  });

  it('keeps the error lines of the cut part, so a blocker survives pruning', () => {
    const messages = session(12);
    const result = pruneToolOutputs(messages, Math.floor(tokens(messages) / 4));
    const text = result.messages.map((m) => m.content).join('\n');
    for (const i of [0, 3, 6, 9]) expect(text).toContain(`KeyError: 'col_${i}'`);
  });

  it('returns its best with fits false when even the least it keeps is over the target', () => {
    const messages = session(12);
    const result = pruneToolOutputs(messages, 10);
    expect(result.fits).toBe(false);
    expect(result.transcriptTokens).toBeLessThan(tokens(messages));
    expect(result.transcriptTokens).toBe(tokens(result.messages));
  });

  it('cuts a long tool call too (a file written whole), not a short one', () => {
    const t = transcript().user('Write the module.');
    t.tool('write_file', { path: 'src/big.py', content: 'x = 1\n'.repeat(800) }, 'ok');
    for (let i = 0; i < 5; i++) t.bash(`ls ${i}`, 'a\nb');
    const result = pruneToolOutputs(t.messages, 200);
    const call = result.messages.find((m) => m.kind === 'tool_call' && m.toolName === 'write_file');
    expect(call?.content).toContain('chars of old tool output');
    const short = result.messages.filter((m) => m.kind === 'tool_call' && m.toolName === 'bash');
    expect(short.every((m) => !m.content.includes('pruned'))).toBe(true);
  });
});

describe('pruneText', () => {
  it('keeps a head and a tail around the marker', () => {
    const text = `${'a'.repeat(1_000)}${'b'.repeat(1_000)}`;
    const { content, removed } = pruneText(text, 300, 7, false);
    expect(content.startsWith('a'.repeat(200))).toBe(true);
    expect(content.endsWith('b'.repeat(100))).toBe(true);
    expect(content).toContain(prunedMarker(1_700, 7));
    expect(removed).toBe(1_700);
  });

  it('leaves a text within the cap, or one the marker would not shorten, as it is', () => {
    expect(pruneText('short', 300, 1, true)).toEqual({ content: 'short', removed: 0 });
    const text = 'x'.repeat(320);
    expect(pruneText(text, 300, 1, true)).toEqual({ content: text, removed: 0 });
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(1_000);
    const { content } = pruneText(text, 301, 1, false);
    expect(content).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});
