/**
 * An agent on the real Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, its Claude Code CLI
 * binary included) keeps its session in compactor through `compactorOptions`: the SDK mirrors every
 * transcript line to compactor's `SessionStore`, the `Stop` hook enqueues `session.run.completed`,
 * a real worker compacts the session between runs, and each run resumes from the store — so after
 * each compaction the CLI's next request is compactor's compacted history, and the strict fake
 * Messages API (streaming and counting tokens, as the CLI asks) accepts every request. Claude Code's
 * own `/compact` gets the tenant policy's summary instructions (`PreCompact`) and compactor's
 * checkpoint after it (`SessionStart`); those two runs send Claude Code's own compacted history,
 * which has adjacent user turns the API merges, so they are held to the API's rules, not the
 * strict ones. The scripted model then calls `recall_search` on compactor's MCP server, which
 * the CLI reaches over HTTP with the tenant's key, and gets back the file path that left its
 * context. Nothing is lost: every line the SDK appended comes back from `load`, and the session's
 * live and archived messages are every message appended. The CLI reaches nothing but 127.0.0.1: a
 * proxy given as HTTP(S)_PROXY counts any other attempt.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type Options,
  query,
  type SDKMessage,
  type SDKResultMessage,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry,
} from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CompactorSessionStore,
  compactorOptions,
  isMessageLine,
  messagesOf,
  type RunCompletedEvent,
} from '../../producer/frameworks/claude-agent-sdk/index.ts';
import { SUMMARY_INTRO } from '../../shared/context/render.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { createKey } from '../../worker/postgres/api-keys.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import type { FakeBehaviour } from '../support/fake-anthropic.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';
import { patient } from '../support/patience.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'claude-agents';
const MODEL = 'claude-sonnet-5';
const INSTRUCTIONS = 'Keep every file path and every command verbatim.';
/** Files the scripted model reads with Claude Code's Read tool: a few kB each. */
const FILES = [
  'shared/planning/window.ts',
  'shared/policy/policy.ts',
  'shared/contract/blocks.ts',
  'shared/context/render.ts',
  'producer/sessions.ts',
  'shared/summary/checkpoint.ts',
];
const repo = process.cwd();

let api: Listening;
let apiKey = '';
let proxy: Server;
let proxyUrl = '';
const outside: string[] = [];
const homes: string[] = [];

beforeAll(async () => {
  ctx.fake.strict = true;
  api = await startKeyedApi(ctx);
  apiKey = (await createKey(ctx.tdb.database.db, { tenantId, name: 'claude agents' })).secret;
  // Anything the CLI sends through a proxy is traffic beyond 127.0.0.1: counted, refused.
  proxy = createServer((req, res) => {
    outside.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  proxy.on('connect', (req, socket) => {
    outside.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** The CLI's environment: the fake API, a fresh config directory, no traffic beyond this machine. */
function cliEnv(): Record<string, string> {
  const home = mkdtempSync(path.join(tmpdir(), 'compactor-claude-'));
  homes.push(home);
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: ctx.llm.url,
    ANTHROPIC_API_KEY: 'sk-ant-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    NO_PROXY: '127.0.0.1,localhost',
  };
}

/** A store that records what the SDK appends before compactor's store takes it. */
function recording(store: CompactorSessionStore, appended: SessionStoreEntry[]): SessionStore {
  return {
    append: (key: SessionKey, entries: SessionStoreEntry[]) => {
      if (key.subpath === undefined)
        appended.push(...(JSON.parse(JSON.stringify(entries)) as SessionStoreEntry[]));
      return store.append(key, entries);
    },
    load: (key) => store.load(key),
    listSessions: (projectKey) => store.listSessions(projectKey),
    listSubkeys: (key) => store.listSubkeys(key),
    delete: (key) => store.delete(key),
  };
}

/** The text of a request body, to look for what it carries. */
function bodyText(i: number): string {
  return ctx.fake.requests[i]?.rawBody ?? '';
}

async function appliedCompactions(): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from compactions where tenant_id = ${tenantId} and status = 'applied'`;
  return row?.n ?? 0;
}

describe('an agent on the Claude Agent SDK, its sessions in compactor', () => {
  it(
    'resumes from compactor after each of its compactions, every request accepted; recalls over MCP; loses nothing',
    async () => {
      const db = ctx.tdb.database.db;
      await setPolicy(db, tenantId, null, {
        strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 800, instructions: INSTRUCTIONS },
        triggers: { maxTokens: 4_000 },
      });
      ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
      const events: RunCompletedEvent[] = [];
      const compactor = compactorOptions({
        db,
        producer: ctx.producer,
        tenantId,
        recall: { apiUrl: api.url, apiKey },
        onRunCompleted: (event) => events.push(event),
      });
      const appended: SessionStoreEntry[] = [];
      const store = recording(compactor.sessionStore as CompactorSessionStore, appended);
      let sessionId: string | undefined;

      /** One run of the agent: `replies` scripted, resumed from the store after the first. */
      async function run(prompt: string, replies: FakeBehaviour[], options: { event?: boolean } = {}) {
        ctx.fake.enqueue(...replies);
        const first = ctx.fake.requests.length;
        const eventsBefore = events.length;
        const messages: SDKMessage[] = [];
        const stderr: string[] = [];
        const agentOptions: Options = {
          ...compactor,
          sessionStore: store,
          allowedTools: [...(compactor.allowedTools ?? []), 'Read'],
          tools: ['Read'],
          settingSources: [],
          model: MODEL,
          cwd: repo,
          env: cliEnv(),
          stderr: (line) => stderr.push(line),
          ...(sessionId ? { resume: sessionId } : {}),
        };
        try {
          for await (const message of query({ prompt, options: agentOptions })) messages.push(message);
        } catch (error) {
          // The SDK throws on an error result: say which requests the fake refused, and why.
          const refused = ctx.fake.requests.slice(first).filter((r) => r.status !== 200);
          throw new Error(
            `${(error as Error).message}; refused: ${refused.map((r) => `${r.path} ${r.status}`).join(', ')}`,
          );
        }
        const result = messages.find((m): m is SDKResultMessage => m.type === 'result');
        expect(result, stderr.join('')).toBeDefined();
        expect(result?.is_error, JSON.stringify(result)).toBe(false);
        // A request the strict fake refused consumes no scripted reply: every one was taken, and
        // every request of the run was answered 200.
        expect(ctx.fake.pending).toBe(0);
        const refused = ctx.fake.requests.slice(first).filter((r) => r.status !== 200);
        expect(refused.map((r) => `${r.path} ${r.status}: ${r.rawBody.slice(0, 200)}`)).toEqual([]);
        sessionId ??= result?.session_id;
        if (options.event !== false) {
          expect(events.length).toBe(eventsBefore + 1);
          const event = events.at(-1) as RunCompletedEvent;
          const state = await waitFor(async () => {
            const s = await ctx.producer.queue.getJobState(jobIdOf(tenantId, event.eventId));
            return s === 'completed' || s === 'failed' ? s : undefined;
          }, 30_000);
          expect(state).toBe('completed');
        }
        return { first, last: ctx.fake.requests.length, messages };
      }

      const readRun = (i: number): FakeBehaviour[] => {
        const [a, b] = [FILES[i % FILES.length] as string, FILES[(i + 1) % FILES.length] as string];
        return [
          {
            reply: {
              thinking: `Run ${i}: I need ${a}.`,
              text: `Reading ${a}.`,
              toolUse: [{ name: 'Read', input: { file_path: path.join(repo, a) } }],
            },
          },
          {
            reply: {
              thinking: `Now ${b}.`,
              toolUse: [{ name: 'Read', input: { file_path: path.join(repo, b) } }],
            },
          },
          { reply: { thinking: 'I have what I need.', text: `Run ${i} done: ${a} and ${b} read.` } },
        ];
      };

      // Runs that read files until the worker has compacted the session three times; after each
      // compaction, the next run's first request is compactor's compacted history.
      let resumedCompacted = 0;
      for (let i = 0; (await appliedCompactions()) < 3; i++) {
        expect(i).toBeLessThan(8);
        const compactedBefore = await appliedCompactions();
        const { first } = await run(`Run ${i}: read two files and tell me what they do.`, readRun(i));
        if (compactedBefore > 0 && bodyText(first).includes(SUMMARY_INTRO.slice(0, 60))) resumedCompacted++;
      }
      const { first: afterThird } = await run('Run on: read two more files.', readRun(7));
      expect(bodyText(afterThird)).toContain(SUMMARY_INTRO.slice(0, 60));
      resumedCompacted++;
      expect(resumedCompacted).toBeGreaterThanOrEqual(3);
      expect(await appliedCompactions()).toBeGreaterThanOrEqual(3);

      // Recall over MCP: the model searches for a file path that left its context.
      const target = FILES[0] as string;
      const recall = await run('Which file did you read first?', [
        {
          reply: {
            toolUse: [{ name: 'mcp__compactor__recall_search', input: { sessionId, query: target } }],
          },
        },
        { reply: { text: `The first file was ${target}.` } },
      ]);
      expect(recall.last - recall.first).toBe(2);
      const tools =
        (ctx.fake.requests[recall.first]?.body as { tools?: Array<{ name: string }> } | undefined)?.tools ??
        [];
      expect(tools.map((t) => t.name)).toContain('mcp__compactor__recall_search');
      const answer = bodyText(recall.first + 1);
      expect(answer).toContain('tool_result');
      expect(answer).toContain('\\"hits\\"');
      expect(answer).toContain(`«${target}»`);

      // Claude Code compacts on its own: its summary prompt carries the policy's instructions, and
      // compactor's checkpoint reaches the model right after. Claude Code's own compacted history puts
      // the files it read back as user turns of their own, next to other user turns: the API merges
      // adjacent turns of one role (the strict fake refuses them), so these two runs of Claude Code's
      // own history go to the fake's API rules; the next run resumes from compactor's, strict again.
      ctx.fake.strict = false;
      const summary = '<analysis>Files were read.</analysis><summary>The user had files read.</summary>';
      const compacted = await run('/compact', [{ reply: { text: summary } }], { event: false });
      // One summary request (Claude Code also counts tokens while it compacts).
      const summaryRequests = ctx.fake.requests
        .slice(compacted.first, compacted.last)
        .filter((r) => r.path.split('?')[0] === '/v1/messages');
      expect(summaryRequests.length).toBe(1);
      expect(summaryRequests[0]?.rawBody).toContain(INSTRUCTIONS);
      const after = await run('Carry on.', [{ reply: { text: 'Carrying on.' } }]);
      expect(bodyText(after.first)).toContain('SessionStart hook additional context');
      expect(bodyText(after.first)).toContain(SUMMARY_INTRO.slice(0, 60));
      ctx.fake.strict = true;

      // Nothing lost: every line the SDK appended comes back from load, in order (compactor's own
      // compaction lines between them), and the session's messages are all live or archived.
      const loaded = (await store.load({ projectKey: 'unused', sessionId: sessionId as string })) ?? [];
      const ours = new Set(appended.map((e) => JSON.stringify(e)));
      expect(loaded.filter((e) => ours.has(JSON.stringify(e)))).toEqual(appended);
      const extra = loaded.filter((e) => !ours.has(JSON.stringify(e)));
      expect(extra.filter((e) => e.subtype === 'compact_boundary').length).toBeGreaterThanOrEqual(3);
      const lines = appended.filter((e) => isMessageLine(e)).map((entry, seq) => ({ seq, entry }));
      const messages = messagesOf(lines, 'appended', true);
      const report = await audit(db, tenantId, sessionId as string);
      expect(violations(report)).toEqual([]);
      expect(report.liveOriginals + report.archivedOriginals).toBe(messages.length);
      // Every request went to the fake, and nothing left this machine.
      expect(ctx.fake.requests.every((r) => r.path.startsWith('/v1/messages') && r.status === 200)).toBe(
        true,
      );
      expect(outside).toEqual([]);
      const counted = ctx.fake.requests.filter((r) => r.path.includes('count_tokens')).length;
      console.log(
        `claude agent sdk: ${ctx.fake.requests.length} requests (${counted} token counts), ` +
          `${await appliedCompactions()} compactions, ${appended.length} lines, ${messages.length} messages`,
      );
    },
    patient(240_000),
  );
});
