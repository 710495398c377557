/**
 * The import direction of compactor, checked by `npm run check` (dependency-cruiser):
 * - the pure core (contract, policy, strategies, planning, summary, working set, extractive,
 *   context) does no I/O: it imports no worker or producer code, no database or runtime module,
 *   and no package but zod;
 * - the pipeline owns its ports: it imports the pure core and its own folder, never an adapter,
 *   the queue, HTTP or the runtime, and only types from the database schema;
 * - adapters (postgres, redis, summarizers) implement the ports and never reach up into the queue,
 *   HTTP, the runtime or the CLI;
 * - only the runtime (and the CLI's composition of it) constructs adapters: the modules that build
 *   a store, a lease manager or a summarizer are imported as values from nowhere else;
 * - producer/webhook-signature.ts imports node:crypto and nothing else, so a webhook receiver can
 *   import (or copy) it alone;
 * - no import circles.
 */
const PURE =
  '^shared/(contract|policy|strategies|planning|summary|working-set|extractive|context|fidelity|trust)/';
const ADAPTERS = '^worker/(postgres|redis|summarizers)/';
const CONSTRUCTORS =
  '^worker/(postgres/(store|reads|writes)|redis/lease|summarizers/(index|anthropic))[.]ts$';

module.exports = {
  forbidden: [
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
      to: { path: '^(worker|producer|test)/|^shared/(postgres|runtime)/' },
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
      name: 'pipeline-depends-on-its-ports',
      severity: 'error',
      comment: 'The pipeline names what it needs in worker/pipeline/ports.ts; adapters are handed in.',
      from: { path: '^worker/pipeline/' },
      to: { path: '^(worker/(?!pipeline/)|producer/|shared/runtime/)' },
    },
    {
      name: 'pipeline-uses-only-types-of-the-schema',
      severity: 'error',
      from: { path: '^worker/pipeline/' },
      to: { path: '^shared/postgres/', dependencyTypesNot: ['type-only'] },
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
      to: { path: '^worker/(queue|http|runtime|cli|observability)/|^producer/' },
    },
    {
      name: 'adapters-implement-ports-not-the-pipeline',
      severity: 'error',
      from: { path: ADAPTERS },
      to: { path: '^worker/pipeline/(?!ports[.]ts$)', dependencyTypesNot: ['type-only'] },
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
