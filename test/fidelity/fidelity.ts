/**
 * `npm run fidelity [-- --keep-recent N] [--cache-user-turn]`: runs each strategy over every corpus
 * session through the real pipeline and database (`summarize` with the `extractive` summarizer,
 * with `anthropic` and with `anthropic-compaction`, the real SDK against the fake Messages API
 * server, the paths the compaction block names counted beside the checkpoint's; with `openai`, the
 * real `openai` SDK against the fake Chat Completions server, whose answers come from the same
 * stand-in model as the fake Messages API's; `summarize` with a
 * tail of 20,000 tokens; `clearToolResults`; `auto`) and prints per session and in total: tokens
 * before → after, the share of the leaving messages' working-set paths kept in the checkpoint,
 * whether the user's last real request was kept (live, verbatim in the checkpoint, or condensed
 * there with its seq), pinned messages kept, tool pairs whole, the ledger rows written, and the LLM
 * calls, the input tokens sent to the LLM (beside the tokens of the messages that left), the
 * prompt-cache tokens read and written, and their cost (USD) per compaction.
 *
 * Options: `--keep-recent N` (an integer ≥ 0, default 10: the messages `summarize` keeps live);
 * `--cache-user-turn` runs the `anthropic` summarizer with a cache breakpoint at the end of its user
 * turn (off by default), to weigh what that breakpoint costs.
 *
 * Targets, what an agent needs to carry on after a summary: 100% of paths, requests and pinned
 * messages kept, tool pairs whole; tokens after at most 25% of before on sessions over 100
 * messages. They apply to the `summarize` runs (a strategy that only clears keeps every message and
 * writes no checkpoint). Exits 1 when a target is missed. Not part of `npm test`.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { openDatabase } from '../../producer/postgres/db.ts';
import { createSession } from '../../producer/sessions.ts';
import type { Message } from '../../shared/contract/message.ts';
import { parseTranscript, type TranscriptMessage } from '../../shared/contract/transcript.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { type PaybackInputs, REFERENCE_HORIZON_REQUESTS } from '../../shared/policy/payback.ts';
import { type Strategy, strategySchema } from '../../shared/strategies/index.ts';
import { checkpointSchema } from '../../shared/summary/checkpoint.ts';
import { compactionBlockOf } from '../../shared/summary/compaction-block.ts';
import { keepsRequest, lastUserRequestMessage } from '../../shared/summary/last-request.ts';
import { extractWorkingSet } from '../../shared/working-set/working-set.ts';
import type { Summarizers } from '../../worker/pipeline/ports.ts';
import { audit } from '../../worker/postgres/audit.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { createAnthropicCompactionSummarizer } from '../../worker/summarizers/anthropic-compaction.ts';
import { createOpenAISummarizer } from '../../worker/summarizers/openai.ts';
import { FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';
import { type RecallScore, recallProbes, scoreRecall } from './recall-probes.ts';
import { withScratch } from './scratch.ts';

const { values } = parseArgs({
  options: {
    'keep-recent': { type: 'string', default: '10' },
    'cache-user-turn': { type: 'boolean', default: false },
  },
});
const keepRecent = Number(values['keep-recent']);
if (!Number.isInteger(keepRecent) || keepRecent < 0) throw new Error('--keep-recent must be an integer ≥ 0');

interface Row {
  session: string;
  /** The run: strategy, and summarizer where it summarizes. */
  summarizer: string;
  /** Ledger rows the compaction wrote (two for `auto` when it summarized after clearing). */
  stages: number;
  /** USD, all its ledger rows. */
  costUsd: number;
  messages: number;
  status: string;
  tokensBefore: number;
  tokensAfter: number;
  pathsKept: number;
  pathsLeaving: number;
  requestKept: boolean;
  pinnedKept: number;
  pinned: number;
  pairsWhole: boolean;
  /** Input tokens sent to the LLM: input, cache read and cache write together. */
  llmInputTokens: number;
  /** Of those, read from the prompt cache, and written to it. */
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Estimated tokens of the messages that left the live history. */
  leavingTokens: number;
  /** LLM requests the compaction sent (to the fake servers). */
  llmCalls: number;
  /** Leaving working-set paths named in Anthropic's compaction block, when the summary is one; else null. */
  blockPaths: number | null;
  /** Recall over the archive: the archived paths and commands its search ranks in its top five. */
  recall: RecallScore;
  /**
   * Predicted payback ratio at {@link REFERENCE_HORIZON_REQUESTS} requests (savings / cost over all
   * the compaction's rows); null: it costs nothing; undefined: no prediction (nothing applied).
   */
  payback: number | null | undefined;
}

async function main(): Promise<number> {
  const chat = new FakeOpenAIChatServer();
  const chatUrl = await chat.start();
  try {
    return await run(chat, chatUrl);
  } finally {
    await chat.close();
  }
}

async function run(chat: FakeOpenAIChatServer, chatUrl: string): Promise<number> {
  return withScratch('fidelity', async ({ database, fake, llmUrl, compact }) => {
    const extractive = createExtractiveSummarizer();
    const openai = createOpenAISummarizer({ apiKey: 'fidelity', baseURL: chatUrl, model: 'gpt-5.4-mini' });
    const anthropic = createAnthropicSummarizer({
      apiKey: 'fidelity',
      baseURL: llmUrl,
      model: 'claude-haiku-4-5',
      cacheUserTurn: values['cache-user-turn'],
    });
    const compaction = createAnthropicCompactionSummarizer({
      apiKey: 'fidelity',
      baseURL: llmUrl,
      model: 'claude-sonnet-4-6',
    });
    const summarize = { type: 'summarize', keepRecent, maxSummaryTokens: 2_000 } as const;
    const runs: Array<{
      label: string;
      summarizers: Summarizers;
      strategy: Strategy;
    }> = [
      { label: 'summarize/extractive', summarizers: { primary: extractive }, strategy: summarize },
      { label: 'summarize/anthropic', summarizers: { primary: anthropic }, strategy: summarize },
      {
        label: 'summarize/anthropic-compaction',
        summarizers: { primary: extractive, named: { 'anthropic-compaction': compaction } },
        strategy: { ...summarize, summarizer: 'anthropic-compaction' },
      },
      { label: 'summarize/openai', summarizers: { primary: openai }, strategy: summarize },
      {
        label: 'summarize+20k tail/extractive',
        summarizers: { primary: extractive },
        strategy: { ...summarize, keepRecentTokens: 20_000 },
      },
      {
        label: 'clearToolResults',
        summarizers: { primary: extractive },
        strategy: strategySchema.parse({ type: 'clearToolResults' }),
      },
      {
        label: 'auto/extractive',
        summarizers: { primary: extractive },
        strategy: strategySchema.parse({ type: 'auto', summarize: { keepRecent } }),
      },
    ];
    const files = (await readdir(CORPUS_DIR)).filter((f) => f.endsWith('.jsonl')).sort();
    const rows: Row[] = [];
    for (const { label, strategy, summarizers } of runs) {
      const tenantId = label.replace(/[^a-z0-9]+/gi, '-');
      for (const file of files) {
        const session = file.replace(/\.jsonl$/, '');
        const original = parseTranscript(await readFile(path.join(CORPUS_DIR, file)), file);
        await createSession(database.db, { tenantId, sessionId: session, messages: original });
        const sent = fake.requests.length + chat.requests.length;
        await compact({ tenantId, sessionId: session, strategy, summarizers });
        const measured = await measure(database, tenantId, session, original, label);
        rows.push({ ...measured, llmCalls: fake.requests.length + chat.requests.length - sent });
      }
    }
    print(rows);
    printRecall(rows);
    return targetsMet(rows) ? 0 : 1;
  });
}

async function measure(
  database: ReturnType<typeof openDatabase>,
  tenantId: string,
  session: string,
  original: TranscriptMessage[],
  summarizer: string,
): Promise<Omit<Row, 'llmCalls'>> {
  // Every ledger row of the compaction, oldest first: `auto` writes one per stage.
  const ledger = await database.sql<
    {
      status: string;
      tokens_before: number | null;
      input: number;
      read: number;
      written: number;
      cost: number;
      payback_inputs: PaybackInputs | null;
      payback_cost: number | null;
    }[]
  >`select status, tokens_before, payback_inputs, payback_cost_usd::float8 as payback_cost,
           coalesce(input_tokens, 0) + coalesce(cache_read_tokens, 0) + coalesce(cache_write_tokens, 0) as input,
           coalesce(cache_read_tokens, 0) as read, coalesce(cache_write_tokens, 0) as written,
           coalesce(cost_usd, 0)::float8 as cost
      from compactions where tenant_id = ${tenantId} and session_id = ${session} order by created_at`;
  const [first] = ledger;
  const [now] = await database.sql<{ tokens: number }[]>`
    select token_count::int as tokens from sessions where tenant_id = ${tenantId} and id = ${session}`;
  const live = await database.sql<{ seq: string; pinned: boolean }[]>`
    select seq, pinned from messages where tenant_id = ${tenantId} and session_id = ${session}`;
  const liveSeqs = new Set(live.map((m) => Number(m.seq)));
  const [row] = await database.sql<{ checkpoint: unknown }[]>`
    select checkpoint from sessions where tenant_id = ${tenantId} and id = ${session}`;
  const checkpoint = row?.checkpoint ? checkpointSchema.parse(row.checkpoint) : null;
  const leaving = original.filter((m) => !liveSeqs.has(m.seq)) as Message[];
  const leavingPaths = extractWorkingSet(leaving);
  const kept = new Set(checkpoint?.workingSet ?? []);
  // The user's real last request (harness, slash-command and IDE messages skipped, as the
  // summarizers skip them): kept when it is live, verbatim in the checkpoint, or condensed there
  // with its beginning and a pointer to its seq in the archive.
  const lastRequest = lastUserRequestMessage(original as Message[]);
  const requestKept =
    !lastRequest ||
    liveSeqs.has(lastRequest.seq) ||
    keepsRequest(checkpoint?.lastUserRequest ?? '', lastRequest);
  const pinned = original.filter((m) => m.pinned);
  const [summary] = await database.sql<{ blocks: unknown }[]>`
    select content_blocks as blocks from messages
    where tenant_id = ${tenantId} and session_id = ${session} and kind = 'summary' order by seq desc limit 1`;
  const block = compactionBlockOf(summary?.blocks);
  const report = await audit(database.db, tenantId, session);
  const archived = await database.sql<{ seq: string }[]>`
    select distinct seq from archived_messages
    where tenant_id = ${tenantId} and session_id = ${session} and kind <> 'summary'`;
  const archivedSeqs = new Set(archived.map((r) => Number(r.seq)));
  const probes = recallProbes((original as Message[]).filter((m) => archivedSeqs.has(m.seq)));
  return {
    recall: await scoreRecall(database.db, tenantId, session, probes),
    session,
    summarizer,
    messages: original.length,
    status: ledger.some((r) => r.status === 'applied') ? 'applied' : (first?.status ?? 'none'),
    stages: ledger.length,
    costUsd: ledger.reduce((sum, r) => sum + Number(r.cost), 0),
    tokensBefore: Number(first?.tokens_before ?? now?.tokens ?? 0),
    tokensAfter: Number(now?.tokens ?? 0),
    pathsKept: leavingPaths.filter((p) => kept.has(p)).length,
    pathsLeaving: leavingPaths.length,
    requestKept,
    pinnedKept: pinned.filter((m) => liveSeqs.has(m.seq)).length,
    pinned: pinned.length,
    pairsWhole: report.splitToolPairs === 0,
    llmInputTokens: ledger.reduce((sum, r) => sum + Number(r.input), 0),
    cacheReadTokens: ledger.reduce((sum, r) => sum + Number(r.read), 0),
    cacheWriteTokens: ledger.reduce((sum, r) => sum + Number(r.written), 0),
    leavingTokens: leaving.reduce((sum, m) => sum + m.tokenCount, 0),
    blockPaths: block ? leavingPaths.filter((p) => block.content.includes(p)).length : null,
    payback: paybackAtReference(ledger.filter((r) => r.status === 'applied')),
  };
}

/**
 * The predicted payback ratio of a compaction's applied rows at the reference horizon: each row's
 * tokens saved per request × {@link REFERENCE_HORIZON_REQUESTS} × its price per saved token, over
 * the rows' predicted cost.
 */
function paybackAtReference(
  rows: Array<{ payback_inputs: PaybackInputs | null; payback_cost: number | null }>,
): number | null | undefined {
  const predicted = rows.filter((r) => r.payback_inputs !== null);
  if (predicted.length === 0) return undefined;
  const savings = predicted.reduce(
    (sum, r) =>
      sum +
      (r.payback_inputs?.tokensSavedPerRequest ?? 0) *
        REFERENCE_HORIZON_REQUESTS *
        (r.payback_inputs?.savedTokenUsd ?? 0),
    0,
  );
  const cost = predicted.reduce((sum, r) => sum + Number(r.payback_cost ?? 0), 0);
  return cost > 0 ? savings / cost : null;
}

function print(rows: Row[]): void {
  const header = [
    'session',
    'summarizer',
    'msgs',
    'status',
    'tokens',
    'after %',
    'paths kept',
    'request',
    'pinned',
    'pairs',
    'rows',
    'leaving',
    'LLM in',
    'cache r/w',
    'calls',
    'USD',
    'recall',
    `payback@${REFERENCE_HORIZON_REQUESTS}`,
  ];
  const body = rows.map((r) => [
    r.session,
    r.summarizer,
    String(r.messages),
    r.status,
    `${r.tokensBefore} → ${r.tokensAfter}`,
    `${((100 * r.tokensAfter) / Math.max(1, r.tokensBefore)).toFixed(1)}%`,
    `${r.pathsKept}/${r.pathsLeaving}`,
    r.requestKept ? 'yes' : 'NO',
    `${r.pinnedKept}/${r.pinned}`,
    r.pairsWhole ? 'whole' : 'SPLIT',
    String(r.stages),
    String(r.leavingTokens),
    String(r.llmInputTokens),
    `${r.cacheReadTokens}/${r.cacheWriteTokens}`,
    String(r.llmCalls),
    r.costUsd.toFixed(4),
    `${r.recall.paths.found + r.recall.commands.found}/${r.recall.paths.asked + r.recall.commands.asked}`,
    r.payback === undefined ? '-' : r.payback === null ? 'free' : `${r.payback.toFixed(2)}x`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  console.log([fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(fmt)].join('\n'));
  for (const name of new Set(rows.map((r) => r.summarizer))) {
    const mine = rows.filter((r) => r.summarizer === name);
    const sum = (f: (r: Row) => number) => mine.reduce((n, r) => n + f(r), 0);
    const big = mine.filter((r) => r.messages > 100);
    const applied = mine.filter((r) => r.status === 'applied');
    const bigOk = big.filter((r) => r.tokensAfter <= 0.25 * r.tokensBefore).length;
    console.log(
      `\n${name}: tokens ${sum((r) => r.tokensBefore)} → ${sum((r) => r.tokensAfter)} ` +
        `(${((100 * sum((r) => r.tokensAfter)) / sum((r) => r.tokensBefore)).toFixed(1)}% of before); ` +
        `paths kept ${sum((r) => r.pathsKept)}/${sum((r) => r.pathsLeaving)}; ` +
        `last request kept ${mine.filter((r) => r.requestKept).length}/${mine.length}; ` +
        `pinned kept ${sum((r) => r.pinnedKept)}/${sum((r) => r.pinned)}; ` +
        `tool pairs whole ${mine.filter((r) => r.pairsWhole).length}/${mine.length}; ` +
        `sessions > 100 messages at ≤ 25%: ${bigOk}/${big.length}; ` +
        `LLM input tokens per compaction: ${applied.length ? Math.round(sum((r) => r.llmInputTokens) / applied.length) : 0}` +
        (applied.length
          ? ` (leaving tokens per compaction: ${Math.round(sum((r) => r.leavingTokens) / applied.length)}; ` +
            `LLM input ≤ leaving on ${applied.filter((r) => r.llmInputTokens <= r.leavingTokens).length}/${applied.length}; ` +
            `cache read ${Math.round(sum((r) => r.cacheReadTokens) / applied.length)}, ` +
            `cache write ${Math.round(sum((r) => r.cacheWriteTokens) / applied.length)} per compaction); `
          : '; ') +
        `LLM calls per compaction: ${applied.length ? (sum((r) => r.llmCalls) / applied.length).toFixed(2) : 0}; ` +
        `USD per compaction: ${applied.length ? (sum((r) => r.costUsd) / applied.length).toFixed(4) : '0'}` +
        (mine.some((r) => r.blockPaths !== null)
          ? `; paths named in the compaction block ${sum((r) => r.blockPaths ?? 0)}/${sum((r) => r.pathsLeaving)}`
          : ''),
    );
  }
}

/**
 * Recall over every run's archive: of the file paths and commands that left (archived), the share
 * whose search ranks a seq holding them in its top five (target 95%), and the misses, a few.
 */
function printRecall(rows: Row[]): void {
  const sum = (f: (r: Row) => number) => rows.reduce((n, r) => n + f(r), 0);
  const found = sum((r) => r.recall.paths.found + r.recall.commands.found);
  const asked = sum((r) => r.recall.paths.asked + r.recall.commands.asked);
  const rate = asked === 0 ? 100 : (100 * found) / asked;
  console.log(
    `\nrecall (search top 5 holds a seq where it appeared; target 95%): ${found}/${asked} = ${rate.toFixed(1)}% ` +
      `(paths ${sum((r) => r.recall.paths.found)}/${sum((r) => r.recall.paths.asked)}, ` +
      `commands ${sum((r) => r.recall.commands.found)}/${sum((r) => r.recall.commands.asked)})`,
  );
  const missed = rows.flatMap((r) =>
    r.recall.missed.map((p) => `${r.session}: ${p.kind} ${JSON.stringify(p.text)}`),
  );
  for (const line of [...new Set(missed)].slice(0, 15)) console.log(`  missed ${line}`);
}

function targetsMet(rows: Row[]): boolean {
  return rows
    .filter((r) => r.summarizer.startsWith('summarize/'))
    .every(
      (r) =>
        r.pathsKept === r.pathsLeaving &&
        r.requestKept &&
        r.pinnedKept === r.pinned &&
        r.pairsWhole &&
        (r.messages <= 100 || r.tokensAfter <= 0.25 * r.tokensBefore),
    );
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error('fidelity failed:', error);
    process.exit(1);
  },
);
