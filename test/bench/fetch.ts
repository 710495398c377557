/**
 * `npx tsx test/bench/fetch.ts`: the client CPU per request of the keep-alive `fetch` the SDK
 * clients use (worker/summarizers/keep-alive-fetch.ts) against Node's global `fetch`, on the
 * requests a summary sends: a POST of a ~20 KB JSON body answered with a ~3 KB JSON body, read with
 * `json()` as the SDK reads a message, 32 in flight. The server (plain node:http on loopback) runs
 * in its own process, so the CPU counted is the client's alone; each run is a fresh client process
 * (warm-up first), the two fetches alternating. Prints one row per run and the medians; asserts
 * nothing.
 *
 * Options: `--runs R` (runs of each fetch, default 3), `--requests N` (measured requests per run,
 * default 20000), `--in-flight C` (default 32).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKeepAliveFetch } from '../../worker/summarizers/keep-alive-fetch.ts';
import { median, positiveInteger } from './report.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    requests: { type: 'string', default: '20000' },
    'in-flight': { type: 'string', default: '32' },
    serve: { type: 'boolean', default: false },
    client: { type: 'string' },
    url: { type: 'string' },
  },
});

/** Requests each client sends before it starts counting. */
const WARMUP = 2_000;
/** The answer: a message of about 3 KB, as the Messages API returns a summary. */
const ANSWER = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'claude-haiku-4-5',
  content: [{ type: 'text', text: 'x'.repeat(2_800) }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 5_000, output_tokens: 700 },
});
/** The request: about 20 KB of JSON, as a summary request of a few dozen messages. */
const REQUEST = JSON.stringify({
  model: 'claude-haiku-4-5',
  max_tokens: 2_000,
  messages: [{ role: 'user', content: 'y'.repeat(20_000) }],
});

/** `--serve`: answers every POST with {@link ANSWER} once its body is read; prints the port. */
async function serve(): Promise<void> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_bench' });
      res.end(ANSWER);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
}

/** `--client global|keep-alive --url U`: sends the requests and prints CPU ms per request as JSON. */
async function client(kind: string, url: string, requests: number, inFlight: number): Promise<void> {
  const fetch = kind === 'global' ? globalThis.fetch : createKeepAliveFetch();
  const headers = {
    'content-type': 'application/json',
    'x-api-key': 'sk-bench',
    'anthropic-version': '2023-06-01',
  };
  const send = async () => {
    const response = await fetch(url, { method: 'POST', headers, body: REQUEST });
    await response.json();
  };
  const closedLoop = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next++ < n) await send();
      }),
    );
  };
  await closedLoop(WARMUP);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await closedLoop(requests);
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1_000;
  process.stdout.write(
    `${JSON.stringify({ kind, cpuMsPerRequest: cpuMs / requests, perS: requests / (wallMs / 1_000) })}\n`,
  );
  process.exit(0);
}

/** Runs this script with `args` in a child process and resolves with its first line of output. */
function child(args: string[]): { line: Promise<string>; kill: () => void } {
  const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    proc.on('exit', (code) => reject(new Error(`bench child ${args.join(' ')} exited with ${code}`)));
  });
  return { line, kill: () => proc.kill() };
}

async function main(): Promise<void> {
  const runs = positiveInteger('runs', values.runs);
  const requests = positiveInteger('requests', values.requests);
  const inFlight = positiveInteger('in-flight', values['in-flight']);
  if (values.serve) return serve();
  if (values.client) return client(values.client, values.url ?? '', requests, inFlight);

  const server = child(['--serve']);
  const url = `http://127.0.0.1:${await server.line}/v1/messages`;
  const results: Record<string, number[]> = { global: [], 'keep-alive': [] };
  console.log(
    `${requests} requests per run, ${inFlight} in flight, ${REQUEST.length} B request, ${ANSWER.length} B answer`,
  );
  console.log('| run | fetch | client CPU ms / request | requests/s |\n|---|---|---|---|');
  try {
    for (let run = 1; run <= runs; run++) {
      for (const kind of ['global', 'keep-alive']) {
        const args = [
          '--client',
          kind,
          '--url',
          url,
          '--requests',
          String(requests),
          '--in-flight',
          String(inFlight),
        ];
        const result = JSON.parse(await child(args).line) as { cpuMsPerRequest: number; perS: number };
        results[kind]?.push(result.cpuMsPerRequest);
        console.log(
          `| ${run} | ${kind} | ${result.cpuMsPerRequest.toFixed(3)} | ${result.perS.toFixed(0)} |`,
        );
      }
    }
  } finally {
    server.kill();
  }
  const g = median(results.global ?? []);
  const k = median(results['keep-alive'] ?? []);
  console.log(
    `\nmedian CPU ms / request: global ${g.toFixed(3)}, keep-alive ${k.toFixed(3)} (ratio ${(k / g).toFixed(2)})`,
  );
}

await main();
