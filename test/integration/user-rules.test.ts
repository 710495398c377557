/**
 * A user's rule outlives compactions: stated once in the session's first request, it is still in
 * what the agent reads (`loadContext`) after three successive compactions through the pipeline and
 * Postgres, each merging the previous checkpoint, with the extractive summarizer and with the
 * anthropic one (the real SDK against the fake Messages API). A failed, rejected or interrupted call
 * is never in the completed work the agent reads.
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
          { summarizer: make() },
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
});
