/**
 * One list of Node versions: package.json's `engines.node` (`^22.15.0 || >=24`), the README's
 * "Node 22.15+ or 24+", the Node releases CI installs (.ci/node.sh) and the Docker image's base all
 * name the same lines, so a user is never told one version and tested on another.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url);
const read = (file: string) => readFile(new URL(file, ROOT), 'utf8');

/** A range of engines.node: `^X.Y.Z` (that major, from X.Y) or `>=X` (X and later). */
interface Line {
  major: number;
  minor: number;
  andLater: boolean;
}

/** The alternatives of `engines.node`; throws on a form this test does not read. */
function lines(range: string): Line[] {
  return range.split('||').map((part) => {
    const m = /^\s*(\^|>=)(\d+)(?:\.(\d+))?(?:\.\d+)?\s*$/.exec(part);
    if (!m) throw new Error(`engines.node: cannot read "${part.trim()}"`);
    return { major: Number(m[2]), minor: Number(m[3] ?? 0), andLater: m[1] === '>=' };
  });
}

/** Whether `version` (X.Y.Z) is in one of the lines. */
function allowed(version: string, of: Line[]): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return of.some((l) => (l.andLater ? major >= l.major : major === l.major && minor >= l.minor));
}

describe('the Node versions', () => {
  it('the README names the lines of engines.node, wherever it names a Node version', async () => {
    const pkg = JSON.parse(await read('package.json')) as { engines: { node: string } };
    const of = lines(pkg.engines.node);
    const phrase = `Node ${of.map((l) => (l.minor ? `${l.major}.${l.minor}+` : `${l.major}+`)).join(' or ')}`;
    expect(phrase).toBe('Node 22.15+ or 24+');
    const readme = await read('README.md');
    const named = [...readme.matchAll(/Node (\d+(?:\.\d+)*\+?(?: or \d+(?:\.\d+)*\+)?)/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(0);
    for (const mention of named) expect(mention).toBe(phrase);
  });

  it('CI installs a release of each line engines.node allows, and the image builds on one', async () => {
    const of = lines(JSON.parse(await read('package.json')).engines.node);
    const pinned = [...(await read('.ci/node.sh')).matchAll(/version=(\d+\.\d+\.\d+)/g)].map(
      (m) => m[1] ?? '',
    );
    expect(pinned.map((v) => v.split('.')[0]).sort()).toEqual(of.map((l) => String(l.major)).sort());
    for (const version of pinned) expect(allowed(version, of), version).toBe(true);
    const bases = [...(await read('Dockerfile')).matchAll(/^FROM node:(\d+)-slim/gm)].map(
      (m) => `${m[1]}.0.0`,
    );
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(allowed(base, of), `node:${base}`).toBe(true);
    expect(allowed('20.19.0', of), 'Node 20 left support').toBe(false);
  });
});
