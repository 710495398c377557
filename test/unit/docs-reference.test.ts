/**
 * The reference pages generated from the code (docs/reference/: the CLI, the configuration, the
 * HTTP API) and the folder table of docs/architecture.md are committed so they read on GitHub too;
 * each is rendered again here, in memory, and must equal the committed text, so a change to a
 * command, a variable, a route or a layer that did not regenerate them (`npm run docs:generate`)
 * fails. And each names everything its source has: the folder table, every folder of the code.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliReferencePage } from '../../scripts/docs/cli-page.ts';
import { configurationReferencePage } from '../../scripts/docs/configuration-page.ts';
import { coreLayers, FOLDERS, foldersTable, formatFolderRows } from '../../scripts/docs/folders.ts';
import { GENERATED_PAGES, GENERATED_SECTIONS, ROOT } from '../../scripts/docs/generate.ts';
import { httpApiReferencePage } from '../../scripts/docs/http-api-page.ts';
import { COMMANDS } from '../../worker/cli/cli.ts';
import { envSchema } from '../../worker/config/config.ts';
import { openApiDocument } from '../../worker/http/api/openapi.ts';

describe('the generated reference pages', () => {
  it.each(GENERATED_PAGES.map((p) => [p.path, p] as const))(
    '%s is what the code generates now (else: npm run docs:generate)',
    (file, page) => {
      const committed = readFileSync(path.join(ROOT, file), 'utf8');
      expect(committed === page.render(), `${file} is stale: run npm run docs:generate`).toBe(true);
    },
  );

  it('the CLI page has a section for every command and action', () => {
    const page = cliReferencePage();
    const names = COMMANDS.flatMap((c) => ('actions' in c ? c.actions.map((a) => a.name) : [c.name]));
    for (const name of names) expect(page).toContain(`\n## compactor ${name}\n`);
  });

  it('the configuration page has a row for every variable of the schema', () => {
    const page = configurationReferencePage();
    for (const name of Object.keys(envSchema.shape)) expect(page).toContain(`| \`${name}\` |`);
  });

  it('the HTTP API page has a section for every operation of the OpenAPI document', () => {
    const page = httpApiReferencePage();
    const paths = openApiDocument().paths as Record<string, Record<string, { operationId: string }>>;
    for (const [route, methods] of Object.entries(paths))
      for (const [method, operation] of Object.entries(methods)) {
        expect(page).toContain(`## \`${method.toUpperCase()} ${route}\``);
        expect(page).toContain(`(\`${operation.operationId}\`)`);
      }
  });

  it.each(GENERATED_SECTIONS.map((p) => [p.path, p] as const))(
    'the generated part of %s is what the code generates now (else: npm run docs:generate)',
    (file, section) => {
      const committed = readFileSync(path.join(ROOT, file), 'utf8');
      const between = committed.slice(
        committed.indexOf(section.markers.start) + section.markers.start.length,
        committed.indexOf(section.markers.end),
      );
      expect(between.trim() === section.render(), `${file} is stale: run npm run docs:generate`).toBe(true);
    },
  );
});

describe('the folder table of docs/architecture.md', () => {
  /** The folders under `top` (`shared`), `depth` levels down, as `shared/text/`. */
  const foldersUnder = (top: string, depth: number): string[] => {
    const here = readdirSync(path.join(ROOT, top), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `${top}/${e.name}`);
    return depth === 1 ? here : here.flatMap((f) => foldersUnder(f, depth - 1));
  };

  it('has a row for every folder of the code, or names it in its parent’s row', () => {
    const missing: string[] = [];
    for (const top of ['shared', 'producer', 'worker']) {
      for (const folder of foldersUnder(top, 1)) if (!(`${folder}/` in FOLDERS)) missing.push(`${folder}/`);
      for (const folder of foldersUnder(top, 2)) {
        const parent = `${path.dirname(folder)}/`;
        const named = FOLDERS[parent]?.includes(`\`${path.basename(folder)}/\``);
        if (!(`${folder}/` in FOLDERS) && !named) missing.push(`${folder}/`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has no row for a folder that is not there', () => {
    const gone = Object.keys(FOLDERS).filter((folder) => {
      try {
        return !readdirSync(path.join(ROOT, folder)).length;
      } catch {
        return true;
      }
    });
    expect(gone).toEqual([]);
  });

  it('gives each folder of the pure core the layer the import rules give it', () => {
    const layers = coreLayers();
    expect(layers.flat().sort()).toEqual(
      foldersUnder('shared', 1)
        .map((f) => f.slice('shared/'.length))
        .sort(),
    );
    const table = foldersTable();
    layers.forEach((folders, n) => {
      for (const folder of folders) {
        const row = table.split('\n').find((line) => line.startsWith(`| \`shared/${folder}/\` `));
        expect(row?.split('|')[2]?.trim(), folder).toBe(String(n));
      }
    });
  });

  it('gives each session format folder a row from its format.ts, and refuses a folder without one', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'compactor-folders-'));
    try {
      const folder = path.join(root, 'shared/formats/new-format');
      mkdirSync(folder, { recursive: true });
      writeFileSync(
        path.join(folder, 'format.ts'),
        '/**\n * The `new-format` session format (format.ts): a row holds one thing, as\n * row.ts checks it. Pure.\n */\n',
      );
      expect(formatFolderRows(root)).toEqual({
        'shared/formats/new-format/': 'a row holds one thing, as row.ts checks it',
      });
      mkdirSync(path.join(root, 'shared/formats/bare'));
      expect(() => formatFolderRows(root)).toThrow('shared/formats/bare/: no format.ts');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    for (const name of readdirSync(path.join(ROOT, 'shared/formats'), { withFileTypes: true })) {
      if (name.isDirectory()) expect(foldersTable()).toContain(`| \`shared/formats/${name.name}/\``);
    }
  });

  it('reads the layers from the core-layer rules, refusing a rule of another shape', () => {
    const rule = (n: number, pathText: string) => ({
      name: `core-layer-${n}-imports-only-lower-layers`,
      from: { path: pathText },
    });
    expect(
      coreLayers({
        forbidden: [rule(0, '^shared/(contract)/'), rule(1, '^shared/(text|trust)/'), { name: 'x' }],
      }),
    ).toEqual([['contract'], ['text', 'trust']]);
    expect(() => coreLayers({ forbidden: [rule(0, '^worker/')] })).toThrow(/core-layer-0/);
    expect(() => coreLayers({ forbidden: [] })).toThrow(/no core-layer-N rules/);
  });
});
