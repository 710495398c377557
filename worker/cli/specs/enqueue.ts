/**
 * What the parser and the help know of `compactor enqueue`: flags, help text, examples. Its run
 * (commands/enqueue.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { type Command, SESSION_OPTION, TENANT_OPTION } from '../command.ts';

export const enqueueCommand: Command = {
  name: 'enqueue',
  summary: 'enqueue session.run.completed for a session; print the job as JSON',
  options: {
    tenant: TENANT_OPTION,
    session: SESSION_OPTION,
    'event-id': {
      type: 'string',
      value: 'E',
      description: 'the event id (default: a new UUID); the same id twice is one job',
    },
    strategy: { type: 'string', value: 'X', description: 'strategy for this run, over the policy' },
  },
  notes: [
    'The session must exist for the tenant: an unknown one is refused (exit 1) before anything is',
    'enqueued, rather than failed later by a worker.',
  ],
  examples: ['compactor enqueue --tenant acme --session run-42 --strategy slidingWindow:50'],
  async run(args, context) {
    const { runEnqueue } = await import('../commands/enqueue.ts');
    return runEnqueue(args, context);
  },
};
