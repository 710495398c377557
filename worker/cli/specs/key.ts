/**
 * What the parser and the help know of `compactor key create`, `compactor key list`, `compactor key revoke`, `compactor key rotate`, `compactor key`: flags, help text, examples. Its run
 * (commands/key.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { ALL_SCOPES, SCOPES } from '../../../shared/contract/scopes.ts';
import { type Command, type CommandGroup, JSON_OPTION, type OptionSpec } from '../command.ts';

/** The `--id` of `key revoke` and `key rotate`. */
const ID_OPTION: OptionSpec = {
  type: 'string',
  value: 'ID',
  description: 'the key id (16 hex characters, as `key list` shows it)',
  required: true,
};

const createCommand: Command = {
  name: 'key create',
  summary: 'issue an API key; print it as JSON with its secret, this once',
  options: {
    tenant: { type: 'string', value: 'T', description: 'the tenant of a tenant key (prefix cpt_)' },
    admin: { type: 'boolean', description: 'an admin key (prefix cpa_): acts on any tenant it names' },
    name: { type: 'string', value: 'N', description: 'what the key is for', required: true },
    scopes: {
      type: 'string',
      value: 'S,S',
      description: 'its scopes, comma-separated (default: every scope its kind may hold)',
    },
    'expires-in': {
      type: 'string',
      value: 'D',
      description: 'it stops working after D (30s, 15m, 12h, 90d)',
    },
  },
  notes: [
    'Scopes:',
    ...ALL_SCOPES.map((s) => `  ${s.padEnd(18)}${SCOPES[s]}`),
    'A tenant key acts on its tenant only and cannot hold admin. Send a key as',
    '`Authorization: Bearer <key>` to `compactor api` or `compactor dashboard`. The key is printed',
    'once; the database keeps its SHA-256. COMPACTOR_DASHBOARD_TOKEN stays the bootstrap admin.',
  ],
  examples: [
    'compactor key create --tenant acme --name acme-agents --scopes context:read,messages:write,events:write',
    'compactor key create --admin --name platform-on-call --expires-in 30d',
  ],
  async run(args, context) {
    const { runKeyCreate } = await import('../commands/key.ts');
    return runKeyCreate(args, context);
  },
};

const listCommand: Command = {
  name: 'key list',
  summary: 'list API keys (never their secrets): who, scopes, state, expiry, last use',
  options: {
    tenant: { type: 'string', value: 'T', description: "only this tenant's keys" },
    admin: { type: 'boolean', description: 'only admin keys' },
    all: { type: 'boolean', description: 'revoked and expired keys too' },
    json: JSON_OPTION,
  },
  notes: [
    "Oldest first. The id column shows each key's public beginning (cpt_<id>, cpa_<id>); revoke and",
    'rotate take the 16 hex characters after the prefix. Last use is written at most once a minute.',
  ],
  examples: ['compactor key list --tenant acme', 'compactor key list --all --json'],
  async run(args, context) {
    const { runKeyList } = await import('../commands/key.ts');
    return runKeyList(args, context);
  },
};

const revokeCommand: Command = {
  name: 'key revoke',
  summary: 'revoke an API key now; print it as JSON',
  options: { id: ID_OPTION },
  notes: [
    'Every request with the key is refused (401) from the moment this returns, on every API and',
    'dashboard process (keys are read from the database on each request, not cached). Also ends a',
    "key's rotation grace period. A key that is unknown, revoked or expired: exit 1, nothing changes.",
  ],
  examples: ['compactor key revoke --id 3f9a0c1b2d4e5f60'],
  async run(args, context) {
    const { runKeyRevoke } = await import('../commands/key.ts');
    return runKeyRevoke(args, context);
  },
};

const rotateCommand: Command = {
  name: 'key rotate',
  summary: 'issue a new key like an old one, and revoke the old one now or after a grace period',
  options: {
    id: ID_OPTION,
    grace: {
      type: 'string',
      value: 'D',
      description: 'how long the old key keeps working (30s, 15m, 12h, 90d; default: revoked now)',
    },
  },
  notes: [
    "The new key has the old one's tenant, name, scopes and expiry; it is printed as JSON with its",
    'secret, this once, with the old key as "old". Give the services using the old key the new one',
    'within the grace period; `key revoke` ends the grace early.',
  ],
  examples: ['compactor key rotate --id 3f9a0c1b2d4e5f60 --grace 1h'],
  async run(args, context) {
    const { runKeyRotate } = await import('../commands/key.ts');
    return runKeyRotate(args, context);
  },
};

/** The `key` command group. */
export const keyGroup: CommandGroup = {
  name: 'key',
  summary: 'issue, list, revoke or rotate API keys (scoped, hashed, shown once)',
  actions: [createCommand, listCommand, revokeCommand, rotateCommand],
};
