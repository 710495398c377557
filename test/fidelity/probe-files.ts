/**
 * Reads and validates the probe files (`test/fidelity/probes/<session>.json`, and the test set's
 * `test/fidelity/probes-test/<session>.json`; see probes.ts).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ProbeFile, probeFileSchema } from './probes.ts';

/** Where the probe files of the tuning set are (read freely while changing a summarizer). */
export const PROBES_DIR = fileURLToPath(new URL('./probes', import.meta.url));
/**
 * Where the probe files of the test set are: written from the held-out sessions (`corpus/heldout/`)
 * by a writer who never saw a checkpoint; only their aggregate figures may be seen while changing a
 * summarizer.
 */
export const PROBES_TEST_DIR = fileURLToPath(new URL('./probes-test', import.meta.url));

/** Where the held-out sessions the test set's probes ask about are (`corpus/heldout/`). */
export const HELDOUT_DIR = fileURLToPath(new URL('../../corpus/heldout', import.meta.url));

/**
 * Every probe file of `dir` (default the tuning set's), by session name order, validated against
 * {@link probeFileSchema}. An absent directory holds no probe files: the result is empty.
 * @throws naming the file and the field, when one does not parse or its `session` is not its name.
 */
export async function loadProbeFiles(dir: string = PROBES_DIR): Promise<ProbeFile[]> {
  const names = (await listDir(dir)).filter((f) => f.endsWith('.json')).sort();
  const out: ProbeFile[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    let json: unknown;
    try {
      json = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      throw new Error(`${file}: not JSON (${(error as Error).message})`);
    }
    const parsed = probeFileSchema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new Error(`${file}: ${issues}`);
    }
    if (`${parsed.data.session}.json` !== name) throw new Error(`${file}: session is ${parsed.data.session}`);
    out.push(parsed.data);
  }
  return out;
}

/** The names in `dir`, none when it does not exist. */
async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
