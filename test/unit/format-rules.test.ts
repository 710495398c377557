/**
 * The session formats' row rules (shared/formats/format.ts) as the strategies use them: each
 * format clears its own rows and leaves every other shape alone (a summary's text in a Chat
 * Completions session, an Anthropic array in a Responses one), and every format name has rules.
 */
import { describe, expect, it } from 'vitest';
import type { StoredContent } from '../../shared/contract/blocks.ts';
import { SESSION_FORMATS } from '../../shared/contract/session-format.ts';
import { SESSION_FORMAT_RULES } from '../../shared/formats/registry.ts';

const clearing = {
  clearable: new Set(['call_1']),
  placeholder: (id: string, tokens: number) => `[tool result cleared: ${id}, ${tokens} tokens]`,
  clearedPrefix: '[tool result cleared: ',
};

/** One tool result of call_1 in each format. */
const RESULTS: Record<string, StoredContent> = {
  anthropic: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'x'.repeat(400) }],
  'openai-chat': { role: 'tool', tool_call_id: 'call_1', content: 'x'.repeat(400) },
  'openai-responses': { type: 'function_call_output', call_id: 'call_1', output: 'x'.repeat(400) },
  'ai-sdk': {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_1',
        toolName: 'bash',
        output: { type: 'text', value: 'x'.repeat(400) },
      },
    ],
  },
};

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
});
