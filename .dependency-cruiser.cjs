/**
 * The import direction of compactor, checked by `npm run check` (dependency-cruiser):
 * - the pure core (shared/) does no I/O: it imports no worker or producer code and no package but
 *   zod;
 * - the pure core is layered (CORE_LAYERS, lowest first): a folder imports only folders of lower
 *   layers, never one of its own layer or above, so no two of its folders import each other;
 * - the client (producer/) imports no worker code; its adapters (producer/postgres/: the drizzle
 *   schema, the database client, the context read; producer/redis/: the Redis connection and the
 *   tenants' backlog) import nothing else of the client, so the worker's adapters build on them;
 * - the worker's settings (worker/config/) import no other worker folder;
 * - SQL is built only in the Postgres adapters (producer/postgres/, worker/postgres/): nothing else
 *   imports drizzle-orm, postgres (but types) or the schema's tables;
 * - the pipeline owns its ports: it imports the pure core and its own folder, never an adapter,
 *   the queue, HTTP or the runtime, and only types from the client's Postgres adapter;
 * - adapters (postgres, redis, summarizers) implement the ports and never reach up into the queue,
 *   HTTP, the runtime or the CLI, nor into the client beyond its adapters;
 * - the runtime (worker/runtime/) builds the adapters and imports no job, HTTP app or command;
 * - only the runtime (and the CLI's composition of it) constructs adapters: the modules that build
 *   the reads, the fenced writes, a lease manager or a summarizer are imported as values from
 *   nowhere else;
 * - producer/webhook-signature.ts imports node:crypto and nothing else, so a webhook receiver can
 *   import (or copy) it alone;
 * - no import circles, between modules or between folders.
 */

/**
 * The pure core's folders by layer, lowest first. Folders of one layer do not import each other.
 * - contract: messages, content blocks, token estimates, the error taxonomy, transcript parsing;
 * - text: reading transcript text: clipping, shell commands, error lines, what a user message is;
 * - trust: the prompt-injection detector, secret-looking paths;
 * - working-set: the file paths a session worked with;
 * - summary: the checkpoint, its prompt and guard, pricing, the `Summarizer` interface;
 * - extractive, fidelity, context, planning: the offline summarizer, the fidelity score, the
 *   rendered context, the window rule and plan types;
 * - formats: one module per wire format a session may be in (`openai-chat/`: Chat Completions
 *   messages, their validation, facts, context and clearing), and the session format enum;
 * - strategies: one file per strategy, the registry and the plan dispatch;
 * - policy, protocol, recall: policies and budgets; the queue's events and the HTTP API's bodies;
 *   recall's requests and answers (the archive's search and read).
 */
const CORE_LAYERS = [
  ['contract'],
  ['text'],
  ['trust'],
  ['working-set'],
  ['summary'],
  ['extractive', 'fidelity', 'context', 'planning'],
  ['formats'],
  ['strategies'],
  ['policy', 'protocol', 'recall'],
];
const CORE_FOLDERS = CORE_LAYERS.flat();
const PURE = `^shared/(${CORE_FOLDERS.join('|')})/`;
const ADAPTERS = '^worker/(postgres|redis|summarizers)/';
const CONSTRUCTORS =
  '^worker/(postgres/(reads|writes|lease)|redis/lease|summarizers/(index|anthropic))[.]ts$';

/** One rule per layer: its folders import no folder of their own layer or above. */
const layerRules = CORE_LAYERS.map((layer, i) => ({
  name: `core-layer-${i}-imports-only-lower-layers`,
  severity: 'error',
  comment:
    `shared/{${layer.join(',')}} may import only the core's lower layers (${CORE_LAYERS.slice(0, i).flat().join(', ') || 'none'}); ` +
    'a symbol both need belongs in the lower folder.',
  from: { path: `^shared/(${layer.join('|')})/` },
  to: { path: `^shared/(?!$1/)(${CORE_LAYERS.slice(i).flat().join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'core-folder-has-a-layer',
      severity: 'error',
      comment: 'Every folder of the pure core has a place in CORE_LAYERS (.dependency-cruiser.cjs).',
      from: { path: '^shared/', pathNot: PURE },
      to: {},
    },
    {
      name: 'no-circular-folders',
      severity: 'error',
      comment:
        'Two folders that import each other are one tangle: move the symbol both need to the lower one.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle hides which module depends on which.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'pure-core-imports-no-io-code',
      severity: 'error',
      comment: 'The pure core is unit-tested without a database: it must not import I/O code.',
      from: { path: PURE },
      to: { path: '^(worker|producer|test)/' },
    },
    {
      name: 'pure-core-imports-no-io-package',
      severity: 'error',
      comment:
        'The pure core uses zod and Node crypto hashing, nothing that talks to the world; types (such ' +
        "as the Anthropic SDK's MessageParam) are not I/O.",
      from: { path: PURE },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown', 'core'],
        dependencyTypesNot: ['type-only'],
        pathNot: ['^node_modules/zod/', '^(node:)?crypto$'],
      },
    },
    {
      name: 'webhook-signature-stands-alone',
      severity: 'error',
      comment:
        'Webhook receivers import producer/webhook-signature.ts on its own (no BullMQ, no Postgres): it ' +
        'may use node:crypto and nothing else.',
      from: { path: '^producer/webhook-signature[.]ts$' },
      to: { pathNot: '^(node:)?crypto$' },
    },
    {
      name: 'client-imports-no-worker-code',
      severity: 'error',
      comment:
        'The client package (producer/index.ts) installs without the worker and its libraries: it ' +
        'imports no worker code.',
      from: { path: '^producer/' },
      to: { path: '^worker/' },
    },
    {
      name: 'client-adapters-stand-alone',
      severity: 'error',
      comment:
        "The worker's adapters use the client's (producer/postgres/, producer/redis/, and the PDF page " +
        'counter in producer/media/): those import nothing else of the client.',
      from: { path: '^producer/(postgres|redis|media)/' },
      to: { path: '^producer/(?!(postgres|redis|media)/)' },
    },
    {
      name: 'config-imports-no-worker-code',
      severity: 'error',
      comment:
        "The worker's settings (environment config, package files) are read before anything is built: " +
        'worker/config/ imports no other worker folder, so adapters may take its types.',
      from: { path: '^worker/config/' },
      to: { path: '^worker/(?!config/)' },
    },
    {
      name: 'sql-only-in-the-postgres-adapters',
      severity: 'error',
      comment:
        'Statements are built only in the Postgres adapters (producer/postgres/, worker/postgres/), as ' +
        'named functions the rest calls: no other module imports drizzle-orm or postgres (types aside) ' +
        "or the schema's tables.",
      from: { path: '^(shared|worker|producer)/', pathNot: '^(producer|worker)/postgres/' },
      to: {
        path: ['^node_modules/(drizzle-orm|postgres)/', '^producer/postgres/schema[.]ts$'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'pipeline-depends-on-its-ports',
      severity: 'error',
      comment: 'The pipeline names what it needs in worker/pipeline/ports.ts; adapters are handed in.',
      from: { path: '^worker/pipeline/' },
      to: { path: '^(worker/(?!pipeline/)|producer/(?!postgres/))' },
    },
    {
      name: 'pipeline-uses-only-types-of-the-schema',
      severity: 'error',
      from: { path: '^worker/pipeline/' },
      to: { path: '^producer/postgres/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'pipeline-imports-no-io-package',
      severity: 'error',
      from: { path: '^worker/pipeline/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'adapters-do-not-reach-up',
      severity: 'error',
      comment: 'Adapters implement the ports; the queue, HTTP, runtime and CLI use them, not the reverse.',
      from: { path: ADAPTERS },
      to: { path: '^worker/(queue|http|runtime|cli|observability)/|^producer/(?!(postgres|redis|media)/)' },
    },
    {
      name: 'adapters-implement-ports-not-the-pipeline',
      severity: 'error',
      from: { path: ADAPTERS },
      to: { path: '^worker/pipeline/(?!ports[.]ts$)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'runtime-imports-no-job-http-or-cli',
      severity: 'error',
      comment:
        'worker/runtime/ builds the adapters and hands them to the jobs, HTTP apps and commands that ' +
        'use them; it imports none of those.',
      from: { path: '^worker/runtime/' },
      to: { path: '^worker/(queue|http|cli)/' },
    },
    {
      name: 'only-the-runtime-constructs-adapters',
      severity: 'error',
      comment: 'Adapters are built in worker/runtime/ and handed to whoever needs them.',
      from: { path: '^(worker|producer|shared)/', pathNot: '^worker/(runtime|postgres|redis|summarizers)/' },
      to: { path: CONSTRUCTORS, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
