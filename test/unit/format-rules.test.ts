/**
 * The session formats' row rules (shared/formats/format.ts) as the strategies use them: each
 * format clears its own rows and leaves every other shape alone (a summary's text in a Chat
 * Completions session, an Anthropic array in a Responses one), lists the image a message of it
 * holds, and every format name has rules. The rows are each format's own examples.
 */
import { describe, expect, it } from 'vitest';
import type { StoredContent } from '../../shared/contract/blocks.ts';
import { SESSION_FORMATS } from '../../shared/contract/session-format.ts';
import type { FormatExamples } from '../../shared/formats/format.ts';
import { mediaRefsOf, SESSION_FORMAT_RULES } from '../../shared/formats/registry.ts';
import { pngOf } from '../support/media.ts';

const clearing = {
  clearable: new Set(['call_1']),
  placeholder: (id: string, tokens: number) => `[tool result cleared: ${id}, ${tokens} tokens]`,
  clearedPrefix: '[tool result cleared: ',
};

/**
 * Each format's example rows, from its folder's `examples.ts` (shared/formats/format.ts,
 * `FormatExamples`): a format added to the registry is tested here without a line of this file.
 */
const EXAMPLES: Record<string, FormatExamples> = Object.fromEntries(
  await Promise.all(
    SESSION_FORMATS.map(async (name) => {
      const module = (await import(`../../shared/formats/${name}/examples.ts`)) as {
        examples: FormatExamples;
      };
      return [name, module.examples] as const;
    }),
  ),
);

/** One tool result of call_1 in each format. */
const RESULTS: Record<string, StoredContent> = Object.fromEntries(
  Object.entries(EXAMPLES).map(([name, examples]) => [name, examples.toolResult]),
);

describe('session format rules', () => {
  it('exist for every session format', () => {
    expect(Object.keys(SESSION_FORMAT_RULES).sort()).toEqual([...SESSION_FORMATS].sort());
  });

  it.each(SESSION_FORMATS)(
    '%s clears its own tool result once, and a second time finds it cleared',
    (name) => {
      const rules = SESSION_FORMAT_RULES[name];
      const first = rules.clearToolResults(RESULTS[name] as StoredContent, clearing);
      expect(first.cleared).toEqual(['call_1']);
      expect(JSON.stringify(first.content)).toContain('[tool result cleared: call_1, ');
      const again = rules.clearToolResults(first.content as StoredContent, clearing);
      expect(again).toEqual({ content: null, answered: ['call_1'], cleared: [] });
    },
  );

  it.each(SESSION_FORMATS)('%s leaves the other formats’ rows and plain text alone', (name) => {
    const rules = SESSION_FORMAT_RULES[name];
    const others = [
      'a summary, as text',
      ...Object.entries(RESULTS)
        .filter(([other]) => other !== name)
        .map(([, content]) => content),
    ];
    for (const content of others) {
      expect(rules.clearToolResults(content, clearing).content).toBeNull();
      expect(rules.clearToolInputs(content, new Set(['call_1']))).toBeNull();
      expect(rules.clearThinking(content)).toBeNull();
      expect(rules.toolNames(content)).toEqual([]);
    }
  });

  it.each(SESSION_FORMATS)('%s lists the image of a message, captioned by its text', (name) => {
    const png = pngOf(40, 30, 200);
    const stored = EXAMPLES[name]?.image(png.toString('base64'));
    expect(mediaRefsOf(name, 3, stored)).toEqual([
      {
        seq: 3,
        index: 0,
        kind: 'image',
        mediaType: 'image/png',
        source: 'base64',
        bytes: png.length,
        tokens: expect.any(Number),
        caption: 'see this',
      },
    ]);
  });

  it.each(SESSION_FORMATS)(
    '%s gives the inline image of a message with its media type, and none of a tool result',
    (name) => {
      const png = pngOf(40, 30, 200).toString('base64');
      const rules = SESSION_FORMAT_RULES[name];
      expect(rules.imagesOf(EXAMPLES[name]?.image(png))).toEqual([{ data: png, mediaType: 'image/png' }]);
      expect(rules.imagesOf(EXAMPLES[name]?.toolResult)).toEqual([]);
      expect(rules.imagesOf('a summary, as text')).toEqual([]);
    },
  );
});
