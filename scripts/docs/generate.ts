/**
 * Writes the reference pages generated from the code into docs/reference/: the CLI (from the
 * command table), the configuration (from the config schema) and the HTTP API (from the OpenAPI
 * document); and the folder table of docs/architecture.md (from the import rules' layers and
 * scripts/docs/folders.ts), between its markers. These are committed, and
 * test/unit/docs-reference.test.ts fails when one is stale. The TypeScript API pages are TypeDoc's (`typedoc`, run by `npm run docs:generate` after
 * this script), written at build time and not committed.
 *
 *     tsx scripts/docs/generate.ts           write the pages
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliReferencePage } from './cli-page.ts';
import { configurationReferencePage } from './configuration-page.ts';
import { FOLDERS_MARKERS, foldersTable, replaceBetween } from './folders.ts';
import { helpSectionsModule } from './help-sections.ts';
import { httpApiReferencePage } from './http-api-page.ts';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Each generated page: its path from the repository's root, and what writes it. */
export const GENERATED_PAGES: ReadonlyArray<{ path: string; render: () => string }> = [
  { path: 'docs/reference/cli.md', render: cliReferencePage },
  { path: 'docs/reference/configuration.md', render: configurationReferencePage },
  { path: 'docs/reference/http-api.md', render: httpApiReferencePage },
  { path: 'worker/cli/help-sections.generated.ts', render: helpSectionsModule },
];

/**
 * Each generated part of a hand-written page: the page, the markers it sits between, and what
 * writes it.
 */
export const GENERATED_SECTIONS: ReadonlyArray<{
  path: string;
  markers: { start: string; end: string };
  render: () => string;
}> = [{ path: 'docs/architecture.md', markers: FOLDERS_MARKERS, render: () => foldersTable() }];

/** Writes every generated page and section; returns their paths. */
export function writeGeneratedPages(root: string = ROOT): string[] {
  const pages = GENERATED_PAGES.map(({ path: file, render }) => {
    const target = path.join(root, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, render());
    return file;
  });
  const sections = GENERATED_SECTIONS.map(({ path: file, markers, render }) => {
    const target = path.join(root, file);
    writeFileSync(target, replaceBetween(readFileSync(target, 'utf8'), markers, render()));
    return file;
  });
  return [...pages, ...sections];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  for (const file of writeGeneratedPages()) console.log(`wrote ${file}`);
}
