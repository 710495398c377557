/**
 * `npm run fidelity:probes [-- --set tuning|test|both] [--keep-recent N] [--session NAME ...]
 * [--misses] [--show]`: whether an agent can carry on from a checkpoint, measured by probes
 * (probes.ts) on two sets, measured and printed apart:
 *
 * - tuning: the probe files of test/fidelity/probes/ on the sessions of corpus/sessions/, read
 *   freely while changing a summarizer;
 * - test: the probe files of test/fidelity/probes-test/ on the sessions of corpus/heldout/, which no
 *   summarizer is tuned on: only its aggregate figures are printed (totals per summarizer, by probe
 *   type and point, stale count, its targets), never a probe, a session's row or a checkpoint, so
 *   `--misses` and `--show` refuse to run on it alone, and with `--set both` apply to the tuning set
 *   only. A set whose probe directory is absent or empty prints one line saying so.
 *
 * For each probed session and each summarizer (`extractive`; `anthropic`, the real SDK against the
 * fake Messages API; `openai`, the real `openai` SDK against the fake Chat Completions server, whose
 * answers come from the same stand-in model): the session is created with the first third of its messages and compacted
 * with `summarize` (keepRecent N), the messages up to two thirds are appended and it is compacted
 * again (merging the first checkpoint), then the rest, and a third time. After each compaction the
 * probes of that point are graded against (a) the rendered checkpoint with the text of the live
 * messages kept, and (b) the rendered checkpoint alone, on the probe's `alone` answer when it has
 * one (an answer only the kept messages state is asked as of the last message that left), else on
 * its `expect`; and three precision counts are taken from the checkpoint: stale blockers, failures
 * listed as completed, and a goal or last request taken from a harness or meta message (rules in
 * probes.ts).
 *
 * Options: `--keep-recent N` (an integer ≥ 0, default 10); `--session NAME` (repeatable: only
 * those probed sessions); `--misses` lists the probes missed with the checkpoint alone; `--show`
 * prints each rendered checkpoint. With ANTHROPIC_API_KEY set, the `anthropic` row grades a real
 * model (COMPACTOR_MODEL, default claude-haiku-5-5, at ANTHROPIC_BASE_URL, default Anthropic's API)
 * instead of the fake; with OPENAI_API_KEY set, the `openai` row does (COMPACTOR_OPENAI_MODEL,
 * default gpt-5.4-mini, at OPENAI_BASE_URL, default OpenAI's API).
 *
 * Prints, for each set under its heading: per session and point (tuning set only), then totals per
 * summarizer, by probe type (every type of `PROBE_TYPES`) and by point; the set's targets, each met
 * or NOT met (tuning: with the kept messages ≥ 90%, checkpoint alone ≥ 85%, stale blockers ≤ 10%
 * of the blockers listed; test: with the kept messages ≥ 80%, checkpoint alone ≥ 75%, no stale
 * blocker; both: no failure listed as completed); against the fake, a line
 * saying of the probes missed alone how many had their answer in what the model was shown (the miss
 * is the model's), how many had not (clipped or pruned before the call: the miss is compactor's),
 * and how many ask only that something be absent; and (tuning set only) the probes whose key needs a reader. Not
 * part of `npm test`; always exits 0 when it ran (the figures are a measure, not a gate).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { openDatabase } from '../../producer/postgres/db.ts';
import { appendMessages, createSession } from '../../producer/sessions.ts';
import { parseTranscript, type TranscriptMessage } from '../../shared/contract/transcript.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { type Checkpoint, checkpointSchema, renderCheckpoint } from '../../shared/summary/checkpoint.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import { DEFAULT_OPENAI_MODEL, DEFAULT_SUMMARY_MODEL } from '../../worker/config/config.ts';
import { createAnthropicSummarizer, DEFAULT_ANTHROPIC_BASE_URL } from '../../worker/summarizers/anthropic.ts';
import { createOpenAISummarizer } from '../../worker/summarizers/openai.ts';
import { unescapeEntities } from '../support/fake-model/prompt-view.ts';
import { FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';
import { HELDOUT_DIR, loadProbeFiles, PROBES_DIR, PROBES_TEST_DIR } from './probe-files.ts';
import {
  aloneCuts,
  aloneExpect,
  failedCompleted,
  gradeExpect,
  isMetaText,
  POINTS,
  type Point,
  PROBE_TYPES,
  type Probe,
  type ProbeType,
  pointCut,
  staleBlockers,
} from './probes.ts';
import { withScratch } from './scratch.ts';

const { values } = parseArgs({
  options: {
    'keep-recent': { type: 'string', default: '10' },
    session: { type: 'string', multiple: true },
    misses: { type: 'boolean', default: false },
    show: { type: 'boolean', default: false },
    set: { type: 'string', default: 'both' },
  },
});
const keepRecent = Number(values['keep-recent']);
if (!Number.isInteger(keepRecent) || keepRecent < 0) throw new Error('--keep-recent must be an integer ≥ 0');

/** A probe set: where its probe files and its sessions are, and whether its probes may be read. */
interface ProbeSet {
  name: 'tuning' | 'test';
  probesDir: string;
  corpusDir: string;
  /** The set's directories, relative to the repository, for the heading. */
  title: string;
  /** Whether its probes, rows and checkpoints may be printed (`--misses`, `--show`, the key gaps). */
  readable: boolean;
  /** Its targets: with the kept messages, checkpoint alone (rates in [0, 1]), stale blockers. */
  targets: { withKept: number; alone: number; stale: 'share' | 'none' };
}

const SETS: Record<ProbeSet['name'], ProbeSet> = {
  tuning: {
    name: 'tuning',
    probesDir: PROBES_DIR,
    corpusDir: CORPUS_DIR,
    title: 'test/fidelity/probes/ on corpus/sessions/',
    readable: true,
    targets: { withKept: 0.9, alone: 0.85, stale: 'share' },
  },
  test: {
    name: 'test',
    probesDir: PROBES_TEST_DIR,
    corpusDir: HELDOUT_DIR,
    title: 'test/fidelity/probes-test/ on corpus/heldout/',
    readable: false,
    targets: { withKept: 0.8, alone: 0.75, stale: 'none' },
  },
};

const setNames = { tuning: ['tuning'], test: ['test'], both: ['tuning', 'test'] } as const;
if (!Object.hasOwn(setNames, values.set as string))
  throw new Error(`--set must be tuning, test or both (got ${JSON.stringify(values.set)})`);
const chosenSets = setNames[values.set as keyof typeof setNames].map((name) => SETS[name]);

interface Graded {
  probe: Probe;
  withKept: boolean;
  /**
   * Null when not asked: there is no checkpoint yet (nothing left the context, all of it is still
   * read), or the answer is only in messages that never leave (the probe's `alone.expect` is null).
   */
  alone: boolean | null;
  /**
   * Whether the messages that left the context (the checkpoint's sources) hold the answer the
   * checkpoint alone is graded on. False: no summary of them can; the probe needs an `alone` answer
   * ({@link printKeyGaps}).
   */
  inLeaving: boolean;
  /**
   * Whether the requests of this session so far showed the model the answer (its `allOf` and
   * `anyOf` strings), so that a miss is the model's; null when no request was seen (a summarizer
   * without a model, or a real API).
   */
  shown: boolean | null;
}

interface PointRow {
  session: string;
  summarizer: string;
  point: Point;
  /** Messages in the prefix, and kept live after the compaction (the summary not counted). */
  cut: number;
  kept: number;
  /** The last seq of the prefix not live after the compaction (null: none left). */
  leavingThrough: number | null;
  status: string;
  graded: Graded[];
  staleBlockers: string[];
  /** Blockers the checkpoint lists, stale or not. */
  blockers: number;
  failedCompleted: string[];
  metaGoal: boolean;
  metaRequest: boolean;
}

async function main(): Promise<number> {
  if ((values.misses || values.show) && values.set === 'test') {
    console.error(
      '--misses and --show do not run on the test set: its probes are not to be read while tuning a summarizer (use --set tuning)',
    );
    return 2;
  }
  if ((values.misses || values.show) && values.set === 'both')
    console.log("--misses and --show apply to the tuning set only: the test set's probes are not to be read");
  let measured = 0;
  for (const set of chosenSets) {
    console.log(`\n=== ${set.name} set: ${set.title}`);
    const probeFiles = (await loadProbeFiles(set.probesDir)).filter(
      (f) => !values.session?.length || values.session.includes(f.session),
    );
    if (probeFiles.length === 0) {
      console.log(
        `${set.name} set: no probe files${values.session?.length ? ' named by --session' : ''} (the directory is absent or empty): nothing measured`,
      );
      continue;
    }
    const chat = new FakeOpenAIChatServer();
    const chatUrl = await chat.start();
    try {
      await run(set, probeFiles, chat, chatUrl);
      measured++;
    } finally {
      await chat.close();
    }
  }
  if (measured === 0) console.log('\nno set measured');
  return 0;
}

async function run(
  set: ProbeSet,
  probeFiles: Awaited<ReturnType<typeof loadProbeFiles>>,
  chat: FakeOpenAIChatServer,
  chatUrl: string,
): Promise<number> {
  return withScratch('probes', async ({ database, llmUrl, compact, fake }) => {
    // With ANTHROPIC_API_KEY set, the anthropic row grades a real model (ANTHROPIC_BASE_URL, else
    // Anthropic's API; COMPACTOR_MODEL, else Haiku 4.5); without it, the fake Messages API.
    const apiKey = process.env.ANTHROPIC_API_KEY;
    const model = process.env.COMPACTOR_MODEL ?? DEFAULT_SUMMARY_MODEL;
    console.log(
      apiKey
        ? `anthropic: ${model} at ${process.env.ANTHROPIC_BASE_URL ?? DEFAULT_ANTHROPIC_BASE_URL}`
        : 'anthropic: the fake Messages API (set ANTHROPIC_API_KEY to grade a real model)',
    );
    const openaiKey = process.env.OPENAI_API_KEY;
    const openaiModel = process.env.COMPACTOR_OPENAI_MODEL ?? DEFAULT_OPENAI_MODEL;
    console.log(
      openaiKey
        ? `openai: ${openaiModel} at ${process.env.OPENAI_BASE_URL ?? "OpenAI's API"}`
        : 'openai: the fake Chat Completions server (set OPENAI_API_KEY to grade a real model)',
    );
    /** Whether a row's requests went to a fake (then what it showed the model is known). */
    const faked = (label: string) => (label === 'anthropic' && !apiKey) || (label === 'openai' && !openaiKey);
    const runs: Array<{ label: string; summarizer: Summarizer }> = [
      { label: 'extractive', summarizer: createExtractiveSummarizer() },
      {
        label: 'anthropic',
        summarizer: createAnthropicSummarizer(
          apiKey
            ? { apiKey, baseURL: process.env.ANTHROPIC_BASE_URL, model, maxRetries: 3 }
            : { apiKey: 'fidelity', baseURL: llmUrl, model },
        ),
      },
      {
        label: 'openai',
        summarizer: createOpenAISummarizer(
          openaiKey
            ? { apiKey: openaiKey, baseURL: process.env.OPENAI_BASE_URL, model: openaiModel, maxRetries: 3 }
            : { apiKey: 'fidelity', baseURL: chatUrl, model: openaiModel },
        ),
      },
    ];
    const strategy = { type: 'summarize', keepRecent, maxSummaryTokens: 2_000 } as const;
    const rows: PointRow[] = [];
    for (const { label, summarizer } of runs) {
      const tenantId = `probes-${set.name}-${label}`;
      /** Per session, what the summarizer's requests to the fake showed the model so far. */
      const shown = new Map<string, string>();
      for (const { session, probes } of probeFiles) {
        const file = `${session}.jsonl`;
        const original = parseTranscript(await readFile(path.join(set.corpusDir, file)), file);
        let done = 0;
        for (const point of POINTS) {
          const cut = pointCut(original, point);
          const adding = original.slice(done, cut);
          if (done === 0) {
            await createSession(database.db, { tenantId, sessionId: session, messages: adding });
          } else if (adding.length > 0) {
            const seqs = await appendMessages(database.db, tenantId, session, adding.map(toAppend));
            if (seqs.some((s, i) => s !== adding[i]?.seq)) throw new Error(`${session}: appended seqs moved`);
          }
          done = cut;
          const sent = fake.requests.length;
          const sentChat = chat.requests.length;
          await compact({ tenantId, sessionId: session, strategy, summarizers: { primary: summarizer } });
          const requests = [
            ...fake.requests.slice(sent),
            ...chat.requests.slice(sentChat).map((body) => ({ body })),
          ];
          shown.set(session, `${shown.get(session) ?? ''}\n${promptsText(requests)}`);
          const mine = probes.filter((p) => p.at === point);
          const prefix = original.slice(0, cut);
          const seen = faked(label) ? shown.get(session) : undefined;
          rows.push(await measure(database, set, tenantId, session, label, point, prefix, mine, seen));
        }
      }
    }
    if (set.readable) printRows(rows);
    printTotals(set, rows);
    print(set, rows);
    printShown(rows);
    if (set.readable && values.misses) printMisses(rows);
    if (set.readable) printKeyGaps(rows);
    return 0;
  });
}

function toAppend(m: TranscriptMessage) {
  return {
    role: m.role,
    kind: m.kind,
    content: m.content,
    toolCallId: m.toolCallId,
    toolName: m.toolName,
    pinned: m.pinned,
    createdAt: m.createdAt,
  };
}

/**
 * The user turns of `requests` (Messages API requests the fake received) as plain text, entities
 * unescaped: what the model was shown.
 */
function promptsText(requests: ReadonlyArray<{ body: unknown }>): string {
  const texts: string[] = [];
  for (const { body } of requests) {
    const messages =
      (body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? [];
    for (const m of messages) {
      if (m.role !== 'user') continue;
      if (typeof m.content === 'string') texts.push(m.content);
      else if (Array.isArray(m.content))
        for (const b of m.content as Array<{ text?: unknown }>)
          if (typeof b.text === 'string') texts.push(b.text);
    }
  }
  return unescapeEntities(texts.join('\n'));
}

async function measure(
  database: ReturnType<typeof openDatabase>,
  set: ProbeSet,
  tenantId: string,
  session: string,
  summarizer: string,
  point: Point,
  prefixMessages: TranscriptMessage[],
  probes: Probe[],
  /** What the model was shown so far (the fake's requests); undefined for a summarizer without one. */
  shownText: string | undefined,
): Promise<PointRow> {
  const ledger = await database.sql<{ status: string }[]>`
    select status from compactions where tenant_id = ${tenantId} and session_id = ${session}
    order by created_at desc limit 1`;
  const [row] = await database.sql<{ checkpoint: unknown }[]>`
    select checkpoint from sessions where tenant_id = ${tenantId} and id = ${session}`;
  const checkpoint: Checkpoint | null = row?.checkpoint ? checkpointSchema.parse(row.checkpoint) : null;
  const live = await database.sql<{ content: string; kind: string; seq: number }[]>`
    select content, kind, seq from messages where tenant_id = ${tenantId} and session_id = ${session} order by seq`;
  const liveSeqs = new Set(live.map((m) => Number(m.seq)));
  const leaving = prefixMessages.filter((m) => !liveSeqs.has(m.seq));
  const leavingText = leaving.map((m) => m.content).join('\n\n');
  const keptMessages = live.filter((m) => m.kind !== 'summary');
  const rendered = checkpoint ? renderCheckpoint(checkpoint, 0) : '';
  // What the checkpoint presents as still open: an error it lists as fixed is not a stale one.
  const open = checkpoint
    ? renderCheckpoint(
        { ...checkpoint, errorsAndFixes: checkpoint.errorsAndFixes.filter((e) => e.fix === null) },
        0,
      )
    : '';
  const withKept = [rendered, ...keptMessages.map((m) => m.content)].join('\n\n');
  if (set.readable && values.show)
    console.log(`\n=== ${session} ${summarizer} ${point}\n${rendered || '(no checkpoint)'}\n`);
  return {
    session,
    summarizer,
    point,
    cut: prefixMessages.length,
    kept: keptMessages.length,
    leavingThrough: leaving.at(-1)?.seq ?? null,
    status: ledger[0]?.status ?? 'none',
    graded: probes.map((probe) => {
      const expect = aloneExpect(probe);
      return {
        probe,
        withKept: gradeExpect(probe.expect, withKept, open),
        alone: checkpoint && expect ? gradeExpect(expect, rendered, open) : null,
        inLeaving: expect !== null && gradeExpect({ ...expect, noneOf: [] }, leavingText),
        shown:
          shownText === undefined || expect === null
            ? null
            : gradeExpect({ ...expect, noneOf: [] }, shownText),
      };
    }),
    staleBlockers: checkpoint ? staleBlockers(checkpoint, probes) : [],
    blockers: checkpoint?.blockers.length ?? 0,
    failedCompleted: checkpoint ? failedCompleted(checkpoint, prefixMessages) : [],
    metaGoal: checkpoint ? isMetaText(checkpoint.goal) : false,
    metaRequest: checkpoint ? isMetaText(checkpoint.lastUserRequest) : false,
  };
}

/**
 * `n/d (p%)`, the percentage rounded down, so that a rate under a target never prints as the target
 * (253/299 is 84%, not 85%).
 */
const pct = (n: number, d: number) => (d === 0 ? '-' : `${n}/${d} (${Math.floor((100 * n) / d)}%)`);

/**
 * Probes answered from the checkpoint alone, of the probes it is asked: not before the first
 * compaction that applies (nothing has left the context, there is no checkpoint to grade), nor where
 * the answer is only in a message that never leaves (a system message).
 */
function aloneRate(graded: Graded[]): string {
  const judged = graded.filter((g) => g.alone !== null);
  return pct(judged.filter((g) => g.alone).length, judged.length);
}

function table(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(fmt)].join('\n');
}

/** One row per session and point (the tuning set only: the test set's sessions are not read). */
function printRows(rows: PointRow[]): void {
  console.log(
    table(
      [
        'session',
        'summarizer',
        'point',
        'msgs',
        'kept',
        'status',
        'with kept',
        'ckpt alone',
        'stale',
        'failed✓',
        'meta',
      ],
      rows.map((r) => [
        r.session,
        r.summarizer,
        r.point,
        String(r.cut),
        String(r.kept),
        r.status,
        pct(r.graded.filter((g) => g.withKept).length, r.graded.length),
        aloneRate(r.graded),
        String(r.staleBlockers.length),
        String(r.failedCompleted.length),
        [r.metaGoal ? 'goal' : '', r.metaRequest ? 'request' : ''].filter(Boolean).join('+') || '-',
      ]),
    ),
  );
}

/** The set's totals: one line per summarizer, with the kept messages, checkpoint alone, stale blockers. */
function printTotals(set: ProbeSet, rows: PointRow[]): void {
  const body = [...new Set(rows.map((r) => r.summarizer))].map((name) => {
    const mine = rows.filter((r) => r.summarizer === name);
    const graded = mine.flatMap((r) => r.graded);
    const stale = mine.reduce((n, r) => n + r.staleBlockers.length, 0);
    const blockers = mine.reduce((n, r) => n + r.blockers, 0);
    return [
      name,
      String(graded.length),
      pct(graded.filter((g) => g.withKept).length, graded.length),
      aloneRate(graded),
      `${stale}/${blockers}`,
    ];
  });
  console.log(`\n${set.name} set: totals per summarizer`);
  console.log(table(['summarizer', 'probes', 'with kept', 'ckpt alone', 'stale/blockers'], body));
}

function print(set: ProbeSet, rows: PointRow[]): void {
  for (const name of new Set(rows.map((r) => r.summarizer))) {
    const mine = rows.filter((r) => r.summarizer === name);
    const graded = mine.flatMap((r) => r.graded);
    const line = (label: string, gs: Graded[]) => [
      label,
      String(gs.length),
      pct(gs.filter((g) => g.withKept).length, gs.length),
      aloneRate(gs),
    ];
    console.log(
      `\n${set.name} set, ${name}: probes answered, with the kept messages and from the checkpoint alone`,
    );
    console.log(
      table(
        ['probes', 'n', 'with kept', 'ckpt alone'],
        [
          line('all', graded),
          ...PROBE_TYPES.map((t: ProbeType) =>
            line(
              t,
              graded.filter((g) => g.probe.type === t),
            ),
          ),
          ...POINTS.map((p) =>
            line(
              `at ${p}`,
              graded.filter((g) => g.probe.at === p),
            ),
          ),
        ],
      ),
    );
    const sum = (f: (r: PointRow) => number) => mine.reduce((n, r) => n + f(r), 0);
    const rate = (gs: Graded[], f: (g: Graded) => boolean | null) =>
      gs.length === 0 ? 1 : gs.filter((g) => f(g) === true).length / gs.length;
    const judged = graded.filter((g) => g.alone !== null);
    const blockers = sum((r) => r.blockers);
    const stale = sum((r) => r.staleBlockers.length);
    const { withKept, alone } = set.targets;
    const targets: Array<[string, boolean]> = [
      [`with kept messages ≥ ${withKept * 100}%`, rate(graded, (g) => g.withKept) >= withKept],
      [`checkpoint alone ≥ ${alone * 100}%`, rate(judged, (g) => g.alone) >= alone],
      set.targets.stale === 'none'
        ? ['stale blockers: 0', stale === 0]
        : ['stale blockers ≤ 10%', blockers === 0 || stale / blockers <= 0.1],
      ['failures listed as completed: 0', sum((r) => r.failedCompleted.length) === 0],
    ];
    console.log(
      `${set.name} set, ${name}: targets: ${targets.map(([label, met]) => `${label} ${met ? 'met' : 'NOT met'}`).join('; ')}`,
    );
    console.log(
      `${set.name} set, ${name}: ${mine.length} compactions (${mine.filter((r) => r.status === 'applied').length} applied); ` +
        `stale blockers ${pct(
          sum((r) => r.staleBlockers.length),
          sum((r) => r.blockers),
        )} of the blockers listed; ` +
        `failures listed as completed ${sum((r) => r.failedCompleted.length)}; ` +
        `goal from a meta message ${sum((r) => (r.metaGoal ? 1 : 0))}; ` +
        `last request from a meta message ${sum((r) => (r.metaRequest ? 1 : 0))}`,
    );
  }
}

/**
 * For a summarizer whose requests were seen (anthropic or openai against a fake): of the probes the
 * checkpoint alone missed, how many answers the model had been shown (the miss is the model's) and
 * how many it had not (clipped or pruned out of the prompt: the miss is compactor's).
 */
function printShown(rows: PointRow[]): void {
  for (const summarizer of new Set(rows.map((r) => r.summarizer))) {
    const missed = rows
      .filter((r) => r.summarizer === summarizer)
      .flatMap((r) => r.graded)
      .filter((g) => g.alone === false && g.shown !== null);
    if (missed.length === 0) continue;
    const positive = missed.filter((g) => {
      const e = aloneExpect(g.probe);
      return (e?.allOf?.length ?? 0) + (e?.anyOf?.length ?? 0) > 0;
    });
    const shown = positive.filter((g) => g.shown).length;
    console.log(
      `${summarizer}: of ${missed.length} probes missed alone, ${shown} had their answer in what the model was shown, ` +
        `${positive.length - shown} had not (clipped or pruned before the call), ${missed.length - positive.length} ask only that something be absent`,
    );
  }
}

function printMisses(rows: PointRow[]): void {
  console.log(
    '\nProbes missed from the checkpoint alone (✗ = also missed with the kept messages; · = the answer is not in the leaving messages; ○ = the model was not shown it: clipped or pruned):',
  );
  for (const r of rows) {
    const missed = r.graded.filter((g) => g.alone === false);
    const extra = [
      ...r.staleBlockers.map((b) => `stale blocker: ${b}`),
      ...r.failedCompleted.map((c) => `failed as completed: ${c}`),
    ];
    if (missed.length === 0 && extra.length === 0) continue;
    console.log(`\n${r.session} ${r.summarizer} ${r.point} (left through seq ${r.leavingThrough ?? '-'})`);
    for (const g of missed) {
      console.log(
        `  ${g.withKept ? ' ' : '✗'}${g.inLeaving ? ' ' : '·'}${g.shown === false ? '○' : ' '} ${g.probe.type}: ${g.probe.question} ${JSON.stringify(aloneExpect(g.probe) ?? g.probe.expect)}`,
      );
    }
    for (const e of extra) console.log(`  ! ${e.slice(0, 200)}`);
  }
}

/**
 * Where the key needs a reader: a probe whose answer the leaving messages do not hold and that has
 * no `alone` answer, and an `alone` answer written for another cut than this run's.
 */
function printKeyGaps(rows: PointRow[]): void {
  const gaps = new Set<string>();
  for (const r of rows) {
    for (const g of r.graded) {
      if (g.alone === null && !g.probe.alone) continue;
      const where = `${r.session} ${r.point} ${g.probe.type} "${g.probe.question}"`;
      if (!g.probe.alone && !g.inLeaving)
        gaps.add(`${where}: no alone answer (left through seq ${r.leavingThrough})`);
      else if (g.probe.alone?.expect && !g.inLeaving)
        gaps.add(`${where}: alone answer not in the leaving messages (through seq ${r.leavingThrough})`);
      if (g.probe.alone && (r.leavingThrough === null || !aloneCuts(g.probe).includes(r.leavingThrough)))
        gaps.add(
          `${where}: alone answer for seq ${aloneCuts(g.probe).join(', ')}, ${r.summarizer} left through ${r.leavingThrough}`,
        );
    }
  }
  if (gaps.size === 0) return;
  console.log(`\nProbe key: ${gaps.size} probes to read again`);
  for (const g of gaps) console.log(`  ${g}`);
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error('fidelity:probes failed:', error);
    process.exit(1);
  },
);
