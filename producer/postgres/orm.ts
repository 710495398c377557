/**
 * drizzle-orm, loaded through `require` (its CommonJS build) instead of `import`: every module of
 * compactor that uses drizzle takes it from here, types from the package itself.
 *
 * Why: drizzle-orm's package.json is 179 KB (an exports map of thousands of subpaths), and Node's
 * ES module loader reads a module's package scope anew for each of the ~100 files that
 * `drizzle-orm/postgres-js` loads. Measured on Node 22.23 and 24.22: `import` of
 * `drizzle-orm/postgres-js` and `drizzle-orm` took 0.70–0.78 s and 150–300 MB of RSS, `require` of
 * the same 0.18–0.21 s and 64–71 MB. Every compactor process (the command line, the worker, the
 * API, an agent service's producer) pays it once at start.
 *
 * One copy: nothing in compactor imports drizzle-orm's ES modules, so no table or SQL object is
 * made by one copy of the package and read by another. Under drizzle-kit, which bundles the schema
 * as CommonJS, the module's own `require` is used.
 */
import { createRequire } from 'node:module';
import type * as Orm from 'drizzle-orm';
import type * as PgCore from 'drizzle-orm/pg-core';
import type * as PostgresJs from 'drizzle-orm/postgres-js';

/** `require` resolving from this package: drizzle-orm's CommonJS files. */
export const ormRequire: NodeJS.Require =
  typeof require === 'function' ? require : createRequire(import.meta.url);

const orm = ormRequire('drizzle-orm') as typeof Orm;
const pgCore = ormRequire('drizzle-orm/pg-core') as typeof PgCore;
const postgresJs = ormRequire('drizzle-orm/postgres-js') as typeof PostgresJs;

export type { SQL, SQLWrapper } from 'drizzle-orm';
export type { PreparedQueryConfig } from 'drizzle-orm/pg-core';
export type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';

export const { and, asc, desc, eq, getTableColumns, gt, inArray, isNotNull, isNull, lt, max, ne, or, sql } =
  orm;

export const {
  bigint,
  boolean,
  check,
  customType,
  foreignKey,
  index,
  integer,
  json,
  jsonb,
  numeric,
  PgDialect,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
  varchar,
} = pgCore;

export const { drizzle } = postgresJs;
