/**
 * The scopes of an API key, by name with what each lets a key do: plain data with no imports, so
 * the command line's help can list them without loading the key schemas (api-keys.ts re-exports
 * them).
 */

/**
 * What a key may do. Each API route needs one (routes.ts); `admin` also opens Bull Board,
 * `/metrics` and the key routes, and only an admin key may hold it.
 */
export const SCOPES = {
  'context:read': "read a session's context, ledger and pages; recall its archive, also over /v1/mcp",
  'messages:write': 'create sessions, append messages, declare tools',
  'events:write': 'enqueue session.run.completed',
  'sessions:compact': 'compact now (and restore, on the dashboard)',
  'sessions:delete': 'delete (purge) a session and everything held of it',
  admin: 'issue, list, rotate and revoke keys; Bull Board and /metrics',
} as const;

/** One scope's name. */
export type Scope = keyof typeof SCOPES;

/** Every scope, in the order of {@link SCOPES}. */
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

/** The scopes a tenant key may hold: all but `admin`. */
export const TENANT_SCOPES = ALL_SCOPES.filter((s) => s !== 'admin');
