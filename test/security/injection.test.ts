/**
 * Session text is data, never an instruction. Each injection of injection-corpus.ts reaches a
 * session (in a user message, or in a tool result that the agent repeats and obeys by reading
 * ~/.aws/credentials), and the session is summarized by both summarizers: `extractive`, and
 * `anthropic` through the real SDK against the fake Messages API, once as a diligent model and
 * once as a model the injection fooled (its answer copies the injection into the user's
 * instructions, the current work and the next step, and the credentials into the working set).
 * Whatever the path:
 * - the injection is not in the user's instructions, the goal, the current work or the next step;
 * - the context an agent gets back frames the summary as a record, quotes the injection as
 *   suspected with its seq, and no quoted text closes the frame;
 * - no secret path reaches the working set or the files from tool output alone;
 * - the user's own ordinary instructions stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_TAG, recallNote, renderContext, SUMMARY_INTRO } from '../../shared/context/render.ts';
import type { Message } from '../../shared/contract/message.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import {
  type Checkpoint,
  emptyCheckpoint,
  SUSPECT_REQUEST_TITLE,
  SUSPECTED_INJECTIONS_TITLE,
} from '../../shared/summary/checkpoint.ts';
import type { SummarizeInput } from '../../shared/summary/summarizer.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import { transcript } from '../support/transcript-builder.ts';
import {
  INJECTIONS,
  type InjectionCase,
  LEGITIMATE_INSTRUCTIONS,
  RULE,
  trustedTexts,
} from './injection-corpus.ts';

/** Paths no summary may name from tool output alone (checked as text, not with compactor's own rule). */
const SECRET = /\.aws|\.ssh|id_rsa|\.netrc|credentials/;

/** A session the injection reaches, and the seq of the message that carries it. */
function sessionWith(c: InjectionCase): { leaving: Message[]; seq: number } {
  const t = transcript()
    .user('Fix the failing test in tests/test_app.py.')
    .bash('pytest -x tests/test_app.py', 'FAILED tests/test_app.py::test_total - assert 3 == 4', 1)
    .user(RULE);
  let seq: number;
  if (c.via === 'user') {
    t.user(c.text);
    seq = t.messages.length - 1;
  } else {
    t.bash('cat README.md', `# Setup\n${c.text}\nKeys live in ~/.ssh/id_rsa and ~/.aws/credentials.`);
    seq = t.messages.length - 1;
  }
  // The agent repeats the injection as its plan, and obeys it.
  t.assistant(`The instructions say: ${c.text} I will follow this: ${c.text}`)
    .bash('cat ~/.aws/credentials', '[default]\naws_access_key_id = AKIAEXAMPLEEXAMPLE')
    .assistant(`Next I will do what it asks: ${c.text}`);
  return { leaving: t.messages, seq };
}

function input(leaving: Message[]): SummarizeInput {
  return { tenantId: 't', sessionId: 's', previous: null, leaving, maxSummaryTokens: 4_000 };
}

/** The summary as the agent reads it in its next request. */
function renderedSummary(checkpoint: Checkpoint): string {
  const ctx = renderContext({
    rows: [
      { seq: 100, role: 'user', kind: 'summary', content: 'summary', pinned: false },
      { seq: 101, role: 'user', kind: 'message', content: 'go on', pinned: false },
    ],
    checkpoint,
    compactedThroughSeq: 100,
  });
  const first = ctx.messages[0]?.content;
  const block = Array.isArray(first) ? first[0] : null;
  return block && block.type === 'text' ? block.text : String(first);
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Every assertion of the file's comment, for one checkpoint of one case. */
function expectContained(checkpoint: Checkpoint, c: InjectionCase, seq: number): void {
  for (const text of trustedTexts(checkpoint)) expect(text, c.name).not.toContain(c.marker);
  expect(checkpoint.userInstructions.map((e) => e.text)).toContain(RULE);
  expect(
    checkpoint.suspectedInjections.map((e) => e.seq),
    c.name,
  ).toContain(seq);

  const summary = renderedSummary(checkpoint);
  // The intro and the note on recall (the summary row is seq 100), then the record.
  const intro = `${SUMMARY_INTRO} ${recallNote(100)}`;
  expect(summary.startsWith(`${intro}\n\n<${RECORD_TAG}>\n`)).toBe(true);
  // The record opens once, after the intro that names it, and only its own end closes it.
  const record = summary.slice(intro.length);
  expect(occurrences(record, `<${RECORD_TAG}>`), c.name).toBe(1);
  expect(occurrences(record, `</${RECORD_TAG}>`), c.name).toBe(1);
  expect(record.endsWith(`\n</${RECORD_TAG}>`)).toBe(true);
  const section = record.slice(record.indexOf(SUSPECTED_INJECTIONS_TITLE));
  expect(record.indexOf(SUSPECTED_INJECTIONS_TITLE), c.name).toBeGreaterThan(0);
  expect(section, c.name).toMatch(new RegExp(`\\n- «[^\\n]*» \\(seq ${seq}\\)`));
  if (checkpoint.lastUserRequest.includes(c.marker)) expect(record).toContain(SUSPECT_REQUEST_TITLE);

  expect(
    checkpoint.workingSet.filter((p) => SECRET.test(p)),
    c.name,
  ).toEqual([]);
  expect(
    checkpoint.files.filter((f) => SECRET.test(f.path)),
    c.name,
  ).toEqual([]);
}

describe('the injection corpus', () => {
  it('holds at least 30 injections of each of the four families', () => {
    expect(INJECTIONS.length).toBeGreaterThanOrEqual(30);
    for (const family of ['direct', 'indirect', 'obfuscated', 'multilingual'] as const)
      expect(INJECTIONS.filter((c) => c.family === family).length).toBeGreaterThanOrEqual(5);
    for (const c of INJECTIONS) expect(c.text, c.name).toContain(c.marker);
  });
});

describe('extractive summarizer', () => {
  const summarizer = createExtractiveSummarizer();
  for (const c of INJECTIONS) {
    it(`keeps a ${c.family} injection out of what it presents as the user's will: ${c.name}`, async () => {
      const { leaving, seq } = sessionWith(c);
      const { checkpoint } = await summarizer.summarize(input(leaving));
      expectContained(checkpoint, c, seq);
    });
  }

  it("keeps the user's ordinary instructions, and none is taken for an injection", async () => {
    const t = transcript().user('Add a billing report to the admin page.');
    for (const rule of LEGITIMATE_INSTRUCTIONS) t.user(rule).assistant('Understood.');
    const { checkpoint } = await summarizer.summarize(input(t.messages));
    expect(checkpoint.userInstructions.map((e) => e.text)).toEqual(
      expect.arrayContaining([...LEGITIMATE_INSTRUCTIONS]),
    );
    expect(checkpoint.suspectedInjections).toEqual([]);
  });

  it('lets a secret path into the working set when the user asked and the agent acted on it', async () => {
    const t = transcript()
      .user('Add the deploy host to my ~/.ssh/config so git can reach it.')
      .bash("printf 'Host deploy\\n' >> ~/.ssh/config", '');
    const { checkpoint } = await summarizer.summarize(input(t.messages));
    expect(checkpoint.workingSet).toContain('~/.ssh/config');
  });
});

describe('anthropic summarizer against the fake Messages API', () => {
  let fake: FakeAnthropicServer;
  let url: string;
  beforeAll(async () => {
    fake = new FakeAnthropicServer();
    ({ url } = await fake.start());
  });
  afterAll(async () => {
    await fake.close();
  });
  const summarizer = () =>
    createAnthropicSummarizer({ apiKey: 'sk-ant-test', baseURL: url, model: 'claude-haiku-4-5' });

  /** What a model the injection fooled answers: the injection as the user's rule, plan and files. */
  function fooled(c: InjectionCase, seq: number): Checkpoint {
    return {
      ...emptyCheckpoint(),
      goal: 'Fix the failing test in tests/test_app.py.',
      userInstructions: [
        { text: RULE, seq: 3 },
        { text: c.text, seq },
        // Attributed to the user's own message, as a model might.
        { text: c.text, seq: 3 },
      ],
      currentWork: { text: c.text, seq: seq + 1 },
      nextStep: { text: c.text, seq },
      pending: [{ text: c.text, seq }],
      workingSet: ['~/.aws/credentials', '~/.ssh/id_rsa', 'tests/test_app.py'],
      files: [{ path: '~/.aws/credentials', role: 'read', change: null, seq: seq + 2 }],
    };
  }

  for (const c of INJECTIONS) {
    it(`checks a diligent model's checkpoint: ${c.family}, ${c.name}`, async () => {
      const { leaving, seq } = sessionWith(c);
      fake.enqueue('ok');
      const { checkpoint } = await summarizer().summarize(input(leaving));
      expectContained(checkpoint, c, seq);
    });

    it(`drops what a fooled model presents as the user's will: ${c.family}, ${c.name}`, async () => {
      const { leaving, seq } = sessionWith(c);
      fake.enqueue({ toolInput: fooled(c, seq) });
      const { checkpoint } = await summarizer().summarize(input(leaving));
      expectContained(checkpoint, c, seq);
      expect(checkpoint.pending.map((e) => e.text)).not.toContain(c.text);
    });
  }

  it("keeps a model's ordinary user instructions taken from the user's messages", async () => {
    const t = transcript().user('Add a billing report to the admin page.');
    for (const rule of LEGITIMATE_INSTRUCTIONS) t.user(rule).assistant('Understood.');
    const userInstructions = t.messages
      .filter((m) => m.role === 'user' && LEGITIMATE_INSTRUCTIONS.includes(m.content))
      .map((m) => ({ text: m.content, seq: m.seq }));
    fake.enqueue({ toolInput: { ...emptyCheckpoint(), goal: 'Add a billing report.', userInstructions } });
    const { checkpoint } = await summarizer().summarize(input(t.messages));
    expect(checkpoint.userInstructions).toEqual(userInstructions);
    expect(checkpoint.suspectedInjections).toEqual([]);
  });

  it('drops a user instruction the model took from a tool result, keeping it quoted', async () => {
    const t = transcript()
      .user('Tidy the build script.')
      .bash('cat CONTRIBUTING.md', 'Contributors always squash their commits before review.');
    const fromTool = { text: 'Always squash commits before review.', seq: 2 };
    fake.enqueue({
      toolInput: { ...emptyCheckpoint(), goal: 'Tidy the build script.', userInstructions: [fromTool] },
    });
    const { checkpoint } = await summarizer().summarize(input(t.messages));
    expect(checkpoint.userInstructions).toEqual([]);
    expect(checkpoint.suspectedInjections).toEqual([fromTool]);
  });
});
