/**
 * Each error names the dependency that failed. With the Messages API unreachable (a real SDK
 * request to a port nothing listens on), the error says so and names the API's host; the CLI's
 * database-error wording, which reads socket errors down a cause chain, leaves it alone instead of
 * blaming PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { describeDatabaseError } from '../../worker/postgres/errors.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { AnthropicTransientError } from '../../worker/summarizers/anthropic-errors.ts';
import { textMessage } from '../support/messages.ts';
import { freePort } from '../support/ports.ts';

describe('the Messages API unreachable', () => {
  it('is told as the Anthropic API at its host, never as PostgreSQL', async () => {
    const port = await freePort();
    const summarizer = createAnthropicSummarizer({
      apiKey: 'sk-ant-test',
      baseURL: `http://127.0.0.1:${port}`,
      model: 'claude-haiku-4-5',
    });
    const error = await summarizer
      .summarize({
        tenantId: 't',
        sessionId: 's',
        previous: null,
        leaving: [textMessage(1, 'user', 'Fix the invoice test.'), textMessage(2, 'assistant', 'Fixed.')],
        maxSummaryTokens: 1_000,
      })
      .then(
        () => {
          throw new Error('expected a failure');
        },
        (thrown: unknown) => thrown as Error,
      );
    expect(error).toBeInstanceOf(AnthropicTransientError);
    expect(error.message).toMatch(new RegExp(`^Anthropic API at 127\\.0\\.0\\.1:${port} unreachable`));
    // What `compactor` prints for a failed command: the database's wording only for its errors.
    expect(describeDatabaseError(error, { url: 'postgres://root@127.0.0.1:5432/compactor' })).toBeNull();
  });
});
