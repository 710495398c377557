/**
 * The reference pages generated from the code (docs/reference/: the CLI, the configuration, the
 * HTTP API) are committed so they read on GitHub too; each is rendered again here, in memory, and
 * must equal the committed file, so a change to a command, a variable or a route that did not
 * regenerate them (`npm run docs:generate`) fails. And each page names everything its source has.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliReferencePage } from '../../scripts/docs/cli-page.ts';
import { configurationReferencePage } from '../../scripts/docs/configuration-page.ts';
import { GENERATED_PAGES, ROOT } from '../../scripts/docs/generate.ts';
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
});
