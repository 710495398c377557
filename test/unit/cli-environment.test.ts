/**
 * `compactor --help` names every environment variable compactor reads. The variables are found
 * here by reading the sources, not by asking the code under test: the config schema's keys in
 * worker/config/config.ts, and every `process.env` read anywhere in shared/, worker/, producer/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../worker/cli/cli.ts';
import { environmentVariables } from '../../worker/cli/environment.ts';
import { loadConfig } from '../../worker/config/config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js|mjs)$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Names in `process.env.X`, `process.env['X']` and `const { X } = process.env` reads. */
function processEnvReads(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of ['shared', 'worker', 'producer'].flatMap(sourceFiles)) {
    const text = readFileSync(file, 'utf8');
    const names = [
      ...[...text.matchAll(/process\.env\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string),
      ...[...text.matchAll(/process\.env\[\s*['"`]([^'"`]+)['"`]\s*\]/g)].map((m) => m[1] as string),
      ...[...text.matchAll(/\{([^}]*)\}\s*=\s*process\.env\b/g)].flatMap((m) =>
        (m[1] as string).split(',').map((p) => (p.split(':')[0] as string).trim()),
      ),
    ];
    for (const name of names) if (name) found.set(name, path.relative(ROOT, file));
  }
  return found;
}

/** The keys of `envSchema = z.object({ ... })` as written in config.ts. */
function schemaKeys(): string[] {
  const text = readFileSync(path.join(ROOT, 'worker/config/config.ts'), 'utf8');
  const body = /envSchema = z\.object\(\{([\s\S]*?)\n\}\);/.exec(text)?.[1] ?? '';
  return [...body.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1] as string);
}

async function helpText(): Promise<string> {
  let out = '';
  const sink = {
    write(t: string) {
      out += t;
      return true;
    },
  };
  expect(await main(['--help'], { stdout: sink, stderr: sink })).toBe(0);
  return out;
}

describe('compactor --help, environment', () => {
  it('names every variable of the config schema', async () => {
    const keys = schemaKeys();
    expect(keys.length).toBeGreaterThanOrEqual(22);
    const help = await helpText();
    const missing = keys.filter((k) => !new RegExp(`^ {2}${k} `, 'm').test(help));
    expect(missing, 'variables of worker/config/config.ts missing from compactor --help').toEqual([]);
  });

  it('names every variable read through process.env anywhere in the sources', async () => {
    const reads = processEnvReads();
    expect(reads.has('COLUMNS')).toBe(true); // the grep finds reads at all
    const help = await helpText();
    const missing = [...reads].filter(([name]) => !new RegExp(`^ {2}${name} `, 'm').test(help));
    expect(missing, 'process.env reads missing from compactor --help ([name, file])').toEqual([]);
  });

  it("gives each variable a description and the schema's own default", () => {
    const byName = new Map(environmentVariables().map((v) => [v.name, v]));
    for (const v of byName.values()) expect(v.description.length, v.name).toBeGreaterThan(10);
    const defaults = loadConfig({});
    expect(byName.get('COMPACTOR_DASHBOARD_PORT')?.default).toBe(`default ${defaults.dashboard.port}`);
    expect(byName.get('COMPACTOR_SWEEP_EVERY_MS')?.default).toBe(`default ${defaults.sweepEveryMs}`);
    expect(byName.get('DATABASE_URL')?.default).toBe(`default ${defaults.databaseUrl}`);
    expect(byName.get('ANTHROPIC_API_KEY')?.default).toMatch(/^unset/);
  });
});
