/** `compactor enqueue`: sends `session.run.completed`, as an agent service would. */
import { randomUUID } from 'node:crypto';
import { connectionOf, createProducer } from '../../../producer/index.ts';
import { assertSchema } from '../../../producer/postgres/db.ts';
import { openStore } from '../../runtime/store.ts';
import {
  type Command,
  optionalText,
  SESSION_OPTION,
  strategyOption,
  TENANT_OPTION,
  text,
} from '../command.ts';
import { jsonLine } from '../format.ts';

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
    const tenantId = text(args, 'tenant');
    const sessionId = text(args, 'session');
    const strategy = strategyOption(args);
    const c = context.config();
    const { database, reads, close } = openStore(c);
    try {
      await assertSchema(database);
      await reads.assertSession(tenantId, sessionId);
    } finally {
      await close();
    }
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
      context.stdout.write(`${jsonLine(result)}\n`);
      return 0;
    } finally {
      await producer.close();
    }
  },
};
