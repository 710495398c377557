/** `compactor key create|list|revoke|rotate`: API keys issued at run time (worker/postgres/api-keys.ts). */
import { ALL_SCOPES, type Scope } from '../../../shared/contract/api-keys.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { type ApiKey, createKey, listKeys, revokeKey, rotateKey } from '../../postgres/api-keys.ts';
import { type CommandContext, flag, optionalText, type ParsedArgs, text, UsageError } from '../command.ts';
import { withDatabase } from '../database.ts';
import { type Column, formatUtc, renderTable } from '../format.ts';

/** What the key's secret line on stderr says. */
const SHOWN_ONCE =
  'the key above is shown this once (the database keeps only its SHA-256): hand it over now\n';

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
function printIssued(context: CommandContext, shown: Record<string, unknown>): void {
  context.stdout.write(`${JSON.stringify(shown)}\n`);
  context.stderr.write(SHOWN_ONCE);
}

/** Runs `compactor key create` (its spec, flags and help: specs/key.ts); resolves with the exit code. */
export async function runKeyCreate(args: ParsedArgs, context: CommandContext): Promise<number> {
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
}

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

/** Runs `compactor key list` (its spec, flags and help: specs/key.ts); resolves with the exit code. */
export async function runKeyList(args: ParsedArgs, context: CommandContext): Promise<number> {
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
}

/** Runs `compactor key revoke` (its spec, flags and help: specs/key.ts); resolves with the exit code. */
export async function runKeyRevoke(args: ParsedArgs, context: CommandContext): Promise<number> {
  const id = text(args, 'id');
  const key = (await withDatabase(context, (db) => revokeKey(db, id))) ?? noUsableKey(id, 'revoked');
  context.stdout.write(`${JSON.stringify(key)}\n`);
  return 0;
}

/** Runs `compactor key rotate` (its spec, flags and help: specs/key.ts); resolves with the exit code. */
export async function runKeyRotate(args: ParsedArgs, context: CommandContext): Promise<number> {
  const id = text(args, 'id');
  const graceMs = durationMs(args, 'grace');
  const rotated =
    (await withDatabase(context, (db) => rotateKey(db, id, { graceMs }))) ?? noUsableKey(id, 'rotated');
  printIssued(context, { ...rotated.issued.key, secret: rotated.issued.secret, old: rotated.old });
  return 0;
}
