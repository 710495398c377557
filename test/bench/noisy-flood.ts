/**
 * The noisy tenant of part 10 (test/bench/noisy-neighbor.ts), run as a process of its own, as a
 * tenant's agents run on machines of their own: building its 10 MB bodies and reading its answers
 * then takes neither the quiet tenant's process nor the API's. Started with the API's URL, the
 * tenant's key, the queue's Redis URL and prefix, the session to flood and whether to enqueue
 * events (argv: `url key redisUrl prefix session events|no-events`); writes {@link FLOOD_STARTED} on
 * stdout when it starts, then what it was answered (JSON, {@link Answered}) and exits 0 once every
 * request has been answered.
 */
import { randomUUID } from 'node:crypto';
import { createProducer } from '../../producer/index.ts';

/** Appends of `FLOOD_APPEND_BYTES` each, one after the other. */
export const FLOOD_APPENDS = 16;
export const FLOOD_APPEND_BYTES = 10_000_000;
/** Concurrent context reads of the flooded session, and as many of the session at the caps. */
export const FLOOD_READS = 20;
/** `session.run.completed` events, one per session `n1`…, in the phase with events. */
export const FLOOD_EVENTS = 2_000;
/** The session at the default caps, which part 10 fills before the flood. */
export const WIDE_SESSION = 'wide';

/** The line the flood writes on stdout when it sends its first request. */
export const FLOOD_STARTED = 'started';

/** What the noisy tenant was answered, by request kind and status. */
export type Answered = Record<string, Record<number, number>>;

/**
 * Floods: appends to `session`, from the first one's answer reads of it and of the session at the
 * caps (each retried after its `retry-after`), and the events when `events`.
 * @returns what it was answered, once every request has been.
 */
export async function flood(options: {
  url: string;
  key: string;
  redisUrl: string;
  prefix: string;
  session: string;
  events: boolean;
  /** Called once the bodies are built, just before the first request. */
  onStart?: () => void;
}): Promise<Answered> {
  const answered: Answered = { append: {}, 'context read': {}, 'read at the caps': {}, event: {} };
  const count = (kind: string, status: number) => {
    const of = answered[kind] ?? {};
    answered[kind] = of;
    of[status] = (of[status] ?? 0) + 1;
  };
  const call = (method: string, path: string, body?: string) =>
    fetch(`${options.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body }),
    });
  // One body, built once: the flood's cost is the API's, not this process's.
  const body = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(FLOOD_APPEND_BYTES) }] });
  options.onStart?.();
  let firstAppend: () => void = () => {};
  const appended = new Promise<void>((resolve) => (firstAppend = resolve));
  const appends = (async () => {
    for (let i = 0; i < FLOOD_APPENDS; i++) {
      const response = await call('POST', `/v1/sessions/${options.session}/messages`, body);
      await response.arrayBuffer();
      count('append', response.status);
      firstAppend();
    }
  })();
  const readsOf = (kind: string, id: string) =>
    Array.from({ length: FLOOD_READS }, async () => {
      for (let attempt = 0; attempt < 60; attempt++) {
        const response = await call('GET', `/v1/sessions/${id}/context`);
        await response.arrayBuffer();
        count(kind, response.status);
        if (response.status !== 429) return;
        const wait = Number(response.headers.get('retry-after') ?? '1');
        await new Promise((r) => setTimeout(r, wait * 1000));
      }
    });
  const reads = appended.then(() =>
    Promise.all([...readsOf('context read', options.session), ...readsOf('read at the caps', WIDE_SESSION)]),
  );
  const events = options.events ? enqueueEvents(options, count) : Promise.resolve();
  await Promise.all([appends, reads, events]);
  return answered;
}

/** {@link FLOOD_EVENTS} events through the producer, by 32 callers, as a service with queue access. */
async function enqueueEvents(
  options: { redisUrl: string; prefix: string },
  count: (kind: string, status: number) => void,
) {
  const producer = createProducer({ redisUrl: options.redisUrl, prefix: options.prefix });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = next++; i < FLOOD_EVENTS; i = next++) {
          await producer.runCompleted({
            eventId: randomUUID(),
            tenantId: 'noisy',
            sessionId: `n${i + 1}`,
            strategy: { type: 'slidingWindow', maxMessages: 10 },
          });
          count('event', 202);
        }
      }),
    );
  } finally {
    await producer.close();
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  const [url, key, redisUrl, prefix, session, events] = process.argv.slice(2);
  if (!url || !key || !redisUrl || !prefix || !session) {
    process.stderr.write('usage: noisy-flood.ts url key redisUrl prefix session events|no-events\n');
    process.exit(2);
  }
  const onStart = () => process.stdout.write(`${FLOOD_STARTED}\n`);
  const answered = await flood({ url, key, redisUrl, prefix, session, events: events === 'events', onStart });
  process.stdout.write(`${JSON.stringify(answered)}\n`);
}
