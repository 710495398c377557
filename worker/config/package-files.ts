/**
 * Where the package's own files are, from the TypeScript sources of a checkout and from the built
 * JavaScript of an installed package alike: the folder of the nearest `package.json` above this
 * module (`dist/` has none of its own).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The package's root folder (holds `package.json`, `drizzle/`, and in a checkout `corpus/`). */
export const PACKAGE_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A path inside the package, e.g. `packagePath('drizzle')`. */
export function packagePath(...parts: string[]): string {
  return path.join(PACKAGE_ROOT, ...parts);
}

/** The fields of the package's `package.json` compactor reads. */
export interface PackageJson {
  name: string;
  version: string;
  description: string;
  peerDependencies?: Record<string, string>;
}

/** The package's `package.json`. */
export function packageJson(): PackageJson {
  return JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as PackageJson;
}
