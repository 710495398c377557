/**
 * What the parser and the help know of `compactor compact`: flags, help text, examples. Its run
 * (commands/compact.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { MAX_INSTRUCTIONS_CHARS } from '../../../shared/strategies/instructions-limit.ts';
import { type Command, SESSION_OPTION, TENANT_OPTION } from '../command.ts';

export const compactCommand: Command = {
  name: 'compact',
  summary: 'compact one session now and print its ledger row as JSON (--dry-run: only show the plan)',
  options: {
    tenant: TENANT_OPTION,
    session: SESSION_OPTION,
    strategy: { type: 'string', value: 'X', description: 'strategy for this run, over the policy' },
    instructions: {
      type: 'string',
      value: 'TEXT',
      description: `summary instructions for this run, over the strategy's (up to ${MAX_INSTRUCTIONS_CHARS.toLocaleString('en-US')} characters)`,
    },
    'dry-run': {
      type: 'boolean',
      description: 'show which seqs would leave and stay, and why; write nothing',
    },
    json: { type: 'boolean', description: 'with --dry-run: the whole plan as JSON, for scripts' },
  },
  notes: [
    'Runs the pipeline in-process, as a worker would, with trigger "manual": the policy, the lease',
    'and the fencing all apply. Without --dry-run the output is always the ledger row as JSON.',
    'A 429 (after its retry-after), a 529, a 5xx or a lost connection from the Messages API is',
    'retried as the worker retries a job (backoff 2 s, 4 s, 8 s, ...; 5 attempts in all), each wait',
    'told on stderr; every attempt carries the same idempotency key, so the compaction applies once.',
    'When the last retry fails, a strategy with fallback "extractive" is summarized offline (the row',
    'says why); otherwise the error is printed and a failed row records it in the ledger.',
    '--instructions tells the summarizer what to keep (the ledger row records them); it needs a',
    'summarize strategy, and the offline extractive summarizer ignores them.',
  ],
  examples: [
    'compactor compact --tenant acme --session run-42 --strategy slidingWindow:50 --dry-run',
    'compactor compact --tenant acme --session run-42',
    "compactor compact --tenant acme --session run-42 --instructions 'Keep every SQL statement verbatim.'",
  ],
  async run(args, context) {
    const { runCompact } = await import('../commands/compact.ts');
    return runCompact(args, context);
  },
};
