/**
 * The migration files keep compactor inside the schema it is configured with: no statement names
 * `public` (drizzle-kit writes `"public"."table"` in foreign keys; such a reference would reach
 * into the application's tables of the same name), and every file is in the journal.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER } from '../../worker/postgres/migrate.ts';

describe('migrations', () => {
  it('never qualify a name with the public schema', async () => {
    const files = (await readdir(MIGRATIONS_FOLDER)).filter((f) => f.endsWith('.sql'));
    expect(files.length).toBeGreaterThan(0);
    const offenders: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(MIGRATIONS_FOLDER, file), 'utf8');
      text.split('\n').forEach((line, i) => {
        if (/"public"\s*\.|\bpublic\s*\./i.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  it('are each listed in the journal, in order', async () => {
    const files = (await readdir(MIGRATIONS_FOLDER)).filter((f) => f.endsWith('.sql')).sort();
    const journal = JSON.parse(
      await readFile(path.join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8'),
    ) as {
      entries: Array<{ tag: string; when: number }>;
    };
    expect(journal.entries.map((e) => `${e.tag}.sql`)).toEqual(files);
    const whens = journal.entries.map((e) => e.when);
    expect(whens).toEqual([...whens].sort((a, b) => a - b));
  });
});
