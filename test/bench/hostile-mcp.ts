import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { REFUSED_BODY_COST } from '../../worker/http/api/tenant-limits.ts';
import { REDIS_URL } from '../support/env.ts';
import {
  FIRST_ANSWERED,
  HOSTILE_DEPTH,
  HOSTILE_IN_FLIGHT,
  type HostileAnswers,
  type SentKind,
} from './hostile-mcp-senders.ts';
import { buildCli, startApiProcess } from './noisy-neighbor.ts';
import { addSessions, fmt } from './report.ts';
import { tenantProcess } from './tenant-process.ts';

/**
 * Quiet context reads per phase (after a warm-up of {@link WARM_UP}), over {@link ROUNDS} rounds:
 * the p99 is then the tenth slowest read, not the third.
 */
const READS = 999;
/** Rounds of the three phases (alone, hostile bodies, control), one after the other. */
const ROUNDS = 3;
const WARM_UP = 20;
/**
 * A quiet read starts at most every this many ms, so the quiet tenant stays under its own default
 * request rate (100 per second) however fast it is answered.
 */
const READ_EVERY_MS = 15;
/** The hostile client's CPU priority (nice; see hostileSenders). */
const HOSTILE_NICE = 10;

/** A section writer, as `Report.section`. */
type Section = (title: string, header: string[], rows: string[][], notes?: string[]) => void;

/**
 * Runs part 12 on database `url` (migrated), under the queue prefix `prefix()` gives.
 * @param apiNodeOptions the API process's `NODE_OPTIONS`; '' for none.
 */
export async function hostileMcp(
  url: string,
  sql: postgres.Sql,
  prefix: () => string,
  section: Section,
  apiNodeOptions: string,
): Promise<void> {
  await addSessions(sql, 'calm', 1, 60, 'c');
  await sql`vacuum analyze`;
  const tokens = { calm: `bench-calm-${randomUUID()}`, hostile: `bench-hostile-${randomUUID()}` };
  const cli = await buildCli();
  const env = { DATABASE_URL: url, REDIS_URL, COMPACTOR_QUEUE_PREFIX: prefix(), COMPACTOR_LOG_LEVEL: 'warn' };
  const api = await startApiProcess(cli, env, tokens, apiNodeOptions);
  try {
    const read = async () => {
      const started = performance.now();
      const response = await fetch(`${api.url}/v1/sessions/c1/context`, {
        headers: { authorization: `Bearer ${tokens.calm}` },
      }).catch((error: Error) => {
        throw new Error(`quiet read failed: ${error.message}; the API process: ${api.exited() ?? 'running'}`);
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`quiet read: ${response.status} ${text.slice(0, 300)}`);
      return performance.now() - started;
    };
    await quietReads(read, WARM_UP);
    // The phases alternate, so that whatever else the machine runs weighs on each phase alike.
    const alone: number[] = [];
    let aloneRss = 0;
    const deep: Phase[] = [];
    const small: Phase[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      api.rss.reset();
      await quietReads(read, READS / ROUNDS, alone);
      aloneRss = Math.max(aloneRss, api.rss.reset());
      deep.push(await underSender(api, tokens.hostile, 'deep', read));
      small.push(await underSender(api, tokens.hostile, 'small', read));
    }
    const hwm = await api.rss.highWater();
    report(section, { alone, aloneRss, deep: joined(deep), small: joined(small), hwm }, apiNodeOptions);
  } finally {
    api.stop();
  }
}

/** The quiet reads while the other tenant sends `kind` (hostile-mcp-senders.ts), and what it was answered. */
interface Phase {
  under: number[];
  /** Why the reads stopped early, if they did. */
  failure: string | null;
  answered: HostileAnswers;
  rss: number;
  /** How long the phase lasted, ms. */
  ms: number;
}

/** The phases of the rounds as one: their reads and answers together, the peak of their RSS. */
function joined(phases: Phase[]): Phase {
  const statuses: Record<string, number> = {};
  for (const phase of phases) {
    for (const [status, n] of Object.entries(phase.answered.statuses))
      statuses[status] = (statuses[status] ?? 0) + n;
  }
  return {
    under: phases.flatMap((p) => p.under),
    failure: phases.find((p) => p.failure)?.failure ?? null,
    answered: {
      statuses,
      ms: phases.flatMap((p) => p.answered.ms),
      sample: phases.find((p) => p.answered.sample)?.answered.sample ?? '',
    },
    rss: Math.max(...phases.map((p) => p.rss)),
    ms: phases.reduce((sum, p) => sum + p.ms, 0),
  };
}

/** `READS / ROUNDS` quiet reads while the hostile tenant sends requests of `kind`. */
async function underSender(
  api: { url: string; rss: { reset(): number } },
  key: string,
  kind: SentKind,
  read: () => Promise<number>,
): Promise<Phase> {
  const sender = hostileSenders(api.url, key, kind);
  await sender.firstAnswered;
  api.rss.reset();
  const started = performance.now();
  // A read that fails ends the phase: what was measured until then is reported, with why.
  const under: number[] = [];
  const failure = await quietReads(read, READS / ROUNDS, under).then(
    () => null,
    (error: Error) => error.message,
  );
  const ms = performance.now() - started;
  const answered = await sender.stop();
  return { under, failure, answered, rss: api.rss.reset(), ms };
}

/** `n` quiet reads, one at a time, paced by {@link READ_EVERY_MS}: their latencies (ms) into `samples`. */
async function quietReads(read: () => Promise<number>, n: number, samples: number[] = []): Promise<number[]> {
  for (let i = 0; i < n; i++) {
    const paced = new Promise((resolve) => setTimeout(resolve, READ_EVERY_MS));
    samples.push(await read());
    await paced;
  }
  return samples;
}

/**
 * The hostile tenant (hostile-mcp-senders.ts) as a process of its own, at nice {@link HOSTILE_NICE}.
 * @returns `firstAnswered` once one request is answered; `stop()` ends the sending and resolves,
 *   once the requests in flight are answered, to what they were answered.
 */
function hostileSenders(url: string, key: string, kind: SentKind) {
  const sender = tenantProcess<HostileAnswers>(
    new URL('./hostile-mcp-senders.ts', import.meta.url),
    [url, key, kind],
    {
      nice: HOSTILE_NICE,
      readyLine: FIRST_ANSWERED,
      name: "the hostile tenant's process",
    },
  );
  return { firstAnswered: sender.ready, stop: sender.stop };
}

/** The value at quantile `q` of `xs`. */
function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/** Prints part 12's table and notes. */
function report(
  section: Section,
  run: { alone: number[]; aloneRss: number; deep: Phase; small: Phase; hwm: number },
  nodeOptions: string,
) {
  const mb = (kb: number) => `${fmt(kb / 1024, 0)} MB`;
  const aloneP99 = quantile(run.alone, 0.99);
  const row = (phase: string, xs: number[], rss: number, versus: string) => [
    phase,
    String(xs.length),
    fmt(quantile(xs, 0.5), 1),
    fmt(quantile(xs, 0.99), 1),
    versus,
    mb(rss),
  ];
  const ratio = (p: Phase) => quantile(p.under, 0.99) / aloneP99;
  const sent = (p: Phase) => {
    const statuses = Object.entries(p.answered.statuses)
      .map(([status, n]) => `${n}× ${status}`)
      .join(', ');
    return `${statuses}, ${fmt((p.answered.ms.length * 1000) / p.ms, 0)} per s (p50 ${fmt(quantile(p.answered.ms, 0.5), 0)} ms, p99 ${fmt(quantile(p.answered.ms, 0.99), 0)} ms from send to answer)`;
  };
  const deepRatio = ratio(run.deep);
  section(
    `12. Hostile MCP bodies: a quiet tenant's context reads while ${HOSTILE_IN_FLIGHT} bodies of ${fmt(
      (2 * HOSTILE_DEPTH) / 1e6,
      1,
    )} MB nested ${HOSTILE_DEPTH.toLocaleString('en')} deep are in flight (compactor api in its own process${nodeOptions ? `, ${nodeOptions}` : ''})`,
    [
      'phase',
      'quiet reads',
      'p50 ms',
      'p99 ms',
      'p99 / alone (target ≤ 2)',
      'API peak RSS (target < 512 MB)',
    ],
    [
      row('alone', run.alone, run.aloneRss, ''),
      row(
        `${HOSTILE_IN_FLIGHT} hostile MCP bodies in flight`,
        run.deep.under,
        run.deep.rss,
        `**${fmt(deepRatio, 2)}** (${deepRatio <= 2 ? 'met' : 'missed'})`,
      ),
      row(
        `control: ${HOSTILE_IN_FLIGHT} small valid MCP requests in flight`,
        run.small.under,
        run.small.rss,
        fmt(ratio(run.small), 2),
      ),
    ],
    [
      ...[run.deep, run.small].flatMap((p) =>
        p.failure ? [`**The quiet reads stopped after ${p.under.length}: ${p.failure}.**`] : [],
      ),
      `The hostile tenant was answered ${sent(run.deep)}, e.g. \`${run.deep.answered.sample.replaceAll('`', "'")}\`. In the control it sent a \`tools/list\` (a valid request, answered in full) the same way, and was answered ${sent(run.small)}: what any tenant sending at its request rate costs the others, without a hostile body.`,
      `API high-water mark (VmHWM) through the part: ${mb(run.hwm)}. RSS is sampled every 50 ms from /proc; the API runs built (tsc, as the package), ${nodeOptions ? `with NODE_OPTIONS=${nodeOptions}` : 'as `compactor api` starts by default (its heap bounded)'}.`,
      `The quiet tenant reads the context of its session of 60 messages, one read at a time, at most one every ${READ_EVERY_MS} ms, ${READS} reads alone and ${READS} while the other tenant keeps ${HOSTILE_IN_FLIGHT} requests in flight (each sent again as soon as it is answered or its connection closed; a 429 waits 1 s), from a process of its own at nice ${HOSTILE_NICE}; the three phases alternate in ${ROUNDS} rounds of ${READS / ROUNDS} reads each, so that what else the machine runs weighs on them alike. The hostile body is a tools/call of recall_search whose query is the nesting; the API's body reader counts the nesting on the bytes as they arrive and answers 400 with a JSON-RPC parse error at the first level past the limit, without receiving the rest (the connection is then closed), and counts the refusal as ${REFUSED_BODY_COST} requests against the tenant's rate. Default limits throughout.`,
    ],
  );
}
