/** `compactor enqueue`: sends `session.run.completed`, as an agent service would. */
import { randomUUID } from 'node:crypto';
import { connectionOf, createProducer } from '../../../producer/index.ts';
import {
  type Command,
  optionalText,
  SESSION_OPTION,
  strategyOption,
  TENANT_OPTION,
  text,
} from '../command.ts';

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
  examples: ['compactor enqueue --tenant acme --session run-42 --strategy slidingWindow:50'],
  async run(args, context) {
    const tenantId = text(args, 'tenant');
    const sessionId = text(args, 'session');
    const strategy = strategyOption(args);
    const c = context.config();
    const producer = createProducer({
      ...connectionOf(c),
      prefix: c.queuePrefix,
    });
    try {
      const result = await producer.runCompleted({
        eventId: optionalText(args, 'event-id') ?? randomUUID(),
        tenantId,
        sessionId,
        occurredAt: new Date().toISOString(),
        strategy,
      });
      context.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    } finally {
      await producer.close();
    }
  },
};
