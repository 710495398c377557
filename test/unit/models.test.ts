/**
 * The model ids compactor names (its default summary model, the ids of the README, the guides and
 * the examples, the tests' own) against the tables of the installed @anthropic-ai/sdk: the models
 * it calls deprecated (it warns "... is deprecated and will reach end-of-life on ..." on every
 * `messages.create` with one) and those for which it calls `thinking: { type: 'enabled' }`
 * deprecated. The SDK keeps both in `internal/data.js`, which its package exports do not list, so
 * the file is read from the installed package: when an SDK upgrade moves it, this test fails and
 * says where it looked, rather than passing without a table.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MODEL_PRICES, priceOf } from '../../shared/summary/pricing.ts';
import { DEFAULT_SUMMARY_MODEL, loadConfig } from '../../worker/config/config.ts';
import { MANUAL_THINKING_MODEL, SONNET } from '../support/models.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SDK_DATA = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@anthropic-ai/sdk')),
  'internal',
  'data.js',
);

interface SdkModelTables {
  /** Model id → the date it reaches end of life, as the SDK's warning prints it. */
  DEPRECATED_MODELS: Record<string, string>;
  /** Models on which the SDK warns that `thinking.type: 'enabled'` is deprecated. */
  MODELS_TO_WARN_WITH_THINKING_ENABLED: string[];
}

async function sdkTables(): Promise<SdkModelTables> {
  const loaded = (await import(pathToFileURL(SDK_DATA).href)) as Partial<SdkModelTables> & {
    default?: Partial<SdkModelTables>;
  };
  const tables = { ...loaded.default, ...loaded };
  if (
    typeof tables.DEPRECATED_MODELS !== 'object' ||
    !Array.isArray(tables.MODELS_TO_WARN_WITH_THINKING_ENABLED)
  )
    throw new Error(
      `${SDK_DATA} no longer exports DEPRECATED_MODELS and MODELS_TO_WARN_WITH_THINKING_ENABLED`,
    );
  return tables as SdkModelTables;
}

/** Every Claude model id written in `text`. */
function modelIdsIn(text: string): string[] {
  return [...text.matchAll(/\bclaude-(?:opus|sonnet|haiku|fable|mythos)-[a-z0-9-]*[a-z0-9]/g)].map(
    (m) => m[0],
  );
}

/** README.md, the guides and every file under examples/, with their text. */
async function userFacingFiles(): Promise<Array<[string, string]>> {
  const guides = (await readdir(path.join(ROOT, 'docs', 'guide'))).map((f) => path.join('docs', 'guide', f));
  const examples = (await readdir(path.join(ROOT, 'examples'), { recursive: true })).map((f) =>
    path.join('examples', f),
  );
  const files = ['README.md', ...guides, ...examples].filter((f) => /\.(md|ts|py)$/.test(f));
  return Promise.all(
    files.map(async (f) => [f, await readFile(path.join(ROOT, f), 'utf8')] as [string, string]),
  );
}

describe('the models compactor names', () => {
  it('reads the SDK tables it checks against (a real, non-empty list of retiring models)', async () => {
    const { DEPRECATED_MODELS } = await sdkTables();
    expect(Object.keys(DEPRECATED_MODELS).length).toBeGreaterThan(0);
    for (const date of Object.values(DEPRECATED_MODELS)) expect(date).toMatch(/20\d\d/);
  });

  it('defaults COMPACTOR_MODEL to a model the installed SDK does not warn about', async () => {
    const { DEPRECATED_MODELS } = await sdkTables();
    const config = loadConfig({});
    expect(config.model).toBe(DEFAULT_SUMMARY_MODEL);
    expect(Object.keys(DEPRECATED_MODELS)).not.toContain(DEFAULT_SUMMARY_MODEL);
    expect(priceOf(DEFAULT_SUMMARY_MODEL)?.key).toBe(DEFAULT_SUMMARY_MODEL);
  });

  it('names no model the SDK warns about in the README, the guides or the examples', async () => {
    const { DEPRECATED_MODELS } = await sdkTables();
    const named = (await userFacingFiles()).flatMap(([file, text]) =>
      modelIdsIn(text).map((id) => `${file}: ${id}`),
    );
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((entry) => (entry.split(': ')[1] ?? '') in DEPRECATED_MODELS)).toEqual([]);
  });

  it("sends the tests' requests to models without a deprecation warning", async () => {
    const { DEPRECATED_MODELS, MODELS_TO_WARN_WITH_THINKING_ENABLED } = await sdkTables();
    expect(Object.keys(DEPRECATED_MODELS)).not.toContain(SONNET);
    expect(Object.keys(DEPRECATED_MODELS)).not.toContain(MANUAL_THINKING_MODEL);
    // The tests pair this model with `thinking: { type: 'enabled' }`.
    expect(MODELS_TO_WARN_WITH_THINKING_ENABLED).not.toContain(MANUAL_THINKING_MODEL);
  });

  it('keeps a price for every retiring model the SDK lists: ledger rows still name them', async () => {
    const { DEPRECATED_MODELS } = await sdkTables();
    const unpriced = Object.keys(DEPRECATED_MODELS).filter(
      // A research preview was never on the price list.
      (id) => !id.endsWith('-preview') && priceOf(id) === undefined,
    );
    expect(unpriced).toEqual([]);
    expect(Object.keys(MODEL_PRICES)).toContain('claude-sonnet-4-5');
  });
});
