/** `compactor key create|list|revoke|rotate`: API keys issued at run time (worker/postgres/api-keys.ts). */
import { ALL_SCOPES, SCOPES, type Scope } from '../../../shared/contract/api-keys.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { type ApiKey, createKey, listKeys, revokeKey, rotateKey } from '../../postgres/api-keys.ts';
import {
  type Command,
  type CommandGroup,
  flag,
  JSON_OPTION,
  type OptionSpec,
  optionalText,
  type ParsedArgs,
  text,
  UsageError,
} from '../command.ts';
import { withDatabase } from '../database.ts';
import { type Column, formatUtc, renderTable } from '../format.ts';

/** What the key's secret line on stderr says. */
const SHOWN_ONCE =
  'the key above is shown this once (the database keeps only its SHA-256): hand it over now\n';

const ID_OPTION: OptionSpec = {
  type: 'string',
  value: 'ID',
  description: 'the key id (16 hex characters, as `key list` shows it)',
  required: true,
};

/** Units of a duration option, ms each. */
const DURATION_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration option (`30s`, `15m`, `12h`, `90d`), ms, or undefined when absent.
 * @throws {UsageError} naming the option and the form it takes.
 */
function durationMs(args: ParsedArgs, name: string): number | undefined {
  const value = optionalText(args, name);
  if (value === undefined) return undefined;
  const match = /^(\d{1,6})([smhd])$/.exec(value);
  if (!match)
    throw new UsageError(`--${name} must be a duration such as 30s, 15m, 12h or 90d, got "${value}"`);
  return Number(match[1]) * (DURATION_UNITS[match[2] as string] as number);
}

/** `--scopes a,b`: each a scope, or undefined when absent. */
function scopesOption(args: ParsedArgs): Scope[] | undefined {
  const value = optionalText(args, 'scopes');
  if (value === undefined) return undefined;
  const scopes = value.split(',').map((s) => s.trim());
  const unknown = scopes.find((s) => !(ALL_SCOPES as string[]).includes(s));
  if (unknown !== undefined) {
    throw new UsageError(`--scopes: unknown scope "${unknown}"; the scopes are ${ALL_SCOPES.join(', ')}`);
  }
  return scopes as Scope[];
}

/** `--tenant T` or `--admin`, exactly one: the tenant of the key, or null for an admin key. */
function ownerOption(args: ParsedArgs): string | null {
  const tenant = optionalText(args, 'tenant');
  if ((tenant === undefined) === !flag(args, 'admin')) {
    throw new UsageError('give either --tenant T (a tenant key) or --admin (an admin key)');
  }
  return tenant ?? null;
}

/** @throws {InvalidInputError} saying no usable key has `id` and nothing was `done`. */
function noUsableKey(id: string, done: string): never {
  throw new InvalidInputError(`no usable key "${id}" (unknown, revoked or expired); nothing ${done}`);
}

/** A key and its secret, printed: JSON on stdout, the warning on stderr. */
function printIssued(context: Parameters<Command['run']>[1], shown: Record<string, unknown>): void {
  context.stdout.write(`${JSON.stringify(shown)}\n`);
  context.stderr.write(SHOWN_ONCE);
}

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
    const tenantId = ownerOption(args);
    const scopes = scopesOption(args);
    const expiresIn = durationMs(args, 'expires-in');
    const issued = await withDatabase(context, (db) =>
      createKey(db, {
        tenantId,
        name: text(args, 'name'),
        scopes,
        expiresAt: expiresIn === undefined ? null : new Date(Date.now() + expiresIn),
      }),
    );
    printIssued(context, { ...issued.key, secret: issued.secret });
    return 0;
  },
};

const COLUMNS: Column[] = [
  { header: 'id' },
  { header: 'tenant' },
  { header: 'name' },
  { header: 'scopes' },
  { header: 'state' },
  { header: 'created (UTC)' },
  { header: 'expires (UTC)' },
  { header: 'last used (UTC)' },
];

/** Keys as table lines; nothing is cut (the id is copied into the next command). */
export function keysTable(keys: readonly ApiKey[]): string[] {
  return renderTable(
    COLUMNS,
    keys.map((k) => [
      k.prefix,
      k.tenantId ?? '(admin)',
      JSON.stringify(k.name),
      k.scopes.join(','),
      k.state === 'active' && k.revokedAt ? `active until ${formatUtc(k.revokedAt)}` : k.state,
      formatUtc(k.createdAt),
      formatUtc(k.expiresAt),
      formatUtc(k.lastUsedAt),
    ]),
    Number.POSITIVE_INFINITY,
  );
}

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
    const tenantId = optionalText(args, 'tenant');
    const keys = await withDatabase(context, (db) =>
      listKeys(db, { tenantId, admin: flag(args, 'admin'), all: flag(args, 'all') }),
    );
    if (flag(args, 'json')) {
      for (const key of keys) context.stdout.write(`${JSON.stringify(key)}\n`);
      return 0;
    }
    if (keys.length === 0) {
      context.stderr.write('no keys\n');
      return 0;
    }
    context.stdout.write(`${keysTable(keys).join('\n')}\n`);
    return 0;
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
    const id = text(args, 'id');
    const key = (await withDatabase(context, (db) => revokeKey(db, id))) ?? noUsableKey(id, 'revoked');
    context.stdout.write(`${JSON.stringify(key)}\n`);
    return 0;
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
    const id = text(args, 'id');
    const graceMs = durationMs(args, 'grace');
    const rotated =
      (await withDatabase(context, (db) => rotateKey(db, id, { graceMs }))) ?? noUsableKey(id, 'rotated');
    printIssued(context, { ...rotated.issued.key, secret: rotated.issued.secret, old: rotated.old });
    return 0;
  },
};

/** The `key` command group. */
export const keyGroup: CommandGroup = {
  name: 'key',
  summary: 'issue, list, revoke or rotate API keys (scoped, hashed, shown once)',
  actions: [createCommand, listCommand, revokeCommand, rotateCommand],
};
