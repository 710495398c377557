/**
 * The code examples of the README and the docs, read from their Markdown: every fenced block with
 * its language and place. A block is an example to run when its language is TypeScript,
 * JavaScript, Python or shell, unless the line before its fence says why not:
 *
 *     <!-- example: not run: needs Docker -->
 *
 * Every fence must name its language (`text` for a diagram or output), so no example can slip
 * through unclassified. The generated reference pages (docs/reference/) are left out: their shell
 * lines are the command table's examples, which test/unit/cli-help.test.ts parses.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A fenced block of a Markdown page. */
export interface DocBlock {
  /** The page, from the repository's root (`docs/guide/integrate.md`). */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word, lower-cased (`ts`, `sh`, `text`); '' when there is none. */
  language: string;
  /** The block's text, without the fences. */
  code: string;
  /** Why the block is not run, from the marker comment before it; absent: it runs. */
  notRun?: string;
}

/** How an example runs, by its language. */
export type Runner = 'typescript' | 'javascript' | 'python' | 'shell';

const RUNNERS: Record<string, Runner> = {
  ts: 'typescript',
  typescript: 'typescript',
  js: 'javascript',
  javascript: 'javascript',
  mjs: 'javascript',
  py: 'python',
  python: 'python',
  sh: 'shell',
  bash: 'shell',
  shell: 'shell',
};

/** The runner of a block's language, or undefined for a language that is not an example's. */
export function runnerOf(block: Pick<DocBlock, 'language'>): Runner | undefined {
  return RUNNERS[block.language];
}

const NOT_RUN = /^<!--\s*example:\s*not run:\s*(.+?)\s*-->$/;

/** The fenced blocks of one page's Markdown. */
export function blocksOf(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const [, indent = '', fence = '', info = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !(lines[j] as string).trim().startsWith(fence)) {
      body.push((lines[j] as string).slice(indent.length));
      j++;
    }
    let before = i - 1;
    while (before >= 0 && (lines[before] as string).trim() === '') before--;
    const marker = before >= 0 ? NOT_RUN.exec((lines[before] as string).trim()) : null;
    blocks.push({
      file,
      line: i + 1,
      language: (info.trim().split(/\s+/)[0] ?? '').toLowerCase(),
      code: `${body.join('\n')}\n`,
      ...(marker ? { notRun: marker[1] } : {}),
    });
    i = j;
  }
  return blocks;
}

/** The pages whose examples are checked: README.md and docs/**\/*.md but the generated reference. */
export function examplePages(root: string): string[] {
  const docs = readdirSync(path.join(root, 'docs'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .filter((file) => !file.startsWith(`docs${path.sep}reference${path.sep}`))
    .filter((file) => !file.includes(`${path.sep}.vitepress${path.sep}`));
  return ['README.md', ...docs.sort()];
}

/** Every fenced block of every page {@link examplePages} lists. */
export function docBlocks(root: string): DocBlock[] {
  return examplePages(root).flatMap((file) => blocksOf(file, readFileSync(path.join(root, file), 'utf8')));
}
