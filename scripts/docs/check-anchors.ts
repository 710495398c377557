/**
 * After `vitepress build`: every link of the built site to a heading (`page#anchor`) must find an
 * element with that id on its page. VitePress fails the build on a link to a missing page but
 * does not look at anchors, and a heading renamed in one guide would silently break the links of
 * the others. Exits 1 listing each broken anchor.
 *
 *     tsx scripts/docs/check-anchors.ts [dist]      default docs/.vitepress/dist
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A link whose anchor names no element of its page: the page it is on, and the link. */
export interface BrokenAnchor {
  page: string;
  href: string;
}

/** Every `.html` file under `dir`. */
function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.html'))
    .map((e) => path.join(e.parentPath, e.name));
}

/**
 * The built page a link points to, from the page it is on: `''` is the page itself, `/x` is from
 * the site's root, anything else from the page's folder; clean URLs get `.html`, folders `index.html`.
 */
function targetOf(dist: string, page: string, link: string): string {
  if (link === '') return page;
  const base = link.startsWith('/') ? path.join(dist, link) : path.resolve(path.dirname(page), link);
  if (link.endsWith('/')) return path.join(base, 'index.html');
  return base.endsWith('.html') ? base : `${base}.html`;
}

/** The broken anchors of the site built in `dist`. */
export function brokenAnchors(dist: string): BrokenAnchor[] {
  const ids = new Map<string, Set<string>>();
  const idsOf = (file: string) => {
    let found = ids.get(file);
    if (!found) {
      let html = '';
      try {
        html = readFileSync(file, 'utf8');
      } catch {
        // A missing page is VitePress's dead link; here it has no ids.
      }
      found = new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1] as string));
      ids.set(file, found);
    }
    return found;
  };
  const broken: BrokenAnchor[] = [];
  for (const page of htmlFiles(dist)) {
    const html = readFileSync(page, 'utf8');
    for (const [, link = '', anchor = ''] of html.matchAll(/href="([^"#]*)#([^"]+)"/g)) {
      if (/^[a-z]+:/i.test(link)) continue;
      if (!idsOf(targetOf(dist, page, link)).has(decodeURIComponent(anchor)))
        broken.push({ page: path.relative(dist, page), href: `${link}#${anchor}` });
    }
  }
  return broken;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const dist = process.argv[2] ?? fileURLToPath(new URL('../../docs/.vitepress/dist', import.meta.url));
  const broken = brokenAnchors(dist);
  for (const { page, href } of broken) console.error(`${page}: no heading for the link ${href}`);
  if (broken.length > 0) process.exit(1);
  console.log('every link to a heading finds it');
}
