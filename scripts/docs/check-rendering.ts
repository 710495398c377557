/**
 * After `vitepress build`: what a reader of a generated reference page would see as broken. Two
 * faults, each once shipped:
 * - a paragraph that ends mid-sentence: text wrapped for a terminal turned into one paragraph per
 *   line (a generated paragraph is prose from the code, and ends as a sentence or a lead-in does:
 *   `.`, `!`, `?`, `:`, `…`, maybe followed by a closing bracket or quote);
 * - an entity shown as text inside code: `&lt;key&gt;` where `<key>` was meant, from text escaped
 *   for HTML before markdown-it escaped it again (checked on every page, hand-written ones too).
 * Reads the built HTML, not the Markdown, because that is what the reader gets. Exits 1 listing
 * each fault.
 *
 *     tsx scripts/docs/check-rendering.ts [dist]      default docs/.vitepress/dist
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_PAGES } from './generate.ts';

/** One fault of a page: its kind, and the text as the reader sees it (clipped). */
export interface RenderingFault {
  kind: 'paragraph cut mid-sentence' | 'entity shown in code';
  text: string;
}

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'", nbsp: ' ' };

/** The text an HTML fragment shows: tags dropped, entities decoded once. */
export function visibleText(html: string): string {
  return html.replace(/<[^>]*>/g, '').replace(/&(#x[\da-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X'))
      return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    return NAMED[name.toLowerCase()] ?? entity;
  });
}

/** The page's own content: what VitePress puts in `<main>` (the whole text when it has none). */
function contentOf(html: string): string {
  const start = html.indexOf('<main');
  const end = html.lastIndexOf('</main>');
  return start >= 0 && end > start ? html.slice(start, end) : html;
}

/** How the visible text of a whole paragraph may end: a sentence's end or a lead-in's colon. */
const SENTENCE_END = /[.!?:…]["'”’)\]]*$/;

/** An HTML character reference, as text a reader would see. */
const ENTITY = /&(?:[a-z][a-z\d]*|#\d+|#x[\da-f]+);/i;

const clip = (text: string) => (text.length > 120 ? `…${text.slice(-117)}` : text);

/**
 * The faults of one built page. `prose`: whether its paragraphs are checked for a cut (the
 * generated pages); entities in code are checked on every page.
 */
export function renderingFaults(html: string, options: { prose: boolean }): RenderingFault[] {
  const content = contentOf(html);
  const faults: RenderingFault[] = [];
  if (options.prose) {
    for (const [, inner = ''] of content.matchAll(/<p\b[^>]*>([\s\S]*?)<\/p>/g)) {
      const text = visibleText(inner).replace(/\s+/g, ' ').trim();
      if (text !== '' && !SENTENCE_END.test(text))
        faults.push({ kind: 'paragraph cut mid-sentence', text: clip(text) });
    }
  }
  for (const [, inner = ''] of content.matchAll(/<code\b[^>]*>([\s\S]*?)<\/code>/g)) {
    const text = visibleText(inner);
    const entity = ENTITY.exec(text);
    if (entity) {
      const at = Math.max(0, entity.index - 40);
      faults.push({ kind: 'entity shown in code', text: text.slice(at, entity.index + 60).trim() });
    }
  }
  return faults;
}

/** The built page of a generated Markdown page: `docs/reference/cli.md` → `reference/cli.html`. */
function builtPageOf(markdown: string): string {
  return path.relative('docs', markdown).replace(/\.md$/, '.html');
}

/** Every `.html` file under `dir`, relative to it. */
function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.html'))
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

/** The faults of the site built in `dist`, by page (relative to `dist`). */
export function siteRenderingFaults(dist: string): Array<RenderingFault & { page: string }> {
  const generated = new Set(GENERATED_PAGES.map((p) => builtPageOf(p.path)));
  return htmlFiles(dist).flatMap((page) =>
    renderingFaults(readFileSync(path.join(dist, page), 'utf8'), { prose: generated.has(page) }).map(
      (fault) => ({ page, ...fault }),
    ),
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const dist = process.argv[2] ?? fileURLToPath(new URL('../../docs/.vitepress/dist', import.meta.url));
  const faults = siteRenderingFaults(dist);
  for (const { page, kind, text } of faults) console.error(`${page}: ${kind}: ${text}`);
  if (faults.length > 0) process.exit(1);
  console.log('no generated paragraph is cut mid-sentence and no code shows an entity');
}
