/**
 * `npm run contract`: writes the contract's JSON Schemas (shared/protocol/json-schemas.ts) to
 * shared/contract/schemas/, one file each, and says which changed. Run it after changing a schema
 * of the contract; test/unit/contract-schemas.test.ts fails until the files are regenerated.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { CONTRACT_SCHEMA_FILES, contractSchemaText } from '../../shared/protocol/json-schemas.ts';

const DIR = new URL('../../shared/contract/schemas/', import.meta.url);

for (const entry of CONTRACT_SCHEMA_FILES) {
  const url = new URL(entry.file, DIR);
  const text = contractSchemaText(entry);
  const before = await readFile(url, 'utf8').catch(() => null);
  if (before === text) {
    console.log(`unchanged ${entry.file}`);
    continue;
  }
  await writeFile(url, text);
  console.log(`${before === null ? 'written' : 'updated'} ${entry.file}`);
}
