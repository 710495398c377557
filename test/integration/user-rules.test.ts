/**
 * A user's rule outlives compactions: stated once in the session's first request, it is still in
 * what the agent reads (`loadContext`) after three successive compactions through the pipeline and
 * Postgres, each merging the previous checkpoint, with the extractive summarizer and with the
 * anthropic one (the real SDK against the fake Messages API). A failed, rejected or interrupted call
 * is never in the completed work the agent reads. The model's errors and fixes, files and next step
 * reach what the agent reads, and a later compaction moves a fixed blocker to errors and fixes.
 */
import { describe, expect, it } from 'vitest';
import { appendMessages, createSession, loadContext } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { useIntegration } from '../support/integration.ts';
import { transcript } from '../support/transcript-builder.ts';

const ctx = useIntegration({ anthropic: true });
const RULE = 'Never run `git add .` in this repository; stage files by name.';

/** One run of the agent: `steps` shell calls and a word after each, seqs from `from`. */
function run(from: number, steps: number, tag: string) {
  const t = transcript();
  for (let i = 0; i < steps; i++) t.bash(`make ${tag}-${i}`, `built ${tag}-${i}\n${'ok\n'.repeat(60)}`);
  return t.messages.map((m) => ({
    seq: m.seq + from,
    role: m.role,
    kind: m.kind === 'summary' ? ('message' as const) : m.kind,
    content: m.content,
    // Unique across runs: the builder numbers each run's calls from 0.
    toolCallId: m.toolCallId === null ? null : `${tag}-${m.toolCallId}`,
    toolName: m.toolName,
  }));
}

const summarizers: Array<[string, () => Summarizer]> = [
  ['extractive', () => createExtractiveSummarizer()],
  [
    'anthropic',
    () =>
      createAnthropicSummarizer({ apiKey: 'sk-ant-test', baseURL: ctx.llm.url, model: 'claude-haiku-4-5' }),
  ],
];

/** The text of what the agent reads next: every string and text block of the context. */
async function contextText(tenantId: string, sessionId: string): Promise<string> {
  const context = await loadContext(ctx.tdb.database.db, { tenantId, sessionId });
  return context.messages
    .flatMap((m) =>
      typeof m.content === 'string'
        ? [m.content]
        : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])),
    )
    .join('\n');
}

describe('a user rule through three compactions', () => {
  for (const [name, make] of summarizers) {
    it(`${name}: the rule is in what the agent reads after each of three compactions`, async () => {
      const tenantId = `rules-${name}`;
      const sessionId = 'three';
      // The rule is neither the goal (the first request) nor the last request: only the user's
      // instructions carry it once its message has left.
      const user = (seq: number, content: string) => ({
        seq,
        role: 'user' as const,
        kind: 'message' as const,
        content,
      });
      const first = [user(0, 'Refactor the parser.'), ...run(1, 5, 'a')];
      first.push(user(first.length, RULE), ...run(first.length + 1, 5, 'b'));
      first.push(user(first.length, 'Go on with the lexer next.'), ...run(first.length + 1, 3, 'c'));
      await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: first });
      let next = first.length;
      for (let round = 0; round < 3; round++) {
        if (round > 0) {
          const more = run(next, 12, `r${round}`);
          await appendMessages(ctx.tdb.database.db, tenantId, sessionId, more);
          next += more.length;
        }
        const outcome = await ctx.compactInProcess(
          { tenantId, sessionId, strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 800 } },
          { summarizers: { primary: make() } },
        );
        expect(outcome.status, `round ${round}: ${outcome.row?.reason ?? ''}`).toBe('applied');
        const text = await contextText(tenantId, sessionId);
        // The rule's message left at the first compaction: from then on only the summary holds it.
        expect(text, `round ${round}`).toContain(RULE);
      }
      const [version] = await ctx.tdb.database.sql<{ compaction_version: number }[]>`
        select compaction_version from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
      expect(version?.compaction_version).toBe(3);
    });
  }

  it('extractive: a rejected, interrupted or failed call is never in the completed work the agent reads', async () => {
    const tenantId = 'rules-failures';
    const t = transcript()
      .user('Update the config and deploy.')
      .tool(
        'Edit',
        { file_path: 'src/config.ts', old_string: 'a', new_string: 'b' },
        'User rejected update to src/config.ts',
      )
      .tool('Bash', { command: 'npm run deploy' }, '[Request interrupted by user for tool use]')
      .tool('Bash', { command: 'make all' }, 'make: *** [all] Error 2')
      .tool('Bash', { command: 'npm test' }, `${'  ✓ a case\n'.repeat(300)}12 passing`);
    for (let i = 0; i < 4; i++) t.assistant(`Waiting ${i}.`);
    const messages = t.messages.map((m) => ({
      seq: m.seq,
      role: m.role,
      kind: m.kind === 'summary' ? ('message' as const) : m.kind,
      content: m.content,
      toolCallId: m.toolCallId,
      toolName: m.toolName,
    }));
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 's', messages });
    const outcome = await ctx.compactInProcess({
      tenantId,
      sessionId: 's',
      strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 2_000 },
    });
    expect(outcome.status, outcome.row?.reason ?? '').toBe('applied');
    const text = await contextText(tenantId, 's');
    const completed = /Completed:\n((?:- .*\n?)*)/.exec(text)?.[1] ?? '';
    expect(completed).toContain('ran: npm test');
    expect(completed).not.toMatch(/config\.ts|deploy|make all/);
    expect(text).toContain('the user rejected: edited src/config.ts');
  });

  it('anthropic: the errors, fixes, files and next step the model writes reach what the agent reads, and a fix moves a blocker', async () => {
    const tenantId = 'rules-model-fields';
    const summarizer = createAnthropicSummarizer({
      apiKey: 'sk-ant-test',
      baseURL: ctx.llm.url,
      model: 'claude-haiku-4-5',
    });
    const t = transcript()
      .user('Update the config and deploy.')
      .tool('Bash', { command: 'npm test' }, 'FAIL src/app.test.ts\nError: expected 2, got 3\n1 failed')
      .tool(
        'Edit',
        { file_path: 'src/app.ts', old_string: 'return 3', new_string: 'return 2' },
        'The file src/app.ts has been updated.',
      )
      .tool(
        'Edit',
        { file_path: 'src/config.ts', old_string: 'a', new_string: 'b' },
        'User rejected update to src/config.ts',
      )
      .tool('Bash', { command: 'npm run deploy' }, '[Request interrupted by user for tool use]')
      .tool('Bash', { command: 'make all' }, 'make: *** [all] Error 2')
      .tool('Bash', { command: 'npm test' }, `${'  ✓ a case\n'.repeat(300)}12 passing`)
      .assistant('The tests pass again. Next I will find out why make all fails.');
    const firstLength = t.messages.length;
    for (let i = 0; i < 4; i++) t.assistant(`Waiting ${i}.`);
    const rows = (from: number) =>
      t.messages.slice(from).map((m) => ({
        seq: m.seq,
        role: m.role,
        kind: m.kind === 'summary' ? ('message' as const) : m.kind,
        content: m.content,
        toolCallId: m.toolCallId,
        toolName: m.toolName,
      }));
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 's', messages: rows(0) });
    const compact = async () => {
      const outcome = await ctx.compactInProcess(
        { tenantId, sessionId: 's', strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 2_000 } },
        { summarizers: { primary: summarizer } },
      );
      expect(outcome.status, outcome.row?.reason ?? '').toBe('applied');
      return contextText(tenantId, 's');
    };
    const section = (text: string, title: string) =>
      new RegExp(`${title}:\\n((?:- .*\\n?)*)`).exec(text)?.[1] ?? '';

    const first = await compact();
    const completed = section(first, 'Completed');
    expect(completed).toContain('ran `npm test`: 12 passing');
    expect(completed).toContain('edited src/app.ts');
    expect(completed).not.toMatch(/config\.ts|deploy|make all|1 failed/);
    expect(section(first, 'Errors and fixes')).toContain(
      '`npm test`: FAIL src/app.test.ts → after editing src/app.ts: ran `npm test`: 12 passing',
    );
    expect(section(first, 'Blockers \\(unresolved\\)')).toContain(
      '`make all` failed: make: *** [all] Error 2',
    );
    expect(section(first, 'Files').split('\n')[0]).toMatch(
      /^- src\/app\.ts \(edited\): replaced "return 3" with "return 2"/,
    );
    const said = t.messages[firstLength - 1]?.seq;
    expect(first).toContain(`Next step: Next I will find out why make all fails. (seq ${said})`);

    // The agent carries on: make all now succeeds. The blocker becomes an error with its fix.
    t.tool('Bash', { command: 'make all' }, 'built dist/app.js');
    for (let i = 4; i < 8; i++) t.assistant(`Waiting ${i}.`);
    await appendMessages(ctx.tdb.database.db, tenantId, 's', rows(firstLength + 4));
    const second = await compact();
    expect(second).not.toContain('Blockers (unresolved)');
    expect(section(second, 'Errors and fixes')).toContain(
      '`make all` failed: make: *** [all] Error 2 → ran `make all`: built dist/app.js',
    );
    // What the first summary held is still there.
    expect(section(second, 'Completed')).toContain('ran `npm test`: 12 passing');
    expect(section(second, 'Completed')).toContain('ran `make all`: built dist/app.js');
    expect(section(second, 'Files')).toContain('src/app.ts (edited)');
  });
});
