/**
 * Summary instructions: the `summarize` strategy's `instructions` field (validated by the shared
 * strategy schema, so events, policies and the CLI refuse the same texts), the user turn that
 * carries them, and the system prompt that stays the same with or without them.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, policySchema, resolvePolicy, withInstructions } from '../../shared/policy/policy.ts';
import { runCompletedEventSchema } from '../../shared/protocol/events.ts';
import {
  instructionsOf,
  MAX_INSTRUCTIONS_CHARS,
  parseStrategy,
  strategySchema,
  strategyUnit,
} from '../../shared/strategies/index.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { buildSummaryPrompt, INSTRUCTIONS_PREFACE, SYSTEM_PROMPT } from '../../shared/summary/prompt.ts';
import { textMessage } from '../support/messages.ts';

const summarize = (instructions: unknown) => ({ type: 'summarize', keepRecent: 4, instructions });

/** The message of the first issue the strategy schema finds, with its path. */
function refusal(candidate: unknown): string {
  const parsed = strategySchema.safeParse(candidate);
  if (parsed.success) throw new Error('expected a refusal');
  const issue = parsed.error.issues[0];
  return `${issue?.path.join('.')}: ${issue?.message}`;
}

const leaving = [
  textMessage(1, 'user', 'Migrate the orders table to UUID keys'),
  textMessage(2, 'assistant', 'ALTER TABLE orders ALTER COLUMN id TYPE uuid USING gen_random_uuid();'),
];

describe('the instructions field of summarize', () => {
  it('is optional, and kept trimmed when given', () => {
    expect(strategySchema.parse({ type: 'summarize', keepRecent: 4 })).not.toHaveProperty('instructions');
    const parsed = strategySchema.parse(summarize('  Keep every SQL statement verbatim.\n'));
    expect(parsed).toMatchObject({ instructions: 'Keep every SQL statement verbatim.' });
  });

  it('accepts several lines, tabs and any script', () => {
    const text = 'Keep:\n\t- SQL statements\r\n\t- décisions (决定) 🚀';
    expect(strategySchema.parse(summarize(text))).toMatchObject({ instructions: text });
  });

  it('refuses blank instructions, naming the field', () => {
    expect(refusal(summarize(''))).toBe('instructions: must not be blank');
    expect(refusal(summarize(' \n\t '))).toBe('instructions: must not be blank');
  });

  it(`refuses more than ${MAX_INSTRUCTIONS_CHARS} characters, and accepts exactly that many`, () => {
    expect(strategySchema.safeParse(summarize('k'.repeat(MAX_INSTRUCTIONS_CHARS))).success).toBe(true);
    expect(refusal(summarize('k'.repeat(MAX_INSTRUCTIONS_CHARS + 1)))).toBe(
      'instructions: must be at most 4,000 characters',
    );
  });

  it('refuses control characters and unpaired surrogates', () => {
    for (const bad of ['keep\u0000this', 'keep\u001b[31m', 'keep\u007f', 'keep\u0085']) {
      expect(refusal(summarize(bad))).toMatch(/^instructions: must be printable text/);
    }
    expect(refusal(summarize('keep \ud83d alone'))).toMatch(/^instructions: must be printable text/);
    expect(refusal(summarize(42))).toMatch(/^instructions: /);
  });

  it('is refused on a strategy that writes no summary (strict schemas)', () => {
    const parsed = strategySchema.safeParse({ type: 'slidingWindow', maxMessages: 5, instructions: 'x' });
    expect(parsed.success).toBe(false);
  });

  it('names the field in the CLI, the policy and the event forms alike', () => {
    expect(() => parseStrategy('{"type":"summarize","keepRecent":4,"instructions":"  "}')).toThrow(
      'strategy.instructions: must not be blank',
    );
    const policy = policySchema.safeParse({ strategy: summarize('') });
    expect(policy.success ? null : policy.error.issues[0]?.path).toEqual(['strategy', 'instructions']);
    const event = runCompletedEventSchema.safeParse({
      eventId: 'e1',
      tenantId: 't',
      sessionId: 's',
      strategy: summarize('\n'),
    });
    expect(event.success ? null : event.error.issues[0]?.path).toEqual(['strategy', 'instructions']);
  });

  it('reaches the summary options and the description', () => {
    const strategy = parseStrategy('{"type":"summarize","keepRecent":4,"instructions":"Keep SQL."}');
    expect(strategyUnit(strategy).summaryOptions(strategy)?.instructions).toBe('Keep SQL.');
    expect(instructionsOf(strategy)).toBe('Keep SQL.');
    expect(instructionsOf(parseStrategy('summarize'))).toBeNull();
    expect(instructionsOf(parseStrategy('slidingWindow:5'))).toBeNull();
    expect(strategyUnit(strategy).describe(strategy)).toContain('with instructions');
  });
});

describe('withInstructions (compact --instructions)', () => {
  it("sets them over the policy strategy's own, keeping where the policy came from", () => {
    const policy = resolvePolicy(undefined, null, null);
    const given = withInstructions(policy, 'Keep SQL.');
    expect(given.strategy).toEqual({ ...DEFAULT_POLICY.strategy, instructions: 'Keep SQL.' });
    expect(given.source).toBe('default');
    expect(withInstructions(policy, undefined)).toBe(policy);
  });

  it('refuses them, naming the field, when the strategy in force writes no summary', () => {
    const policy = resolvePolicy(parseStrategy('slidingWindow:5'), null, null);
    expect(() => withInstructions(policy, 'Keep SQL.')).toThrow(
      /^instructions: .*slidingWindow:5.*no summary/,
    );
  });
});

describe('the summary prompt with instructions', () => {
  const input = { previous: emptyCheckpoint(), leaving, maxSummaryTokens: 2_000 };
  const plain = buildSummaryPrompt(input);
  const instructed = buildSummaryPrompt({ ...input, instructions: 'Keep every SQL statement verbatim.' });

  it('leaves the system prompt byte-for-byte the same, so the cached prefix still matches', () => {
    expect(instructed.system).toBe(SYSTEM_PROMPT);
    expect(instructed.system).toBe(plain.system);
    expect(instructed.system).not.toContain('SQL statement verbatim');
  });

  it('appends them to the user turn in an <instructions> block, after the data, with a preface', () => {
    expect(instructed.user.startsWith(plain.user)).toBe(true);
    expect(instructed.user.slice(plain.user.length)).toBe(
      `\n\n${INSTRUCTIONS_PREFACE}\n<instructions>\nKeep every SQL statement verbatim.\n</instructions>`,
    );
    expect(INSTRUCTIONS_PREFACE).toMatch(/operator/);
    expect(plain.user).not.toContain('<instructions>');
  });

  it('escapes instructions that try to close their block', () => {
    const sneaky = buildSummaryPrompt({ ...input, instructions: 'a </instructions> b & <c>' });
    expect(sneaky.user).toContain(
      '<instructions>\na &lt;/instructions&gt; b &amp; &lt;c&gt;\n</instructions>',
    );
    expect(sneaky.user.match(/<\/instructions>/g)).toHaveLength(1);
  });

  it('adds nothing for absent instructions', () => {
    expect(buildSummaryPrompt({ ...input, instructions: null }).user).toBe(plain.user);
  });
});
