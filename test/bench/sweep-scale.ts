/**
 * `npm run bench:sweep [-- --sessions N]`: seeds N sessions (default 1,000,000, across 100 tenants,
 * about 1% over their trigger) in a database of its own, then times one sweep scan (dry run: the
 * scan and the trigger checks, no enqueue) and reports wall time, rows scanned per second and the
 * process's peak RSS, sampled once per page, at 10% of N and at N, to show that memory stays flat
 * as sessions grow. A benchmark, not a test: it prints numbers and asserts nothing.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { openDatabase } from '../../producer/postgres/db.ts';
import { migrateDatabase } from '../../worker/postgres/migrate.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { runSweep } from '../../worker/queue/sweeps/sweep.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor } from '../support/env.ts';

const { values } = parseArgs({ options: { sessions: { type: 'string', default: '1000000' } } });
const total = Number(values.sessions);
if (!Number.isInteger(total) || total < 1_000) throw new Error('--sessions must be an integer ≥ 1000');

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

async function main(): Promise<void> {
  const name = `compactor_bench_sweep_${randomBytes(4).toString('hex')}`;
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = databaseUrlFor(name);
  const database = openDatabase(url, { max: 2 });
  try {
    await migrateDatabase(url);
    for (let t = 0; t < 100; t++) {
      await setPolicy(database.db, `tenant-${t}`, null, {
        strategy: { type: 'slidingWindow', maxMessages: 50 },
        triggers: { maxMessages: 200 },
      });
    }
    const rows: string[] = [];
    for (const n of [Math.floor(total / 10), total]) {
      await seedUpTo(database.sql, n);
      await database.sql`vacuum analyze sessions`;
      let peak = process.memoryUsage().rss;
      const before = peak;
      const result = await runSweep(database.db, null, {
        dryRun: true,
        onPage: () => {
          peak = Math.max(peak, process.memoryUsage().rss);
        },
      });
      rows.push(
        `| ${n.toLocaleString('en')} | ${result.scanned.toLocaleString('en')} | ${result.due.toLocaleString('en')} | ` +
          `${(result.ms / 1000).toFixed(2)} s | ${Math.round(result.scanned / (result.ms / 1000)).toLocaleString('en')} | ` +
          `${mb(before)} | ${mb(peak)} |`,
      );
    }
    console.log('| sessions | scanned | due | sweep wall time | rows/s | RSS before | peak RSS |');
    console.log('|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  } finally {
    await database.close();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

/** Inserts sessions until there are `n`, set-based in Postgres (generate_series), 1% over 200 messages. */
async function seedUpTo(sql: postgres.Sql, n: number): Promise<void> {
  const [{ count } = { count: 0 }] = await sql<
    { count: number }[]
  >`select count(*)::int as count from sessions`;
  if (count >= n) return;
  const started = performance.now();
  await sql`
    insert into sessions (tenant_id, id, message_count, token_count, last_seq, context_window)
    select 'tenant-' || (g % 100), 'session-' || g,
      case when g % 100 = 7 then 250 else 20 + (g % 150) end,
      (20 + (g % 150)) * 180, 20 + (g % 150), 200000
    from generate_series(${count + 1}::bigint, ${n}::bigint) as g`;
  console.error(
    `seeded ${(n - count).toLocaleString('en')} sessions in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

main().catch((error) => {
  console.error('bench:sweep failed:', error);
  process.exit(1);
});
