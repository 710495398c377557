/**
 * The "Where things are" table of docs/architecture.md, generated: each folder of the code with its
 * layer and what it holds. The layers are read from the rules that enforce them (the
 * `core-layer-N-…` rules of .dependency-cruiser.cjs, built from its `CORE_LAYERS`), so the table
 * cannot give a folder another layer than the import check does; what each folder holds is
 * {@link FOLDERS}, which test/unit/docs-reference.test.ts holds to the folders on disk (every
 * folder of `shared/`, `producer/` and `worker/` has a row, or is named in its parent's row).
 * The session formats' folders (`shared/formats/<format>/`) are read from the disk, each row the
 * first sentence of its `format.ts` comment, so a new format needs no row here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { alignedTable, code } from './markdown.ts';

/** The repository's root. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The folder of the session formats, each of its subfolders one format with its `format.ts`. */
const FORMATS_FOLDER = 'shared/formats/';

/**
 * The rows of the session formats' folders, in name order: `shared/formats/<format>/` and the
 * first sentence of the comment that opens its `format.ts`, without its leading "The `<format>`
 * session format (format.ts):".
 * @throws {Error} naming the folder, when its `format.ts` is missing or opens with no comment.
 */
export function formatFolderRows(root: string = ROOT): Record<string, string> {
  const rows: Record<string, string> = {};
  const folders = readdirSync(path.join(root, FORMATS_FOLDER), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const name of folders) {
    const file = path.join(root, FORMATS_FOLDER, name, 'format.ts');
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new Error(
        `${FORMATS_FOLDER}${name}/: no format.ts (each format folder has one, see docs/architecture.md)`,
      );
    }
    const comment = /^\/\*\*([\s\S]*?)\*\//.exec(text)?.[1];
    if (comment === undefined)
      throw new Error(`${FORMATS_FOLDER}${name}/format.ts: opens with no /** comment */`);
    const prose = comment
      .split('\n')
      .map((line) => line.replace(/^\s*\* ?/, '').trim())
      .join(' ')
      .trim();
    const sentence = /^(.*?[.:])(?:\s|$)(?=[A-Z-]|$)/.exec(prose)?.[1] ?? prose;
    const body = sentence.replace(/^The `[^`]+` session format \(format\.ts\): /, '').replace(/:$/, '');
    rows[`${FORMATS_FOLDER}${name}/`] = body.endsWith('.') ? body.slice(0, -1) : body;
  }
  return rows;
}

/** {@link FOLDERS} as written here, the format folders' rows apart. */
const WRITTEN: Readonly<Record<string, string>> = {
  'shared/contract/':
    'the shapes everything shares: messages and content blocks, token estimates, the error taxonomy, transcript parsing, content checks, the formats of API keys and webhook secrets; the published JSON Schema files (`schemas/`, written by `npm run contract`)',
  'shared/text/':
    'reading transcript text: cleaning and clipping, shell commands, error lines, what a user-role message is',
  'shared/trust/':
    'what a summary trusts: the prompt-injection detector, secret-looking paths and when one enters the working set',
  'shared/working-set/': 'working-set extraction: the file paths a session worked with',
  'shared/summary/':
    'the checkpoint, prompt, chunking, pricing, the `Summarizer` interface, and the guard every checkpoint passes before it is stored (`guard.ts`)',
  'shared/extractive/': 'the offline summarizer, one heuristic per file',
  'shared/fidelity/':
    'the fidelity check: a summary scored against the messages it replaces, and what it lost',
  'shared/context/': "context out: a session's live rows rendered as the agent's next Messages API request",
  'shared/planning/': 'the window rule every strategy plans with, plan types, and the effects a plan becomes',
  'shared/formats/':
    'one folder per session format (its row below), each with its words, message validation and row (`row.ts`), rendered context, transcript reading, API schemas, media (`media.ts`) and the row rules of the strategies, in one object (`format.ts`, the interface of `format.ts` here), and the example rows the format tests take (`examples.ts`); `registry.ts` gives each format by name and alone compares them (which format a message or a transcript is); `api-schema.ts` holds the fields every context answer shares in the HTTP API schemas. See To add a session format below',
  'shared/strategies/':
    "one file per strategy (schema, shorthand, whether it summarizes, planning rule), the registry, and `plan.ts`, which hands a session to its strategy's rule",
  'shared/policy/': 'policies, triggers, admission, the storm guard, spend budgets, tenant limits',
  'shared/protocol/':
    "what producer, worker and agent services send each other: queue and job names, the event schemas, job ids and idempotency keys, the HTTP API's request schemas, and their JSON Schema (`json-schemas.ts`, which `npm run contract` writes to `shared/contract/schemas/`)",
  'shared/recall/':
    "recall's requests and answers (the archive's search and read), as the zod schemas the client library, the HTTP routes and the MCP tools all take and give",
  'producer/':
    "what agent services call (the package's main entry): enqueue events, create sessions, append, import, load the next request's context, search and read the archive (recall), verify webhook signatures",
  'producer/frameworks/claude-agent-sdk/':
    "the Claude Agent SDK adapter (the package's `./claude-agent-sdk` entry): a `SessionStore` on compactor (every transcript line kept, the conversation an `anthropic` session, a resume from the compacted history), the `SessionStart`, `PreCompact` and `Stop` hooks, the recall MCP server entry",
  'producer/postgres/':
    "the client's Postgres adapter, which the worker's adapters build on: the drizzle schema, the database client, the context read, recall's search and read, and the client's statements (sessions, messages, taking the newest message back, append idempotency keys, session limits, a ledger row)",
  'producer/redis/':
    "the Redis connection, one server or a cluster (docs/guide/scale-out.md), and the tenants' backlogs that set job priorities",
  'producer/queue/':
    "the queue backend (BullMQ on Redis or on Postgres) and the tenants' backlog counts on either",
  'producer/frameworks/':
    'adapters to agent frameworks, one folder each, each a subpath export of the package with the framework as an optional peer dependency, on the client library alone',
  'producer/frameworks/openai-agents/':
    'the OpenAI Agents SDK for TypeScript (`@openai/agents`): its `Session` over an `openai-responses` session (`session.ts`), its items mapped to Responses items (`to-responses.ts`) and back (`from-responses.ts`), the run end event from its compaction hook, recall as its MCP server (`recall.ts`)',
  'producer/frameworks/ai-sdk/':
    "the Vercel AI SDK's language-model middleware (ai 5, 6 and 7): new prompt messages and each answer stored in an ai-sdk session, the model sent the session's context, a run's end enqueued",
  'producer/media/':
    'the PDF page counter the edges hand to the token estimate (node:zlib for compressed object streams; the pure core only scans)',
  'producer/frameworks/langchain/':
    'LangChain.js (`createAgent` of `langchain` v1): the middleware that stores the agent messages and calls the model with the compacted context, the two message mappings (`openai-chat`, `anthropic`), the MCP recall tools bound to the run session',
  'producer/frameworks/mastra/':
    'the Mastra adapter (`@agent-compactor/compactor/mastra`): a processor that stores the agent conversation in a session and sends the model its context at every step, the codecs between the AI SDK prompt and the session formats (`openai-chat.ts`, `anthropic.ts`, chosen in `registry.ts`), and the recall tools of the MCP server',
  'worker/config/':
    "the worker's settings: environment config, the history partition count, the package's own files",
  'worker/pipeline/':
    'the pipeline (`pipeline.ts`; the summary path as steps, `with-summary.ts`; the fallback policy, `fallback.ts`), its ports (`ports.ts`), the pure builders of changes and summaries',
  'worker/postgres/':
    'the Postgres adapter: reads, fenced writes, row lock, effects executor, ledger, budget reservations, restore, retention, audit, policies and their `LISTEN` cache, webhooks, API keys, migrations, database errors told as cause and fix; `queries/`: the named reads of the dashboard, the API and the CLI',
  'worker/redis/': "the per-session lease, the tenants' worker slots",
  'worker/summarizers/':
    'the Anthropic and OpenAI summarizers and batches, SDK error mapping, the summarizer choice, the port its LLM requests go through (`llm-calls.ts`)',
  'worker/queue/':
    'one folder per background job: `compaction/` (the BullMQ worker, its processor, the error-to-action table), `sweeps/` (the sweep and its retention pass), `batches/` (batch polling), `session-events/` (what follows an applied compaction), `webhooks/` (enqueueing, the webhook worker, one delivery)',
  'worker/http/':
    'what every HTTP surface shares: the API errors (`errors.ts`), credentials, the failed-authentication throttle, the metrics/health server, the `--insecure` loopback guard',
  'worker/http/api/':
    'the HTTP API (`compactor api`): the route table, the OpenAPI document made from it, the handlers',
  'worker/http/mcp/': "recall's MCP server at `/v1/mcp`: the `recall_search` and `recall_read` tools",
  'worker/http/body/':
    'the one reader of request bodies, for the API, `/v1/mcp` and the dashboard: content coding, size, UTF-8, nesting counted as the bytes arrive, JSON',
  'worker/http/dashboard/': 'the dashboard: Bull Board, the ledger API, the session pages',
  'worker/outbound/':
    "where requests to tenants' URLs may go: the webhook address policy and the agents that enforce it at connect time",
  'worker/observability/':
    'Prometheus metrics, readiness checks, OpenTelemetry traces (`tracing.ts`: job spans, GenAI LLM-call spans)',
  'worker/runtime/':
    'building the adapters from config (`services.ts`, `store.ts`), the logger, Redis state, start-up retries, the embedded PostgreSQL; `processes/`: `compactor worker --processes N` (how many, when the primary restarts an exited one, the messages between primary and children)',
  'worker/cli/':
    'the `compactor` command: the command table, help, one light spec per command (`specs/`: flags and help) and its run, loaded only when it runs (`commands/`)',
  'worker/bin/': 'the `compactor` executable, and its development entry through tsx (`compactor-dev.js`)',
  'test/': '`unit/`, `integration/`, `e2e/`, `faults/`, `browser/`, with set-up in `test/support/`',
};

/**
 * What each folder holds, one line, in the table's order after the pure core's (which is sorted by
 * layer, each folder followed by its subfolders' rows). A subfolder without a row of its own is
 * named in its parent's as `` `name/` ``.
 */
export const FOLDERS: Readonly<Record<string, string>> = { ...WRITTEN, ...formatFolderRows() };

/** A forbidden rule of the dependency-cruiser config, as far as the layers need it. */
interface Rule {
  name: string;
  from?: { path?: string | string[] };
}

/**
 * The pure core's layers, lowest first, each the folders of `shared/` in it, read from the rules
 * that enforce them: `core-layer-N-imports-only-lower-layers`, whose `from.path` is
 * `^shared/(a|b)/`.
 * @throws {Error} when the config has no layer rule, or one whose shape is not that.
 */
export function coreLayers(config: { forbidden: Rule[] } = dependencyCruiserConfig()): string[][] {
  const layers: string[][] = [];
  for (const rule of config.forbidden) {
    const layer = /^core-layer-(\d+)-/.exec(rule.name);
    if (!layer) continue;
    const folders = /^\^shared\/\(([^)]+)\)\/$/.exec(String(rule.from?.path ?? ''));
    if (!folders) throw new Error(`${rule.name}: from.path is not ^shared/(a|b)/`);
    layers[Number(layer[1])] = (folders[1] as string).split('|');
  }
  if (layers.length === 0 || layers.some((l) => l === undefined))
    throw new Error('.dependency-cruiser.cjs: no core-layer-N rules, or a layer missing');
  return layers;
}

/** The repository's .dependency-cruiser.cjs. */
function dependencyCruiserConfig(): { forbidden: Rule[] } {
  return createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as { forbidden: Rule[] };
}

/** The table: the pure core's folders by layer, then the others in {@link FOLDERS}'s order. */
export function foldersTable(layers: string[][] = coreLayers()): string {
  const layerOf = new Map<string, number>(
    layers.flatMap((folders, n) => folders.map((f) => [`shared/${f}/`, n] as const)),
  );
  const described = (folder: string) => {
    const text = FOLDERS[folder];
    if (text === undefined) throw new Error(`${folder} is in a layer but has no row in FOLDERS`);
    return text;
  };
  /** The rows of a core folder's subfolders, in {@link FOLDERS}' order. */
  const below = (folder: string) =>
    Object.entries(FOLDERS).filter(([sub]) => sub !== folder && sub.startsWith(folder));
  const core = layers.flatMap((folders, n) =>
    folders.flatMap((f) => [
      [code(`shared/${f}/`), String(n), described(`shared/${f}/`)],
      ...below(`shared/${f}/`).map(([sub, text]) => [code(sub), String(n), text]),
    ]),
  );
  const inCore = (folder: string) => [...layerOf.keys()].some((f) => folder.startsWith(f));
  const rest = Object.entries(FOLDERS)
    .filter(([folder]) => !inCore(folder))
    .map(([folder, text]) => {
      if (folder.startsWith('shared/')) throw new Error(`${folder} has a row but no layer in CORE_LAYERS`);
      return [code(folder), '', text];
    });
  return alignedTable(['folder', 'layer', 'what it holds'], [...core, ...rest]);
}

/** The markers between which docs/architecture.md holds the generated table. */
export const FOLDERS_MARKERS = {
  start:
    '<!-- folders: generated by `npm run docs:generate` from .dependency-cruiser.cjs and scripts/docs/folders.ts. Do not edit. -->',
  end: '<!-- /folders -->',
} as const;

/**
 * `page` with the text between the markers replaced by `body`.
 * @throws {Error} when the page lacks a marker or has them out of order.
 */
export function replaceBetween(page: string, markers: { start: string; end: string }, body: string): string {
  const start = page.indexOf(markers.start);
  const end = page.indexOf(markers.end);
  if (start < 0 || end < start)
    throw new Error(`markers ${markers.start} … ${markers.end} not found in order`);
  return `${page.slice(0, start + markers.start.length)}\n\n${body}\n\n${page.slice(end)}`;
}
