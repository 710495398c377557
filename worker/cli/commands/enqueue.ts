/** `compactor enqueue`: sends `session.run.completed`, as an agent service would. */
import { randomUUID } from 'node:crypto';
import { connectionOf, createProducer } from '../../../producer/index.ts';
import { assertSchema } from '../../../producer/postgres/db.ts';
import { openStore } from '../../runtime/store.ts';
import { type CommandContext, optionalText, type ParsedArgs, text } from '../command.ts';
import { jsonLine } from '../format.ts';
import { strategyOption } from '../strategy-option.ts';

/** Runs `compactor enqueue` (its spec, flags and help: specs/enqueue.ts); resolves with the exit code. */
export async function runEnqueue(args: ParsedArgs, context: CommandContext): Promise<number> {
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
}
