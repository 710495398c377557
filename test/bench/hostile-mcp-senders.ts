/**
 * The hostile tenant of part 12 (test/bench/hostile-mcp.ts), run as a process of its own, as a
 * tenant's clients run on machines of their own: writing its 3.9 MB bodies and reading the answers
 * then takes neither the quiet tenant's process nor the API's. argv: `url key [kind]`, kind
 * `deep` (the default: the hostile body) or `small` (a valid `tools/list`, the control). Keeps
 * {@link HOSTILE_IN_FLIGHT} requests in flight to `/v1/mcp`, each sent again as soon as it is
 * answered (after 1 s on a 429); writes {@link FIRST_ANSWERED} on stdout at its first answer; on SIGTERM stops sending,
 * waits for the requests in flight, writes what it was answered (JSON, {@link HostileAnswers}) and
 * exits 0.
 */

/** Hostile requests kept in flight at once. */
export const HOSTILE_IN_FLIGHT = 3;
/** The nesting of the hostile body: 1,950,000 `[` and as many `]`, about 3.9 MB. */
export const HOSTILE_DEPTH = 1_950_000;
/** The line written on stdout at the first answer (the API has warmed its threads by then). */
export const FIRST_ANSWERED = 'answered';
const MCP_ACCEPT = 'application/json, text/event-stream';

/** What the tenant sends: the hostile body, or a small valid request at the same pace (the control). */
export type SentKind = 'deep' | 'small';

/** What the hostile tenant was answered: count by status and its latencies, ms. */
export interface HostileAnswers {
  statuses: Record<string, number>;
  ms: number[];
  /** The first answer's body, cut short: what the refusal says. */
  sample: string;
}

/**
 * Sends the hostile body from {@link HOSTILE_IN_FLIGHT} loops until `stop` resolves.
 * @returns what they were answered, once the requests in flight are.
 */
export async function sendHostile(
  url: string,
  key: string,
  stop: Promise<void>,
  onFirst: () => void,
  kind: SentKind = 'deep',
): Promise<HostileAnswers> {
  const body = new TextEncoder().encode(
    kind === 'small'
      ? '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
      : `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall_search","arguments":{"sessionId":"c1","query":${'['.repeat(HOSTILE_DEPTH)}${']'.repeat(HOSTILE_DEPTH)}}}}`,
  );
  const answers: HostileAnswers = { statuses: {}, ms: [], sample: '' };
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const loop = async () => {
    while (!stopped) {
      const started = performance.now();
      const answer = await fetch(`${url}/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: MCP_ACCEPT },
        body,
      }).then(
        async (response) => ({ status: String(response.status), text: await response.text() }),
        (error: Error) => ({ status: 'no answer', text: error.message }),
      );
      answers.ms.push(performance.now() - started);
      answers.statuses[answer.status] = (answers.statuses[answer.status] ?? 0) + 1;
      answers.sample ||= answer.text.slice(0, 200);
      if (answers.ms.length === 1) onFirst();
      // A 429 says when to come back; anything else (a refusal, a closed connection) is sent again at once.
      if (answer.status === '429') await new Promise((r) => setTimeout(r, 1000));
    }
  };
  await Promise.all(Array.from({ length: HOSTILE_IN_FLIGHT }, loop));
  return answers;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  const [url, key, kind = 'deep'] = process.argv.slice(2);
  if (!url || !key || (kind !== 'deep' && kind !== 'small')) {
    throw new Error('usage: hostile-mcp-senders.ts URL KEY [deep|small]');
  }
  const stop = new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  const answered = await sendHostile(url, key, stop, () => process.stdout.write(`${FIRST_ANSWERED}\n`), kind);
  process.stdout.write(`${JSON.stringify(answered)}\n`);
}
