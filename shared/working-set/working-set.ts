/**
 * The working set: the file paths an agent worked with, found in its tool calls, tool results and
 * messages, most recent first. Both summarizers hand it on, so an agent still knows which files it
 * was working on after a compaction: the prompt shows the first 20, the checkpoint keeps all of them.
 *
 * Extraction is a heuristic built for any agent and any language, not for one transcript format:
 * absolute paths (`/x/y`, `~/x`, `C:\x`), relative paths with a `/`, and bare file names with a
 * well-known extension (`setup.py`, `Makefile`). It rejects URLs, domains, versions, numbers, MIME
 * types, device files and code that merely looks like a file name (`console.log(`, `self.db`).
 * Tool-call arguments that name a path (`path`, `file_path`, `filename`, `cwd`, ...) are taken as
 * paths even without a `/`. Pure: no I/O.
 */
import type { Message } from '../contract/message.ts';
import { isHighSurrogate, isLowSurrogate } from '../contract/unicode.ts';
import { isSecretPath, type PathWitnesses, pathWitnesses, secretPathAllowed } from '../trust/secrets.ts';

/** The words of a space-separated list, as a set. */
function words(list: string): Set<string> {
  return new Set(list.split(' '));
}

/** Longest sanitized path, in UTF-16 code units, the `…` included (the checkpoint schema's bound). */
export const MAX_PATH_CHARS = 300;

/** Paths {@link formatWorkingSetForPrompt} lists before its `... and N more paths` line. */
export const DEFAULT_PROMPT_PATHS = 20;

/** One character of a path segment: letters and digits of any script, `_ . @ + -`. */
const SEG = String.raw`[\p{L}\p{N}_.@+\-]`;

/**
 * A path candidate: a Windows path (`C:\a\b`), or an optional `/` or `~/` root followed by segments.
 * The lookbehinds keep it from starting inside a word, a path, a `$VAR`, a `${...}`, a call result
 * (`f().then`), a glob (`*.py`) or after a `<placeholder>` (`<name>/SKILL.md`); a redirection
 * (`cmd >/tmp/out`) still counts.
 */
const CANDIDATE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_.@+\-~/\\$})\]*])(?<![\p{L}\p{N}_\-]>)` +
    String.raw`(?:[A-Za-z]:[\\/](?:${SEG}+[\\/]+)*${SEG}+[\\/]?|(?:~/|/)?(?:${SEG}+/+)*${SEG}+/?)`,
  'gu',
);

/**
 * Extensions that make a bare name (no `/`) a file name. Extensions that are also common attribute
 * names in code (`.a`, `.o`, `.s`, `.m`, `.key`, `.cmd`) are left out on purpose: `x.key` is more
 * often a field than a file.
 */
const KNOWN_EXTENSIONS = words(
  'py pyi pyx pxd ipynb js mjs cjs jsx ts mts cts tsx json jsonl json5 md mdx markdown rst txt adoc ' +
    'c h cc cpp cxx hpp hh hxx mm cs java kt kts scala groovy gradle go rs rb erb php swift dart lua pl ' +
    'pm r jl ex exs erl hrl hs elm clj cljs ml mli fs fsx vb sh bash zsh fish ps1 bat yml yaml toml ini ' +
    'cfg conf properties env lock xml xsd html htm css scss sass less vue svelte astro sql graphql gql ' +
    'proto thrift tf tfvars hcl nix pony zig nim sol asm mk cmake in am ac log csv tsv parquet db ' +
    'sqlite sqlite3 png jpg jpeg gif svg ico webp bmp pdf zip tar gz tgz bz2 xz 7z whl jar war so dylib ' +
    'dll exe wasm bin dat pem crt pub patch diff orig rej bak tmp swp out pid sock plist pkl pickle ' +
    'npy npz h5 pt pth onnx tex bib sty template tpl j2 jinja mustache hbs ejs pug twig',
);

/**
 * Known extensions that are also words of dotted code names (`django.conf`, `backends.sqlite3`,
 * `logging.log`): a bare name with one of them counts only with a single dot and outside an import.
 */
const WEAK_EXTENSIONS = words(
  'conf cfg db env lock log out in bin dat tmp pid sock pub sqlite sqlite3 orig rej bak swp am ac mk ' +
    'r pl pm ml fs ex hs sol tf pt so',
);

/** File names without an extension that are files wherever they appear. */
const KNOWN_NAMES = words(
  'Makefile GNUmakefile Dockerfile Containerfile Gemfile Rakefile Procfile Jenkinsfile Vagrantfile ' +
    'Justfile Brewfile Pipfile',
);

/** Dot files that are files even without an extension (`.gitignore`, `.env.local`, `.bashrc`). */
const DOTFILE =
  /^\.(?:[\w-]*(?:rc|ignore|attributes|modules|config|profile|mailmap|htaccess)|env(?:\.[\w-]+)?)$/;

/** Receivers of attribute access in code: `self.db`, `console.log` are not files. */
const CODE_RECEIVERS = words(
  'self this cls super console window document process math Math sys os np pd obj ctx',
);

/** Last labels of domains: a first segment `github.com` makes `github.com/a/b` a URL without scheme. */
const TLDS = words(
  'com org net io dev ai co edu gov app me info biz us uk de fr jp cn ru eu ca au in nl ch se no it es ' +
    'br pl tv cc xyz site online cloud tech',
);

/** Top-level MIME types: `application/json` is a media type, not a path. */
const MIME_TOPS = words('application text image audio video multipart font model message');

/** Slash pairs of prose (`and/or`, `read/write`): not paths. */
const PROSE_PAIRS = words(
  'and/or either/or yes/no true/false on/off read/write input/output he/she his/her him/her s/he ' +
    'pass/fail success/failure start/stop open/close get/set min/max before/after left/right up/down ' +
    'enable/disable enabled/disabled show/hide add/remove create/delete import/export encode/decode ' +
    'load/store push/pull client/server',
);

/**
 * Conventional first directories of a source tree: `src/utils` is a path even though, unlike `src/a.py`,
 * `src_1/x` or `.github/workflows`, nothing else in it says so (`and/or`, `org/repo` are not paths).
 */
const CONVENTIONAL_DIRS = words(
  'src lib libs test tests spec specs doc docs app apps pkg cmd internal packages include bin scripts ' +
    'tools build dist examples example vendor node_modules config configs conf assets static templates ' +
    'migrations modules components utils util api web cli core common shared plugins fixtures testdata',
);

/** Keys of tool-call arguments whose value is a path, by their last word(s). */
const PATH_KEY_WORDS = words(
  'path paths file files filename filenames filepath filepaths dir dirs directory directories cwd ' +
    'workdir folder',
);

/** Deepest JSON nesting walked for path arguments. */
const MAX_JSON_DEPTH = 32;

/** Longest value of a path argument taken as one path. */
const MAX_ARGUMENT_PATH_CHARS = 4_096;

/**
 * File paths mentioned in a text, deduplicated, in order of first mention. The text may be free text
 * (messages, shell commands, tool output: tracebacks, grep hits, diffs) or a tool call's JSON
 * (`{"name": ..., "arguments": {...}}`, arguments possibly a JSON string). Paths are normalized
 * (`./a` → `a`, trailing `/` and sentence-final `.` dropped, diff `a/`/`b/` prefixes removed) but not
 * sanitized: see {@link sanitizePath}.
 */
export function extractPaths(text: string): string[] {
  return [...new Set(pathOccurrences(text))];
}

/**
 * {@link extractPaths} reading every candidate of the whole text, as the scan did before it read only
 * around `.`, `/` and `\`: the same result, slower. The reference the unit tests compare with.
 */
export function extractPathsExhaustively(text: string): string[] {
  return [...new Set(pathOccurrences(text, true))];
}

/**
 * A path made safe to show and store: control characters (C0, DEL, C1), bidirectional controls
 * (U+202A–U+202E, U+2066–U+2069, and the marks U+200E, U+200F, U+061C), line and paragraph
 * separators and unpaired surrogates each become `?`; the result is at most {@link MAX_PATH_CHARS}
 * UTF-16 code units, a clipped path ending in `…` within that bound. Idempotent.
 */
export function sanitizePath(p: string): string {
  const clip = p.length > MAX_PATH_CHARS;
  let end = clip ? MAX_PATH_CHARS - 1 : p.length;
  if (clip && isHighSurrogate(p.charCodeAt(end - 1))) end -= 1;
  let out = '';
  for (let i = 0; i < end; i++) {
    const code = p.charCodeAt(i);
    if (isHighSurrogate(code) && i + 1 < end && isLowSurrogate(p.charCodeAt(i + 1))) {
      out += p.slice(i, i + 2);
      i++;
    } else {
      out += isUnsafeCodeUnit(code) ? '?' : p.charAt(i);
    }
  }
  return clip ? `${out}…` : out;
}

/**
 * The working set of a run of messages: every path in their tool calls, tool results and user and
 * assistant texts (system messages and summaries are skipped), sanitized, deduplicated, most recent
 * first (by latest mention; later in a message counts as more recent), followed by the `previous`
 * paths (an older working set, most recent first) that were not mentioned again. No cap.
 *
 * A secret-looking path (`~/.ssh/…`, `~/.aws/credentials`, `.env`, `*.pem`: `isSecretPath`) of
 * these messages enters only when the agent named it in its own turn and the user's own words asked
 * for it (`secretPathAllowed` in shared/trust/secrets.ts), never from tool output alone;
 * `userWords` are what an earlier checkpoint kept of the user's words (goal, instructions, last
 * request), counted as the user's. The `previous` paths passed that rule when they entered.
 */
export function extractWorkingSet(
  messages: Message[],
  previous: string[] = [],
  userWords: readonly string[] = [],
): string[] {
  const latest = new Map<string, number>();
  let order = 0;
  let witnesses: PathWitnesses | null = null;
  for (const message of messages) {
    if (!isScanned(message)) continue;
    for (const path of pathOccurrences(message.content)) {
      if (isSecretPath(path)) {
        witnesses ??= pathWitnesses(messages, userWords);
        if (!secretPathAllowed(path, witnesses)) continue;
      }
      latest.set(sanitizePath(path), order++);
    }
  }
  const paths = [...latest.entries()].sort((a, b) => b[1] - a[1]).map(([path]) => path);
  const seen = new Set(paths);
  for (const old of previous) {
    if (typeof old !== 'string' || old.length === 0) continue;
    const path = sanitizePath(old);
    if (!seen.has(path)) {
      seen.add(path);
      paths.push(path);
    }
  }
  return paths;
}

/**
 * The working set as prompt text: one (re-sanitized) path per line, at most `limit` lines, then
 * `... and N more paths` when there are more. Empty string for no paths.
 */
export function formatWorkingSetForPrompt(paths: string[], limit = DEFAULT_PROMPT_PATHS): string {
  const shown = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : DEFAULT_PROMPT_PATHS;
  const lines = paths.slice(0, shown).map(sanitizePath);
  if (paths.length > shown) lines.push(`... and ${paths.length - shown} more paths`);
  return lines.join('\n');
}

function isScanned(message: Message): boolean {
  return typeof message?.content === 'string' && message.role !== 'system' && message.kind !== 'summary';
}

/** Every path mention of a text, in order, repeats included; `exhaustive`: see {@link scanText}. */
function pathOccurrences(text: string, exhaustive = false): string[] {
  if (typeof text !== 'string' || text.length === 0) return [];
  const json = parseJsonContainer(text);
  if (json !== undefined) {
    const out: string[] = [];
    walkJson(json, null, 0, out, exhaustive);
    return out;
  }
  // Tool-call JSON cut by a length limit no longer parses: read it as text, its escapes undone.
  const trimmed = text.trimStart();
  const plain = trimmed.startsWith('{') || trimmed.startsWith('[') ? unescapeJsonText(text) : text;
  return scanText(plain, exhaustive);
}

function parseJsonContainer(text: string): unknown {
  const trimmed = text.trim();
  if (
    !(trimmed.startsWith('{') && trimmed.endsWith('}')) &&
    !(trimmed.startsWith('[') && trimmed.endsWith(']'))
  ) {
    return undefined;
  }
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

function unescapeJsonText(text: string): string {
  return text.replace(/\\(["\\/nrt])/g, (_, c: string) => (c === 'n' || c === 'r' || c === 't' ? ' ' : c));
}

/**
 * Collects paths from a parsed JSON value: a string under a path key is one path; any other string is
 * scanned as text, or walked when it is itself JSON (OpenAI-style `"arguments": "{...}"`).
 */
function walkJson(
  value: unknown,
  key: string | null,
  depth: number,
  out: string[],
  exhaustive: boolean,
): void {
  if (depth > MAX_JSON_DEPTH) return;
  if (typeof value === 'string') {
    const argumentPath = key !== null && isPathKey(key) ? pathFromArgument(value) : null;
    if (argumentPath !== null) {
      out.push(argumentPath);
      return;
    }
    const nested = parseJsonContainer(value);
    if (nested !== undefined) walkJson(nested, null, depth + 1, out, exhaustive);
    else out.push(...scanText(value, exhaustive));
  } else if (Array.isArray(value)) {
    for (const item of value) walkJson(item, key, depth + 1, out, exhaustive);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) walkJson(v, k, depth + 1, out, exhaustive);
  }
}

/** Whether an argument key names a path: its last word is `path`, `file`, `dir`, `cwd`, ... */
function isPathKey(key: string): boolean {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
  const last = words[words.length - 1];
  if (last === undefined) return false;
  if (PATH_KEY_WORDS.has(last)) return true;
  return words[words.length - 2] === 'file' && (last === 'name' || last === 'names');
}

/** The value of a path argument as a path, or null when it is no single path (text, glob, URL, device). */
function pathFromArgument(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_ARGUMENT_PATH_CHARS || /[\r\n*?]/.test(trimmed))
    return null;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return null;
  const { path } = normalize(trimmed);
  if (!/[\p{L}\p{N}]/u.test(path) || isPseudoFile(path) || isNumberLike(path)) return null;
  return isThrowawayPath(path) ? null : path;
}

/**
 * Path mentions of free text, in order. Every path but a bare known name (`Makefile`) holds a `.`,
 * `/` or `\\`, so unless the text names one of {@link KNOWN_NAMES}, only the runs of path characters
 * around those marks are read: {@link CANDIDATE} finds there exactly the candidates it finds in the
 * whole text, since a candidate never spans a character outside such a run. `exhaustive` reads every
 * candidate of the whole text instead (the reference the unit tests compare with).
 */
function scanText(text: string, exhaustive = false): string[] {
  const prepared = prepareText(text, exhaustive);
  const out: string[] = [];
  if (exhaustive || KNOWN_NAME_MENTION.test(prepared)) {
    for (const match of prepared.matchAll(CANDIDATE)) takeCandidate(prepared, match, out);
    return out;
  }
  const marks = new MarkFinder(prepared);
  for (let mark = marks.next(0); mark >= 0; ) {
    let start = mark;
    while (start > 0 && inPathRun(prepared.charCodeAt(start - 1))) start--;
    let end = mark + 1;
    while (end < prepared.length && inPathRun(prepared.charCodeAt(end))) end++;
    // No candidate starts between runs, so the search from the run's start finds what a search
    // of the whole text finds from there.
    CANDIDATE.lastIndex = start;
    for (let match = CANDIDATE.exec(prepared); match !== null && match.index < end; ) {
      takeCandidate(prepared, match, out);
      match = CANDIDATE.exec(prepared);
    }
    mark = marks.next(end);
  }
  CANDIDATE.lastIndex = 0;
  return out;
}

/** Adds the path of one {@link CANDIDATE} match of `prepared` to `out`, when it is one. */
function takeCandidate(prepared: string, match: RegExpExecArray | RegExpMatchArray, out: string[]): void {
  const raw = match[0];
  // Most candidates are plain words: without a `.`, `/` or `\\` only a known name can be a file.
  if (!hasPathMark(raw) && !KNOWN_NAMES.has(raw.replace(/^-+/, ''))) return;
  const start = match.index ?? 0;
  const context = {
    before: prepared.slice(Math.max(0, start - 8), start),
    next: prepared.charAt(start + raw.length),
  };
  const path = acceptCandidate(raw, context);
  if (path !== null) out.push(path);
}

/** Whether a text mentions a {@link KNOWN_NAMES} name anywhere (perhaps inside a longer word). */
const KNOWN_NAME_MENTION = new RegExp([...KNOWN_NAMES].join('|'));

/**
 * The ASCII characters a {@link CANDIDATE} match may hold: those of {@link SEG}, the separators,
 * the `~` of `~/` and the `:` of `C:\`. Every non-ASCII code unit counts as one (a letter or digit
 * of another script may be one), which can only make a run longer than it need be.
 */
const PATH_RUN_ASCII = (() => {
  const table = new Uint8Array(128);
  for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@+-/\\~:')
    table[c.charCodeAt(0)] = 1;
  return table;
})();

function inPathRun(code: number): boolean {
  return code >= 128 || PATH_RUN_ASCII[code] === 1;
}

/** The `.`, `/` and `\` of one text, in order, each kind found with `indexOf` as the scan moves on. */
class MarkFinder {
  private static readonly MARKS = ['.', '/', '\\'];
  /** Per mark, its next index at or after the last `from` asked (Infinity: no more). */
  private readonly at = [-1, -1, -1];
  constructor(private readonly text: string) {}

  /** Index of the first mark at or after `from`; -1 when there is none. */
  next(from: number): number {
    let first = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3; i++) {
      let at = this.at[i] as number;
      if (at < from) {
        at = this.text.indexOf(MarkFinder.MARKS[i] as string, from);
        if (at < 0) at = Number.POSITIVE_INFINITY;
        this.at[i] = at;
      }
      if (at < first) first = at;
    }
    return first === Number.POSITIVE_INFINITY ? -1 : first;
  }
}

/** Whether `raw` holds a `.`, `/` or `\\`, one of which every path but a bare known name has. */
function hasPathMark(raw: string): boolean {
  return raw.includes('.') || raw.includes('/') || raw.includes('\\');
}

/**
 * Blanks what only looks like a path: URLs (up to a space or a quote, as JSON-ish output packs them
 * tight), `git@host:repo`, `host:port/x`, shebangs, sed's `s/old/new/g`. Rewrites diff headers
 * (`--- a/x`, `+++ b/x`, `diff --git a/x b/x`) to name the file itself. Unless `exhaustive`, each
 * rewrite runs only when the text holds what its pattern cannot match without; the rewrites only
 * remove characters or put a space in their place, so none makes a later one match.
 */
function prepareText(text: string, exhaustive = false): string {
  let t = text;
  const slash = exhaustive || t.includes('/');
  if (exhaustive || t.includes('#!')) t = t.replace(/#!\S*/g, ' ');
  if (slash && (exhaustive || t.includes('s/')))
    t = t.replace(/(?<![\w/])(?:\d+(?:,\d+)?|\$)?s\/[^/\n]*\/[^/\n]*\/[gimp\d]*/g, ' ');
  if (slash && (exhaustive || t.includes('://'))) {
    t = t
      .replace(/\bfile:\/\/(?=\/)/gi, ' ')
      .replace(/(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>]*/gi, ' ');
  }
  const colon = exhaustive || t.includes(':');
  if (colon && (exhaustive || t.includes('@'))) t = t.replace(/(?<![\w.-])[\w.-]+@[\w.-]+:[^\s"'`<>]*/g, ' ');
  if (slash && colon) t = t.replace(/(?<![\w./-])[\w.-]+:\d{1,5}(?=\/)[^\s"'`<>]*/g, ' ');
  if (exhaustive || t.includes('diff --git a/'))
    t = t.replace(/^diff --git a\/(\S+) b\/(\S+)/gm, 'diff --git $1 $2');
  if (exhaustive || t.includes(' a/') || t.includes(' b/')) t = t.replace(/^(---|\+\+\+) [ab]\//gm, '$1 ');
  return t;
}

interface Normalized {
  path: string;
  /** Written with a trailing `/` (a directory). */
  dir: boolean;
  /** Written as `./x` or `../x`. */
  explicitRelative: boolean;
}

function normalize(raw: string): Normalized {
  const dir = /[\\/]$/.test(raw);
  // Leading dashes are ASCII-tree art (`|---file.py`) or options (`--out=`), never part of a name.
  let path = (dir ? raw : trimEnd(raw, '.')).replace(/^-+/, '');
  const explicitRelative = /^\.\.?[\\/]/.test(path);
  if (!/^[A-Za-z]:\\/.test(path)) path = path.replace(/\/{2,}/g, '/');
  while (path.startsWith('./')) path = path.slice(2);
  if (path.length > 1) path = trimEnd(path, '/\\');
  if (/^[A-Za-z]:$/.test(path)) path += '\\';
  return { path, dir, explicitRelative };
}

/** `text` without the trailing run of `chars` (a loop: a `/x+$/` regex is quadratic on long runs). */
function trimEnd(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text.charAt(end - 1))) end--;
  return text.slice(0, end);
}

/** Where a candidate stands: a few characters before it, and the one after it. */
interface Context {
  before: string;
  next: string;
}

/** The candidate as a path, or null when it is not one. */
function acceptCandidate(raw: string, context: Context): string | null {
  const { path, dir, explicitRelative } = normalize(raw);
  if (!/[\p{L}\p{N}]/u.test(path) || isPseudoFile(path) || /[\\/]{2}$/.test(raw)) return null;
  // `x///` (a marker such as `///PROCESS-DONE///`), not a directory.
  if (context.next === '/' || context.next === '\\') return null;
  if (isThrowawayPath(path)) return null;
  if (/^[A-Za-z]:[\\/]./.test(path)) return path;
  const segments = path.split('/').filter((s) => s.length > 0);
  if (segments.some((s) => /^\.{3,}$/.test(s))) return null;
  let ok: boolean;
  if (path.startsWith('/')) ok = acceptAbsolute(segments, dir);
  else if (path.startsWith('~/')) ok = segments.length >= 2;
  else if (explicitRelative) ok = true;
  else if (segments.length === 1 && dir) ok = acceptBareDirectory(segments[0] ?? '');
  else if (segments.length >= 2 || dir) ok = acceptRelative(segments, dir);
  else ok = acceptBareName(path, context);
  return ok ? path : null;
}

/**
 * A bare name written as a directory (`src/`, `my_pkg/`): alone it is weak evidence, so it needs a
 * lower-case letter and must not start with a digit. `HD/` (from `/Volumes/Macintosh HD/`), `317s/`
 * (sed's `317s/a/b/`) and `DONE/` are fragments, not directories.
 */
function acceptBareDirectory(segment: string): boolean {
  return segment.length >= 2 && /\p{Ll}/u.test(segment) && !/^[\d-]/.test(segment);
}

/**
 * Throwaway paths, never worth carrying on: directories made by Python's `tempfile` (`/tmp/tmpab12_xyz`: `tmp` and 8 random characters),
 * pip's build caches (`/tmp/pip-ephem-wheel-cache-…`, `/tmp/pip-req-build-…`), pytest's
 * `pytest-of-<user>` and their contents.
 */
export function isThrowawayPath(path: string): boolean {
  return path.split(/[\\/]+/).some(isThrowawaySegment);
}

function isThrowawaySegment(segment: string): boolean {
  if (/^tmp[a-z0-9_]{8}$/.test(segment)) return true;
  return /^(?:pip-[a-z]+(?:-[a-z]+)*-[a-z0-9_]{8}|pytest-of-.+)$/.test(segment);
}

/**
 * `/a/b` yes, `/1/2` no; `/a` only written as a directory, `/a/`: alone it is more often a slash
 * command (`/help`), a closing tag (`</output>`) or a suffix in code (`dir + "/x.py"`).
 */
function acceptAbsolute(segments: string[], dir: boolean): boolean {
  if (segments.length >= 2) return !segments.every(isNumberLike);
  return dir && !isNumberLike(segments[0] ?? '');
}

/**
 * `src/a.py`, `a/b/c`, `src/`: yes, unless a domain, a package scope, an option, numbers or single
 * letters. Two segments without an extension (`src/utils` but also `and/or`, `org/repo`,
 * `application/json`) need a sign of code: a conventional first directory, or `_`, `.` or a digit.
 */
function acceptRelative(segments: string[], dir: boolean): boolean {
  const first = segments[0] ?? '';
  const last = segments[segments.length - 1] ?? '';
  if (/^[@-]/.test(first) || isDomain(first)) return false;
  if (segments.every(isNumberLike) || /^\d+$/.test(last)) return false;
  if (segments.every((s) => s.length === 1)) return false;
  if (segments.length !== 2 || dir || hasKnownExtension(last)) return true;
  const pair = segments.join('/').toLowerCase();
  if (MIME_TOPS.has(first.toLowerCase()) || PROSE_PAIRS.has(pair)) return false;
  return CONVENTIONAL_DIRS.has(first) || segments.some((s) => /[_.\d]/.test(s));
}

/**
 * `setup.py`, `README.MD`, `Makefile`, `.gitignore` yes; `self.db`, `console.log(`, `from django.conf`,
 * `backends.sqlite3` and `django.core.serializers.json` (dotted names), `s.Pony`, `1.2.3`,
 * `example.com`, `me@x.in` no.
 */
function acceptBareName(name: string, context: Context): boolean {
  if (KNOWN_NAMES.has(name)) return true;
  if (DOTFILE.test(name)) return true;
  if (context.next === '(' || !hasKnownExtension(name) || isEmailOrScoped(name)) return false;
  const dot = name.lastIndexOf('.');
  const extension = name.slice(dot + 1);
  if (extension !== extension.toLowerCase() && extension !== extension.toUpperCase()) return false;
  if (/^[a-z_]\w*(?:\.[a-z_]\w*){3,}$/.test(name)) return false;
  const weak = WEAK_EXTENSIONS.has(extension.toLowerCase());
  if (weak && (name.indexOf('.') !== dot || /\b(?:from|import)\s+$/.test(context.before))) return false;
  const stem = name.slice(0, dot);
  return stem.length > 0 && !CODE_RECEIVERS.has(stem) && /[\p{L}]/u.test(stem);
}

/** `@scope.js`, `me@host.in` (but not `icon@2x.png`). */
function isEmailOrScoped(name: string): boolean {
  const at = name.indexOf('@');
  return at === 0 || (at > 0 && isDomain(name.slice(at + 1)));
}

function hasKnownExtension(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return dot > 0 && KNOWN_EXTENSIONS.has(name.slice(dot + 1).toLowerCase());
}

function isDomain(segment: string): boolean {
  const labels = segment.toLowerCase().split('.');
  return (
    labels.length >= 2 &&
    TLDS.has(labels[labels.length - 1] ?? '') &&
    labels.every((l) => /^[a-z0-9-]+$/.test(l))
  );
}

/** Digits and dots, optionally `v`-prefixed: `12`, `1.2.3`, `v2.0`. */
function isNumberLike(segment: string): boolean {
  return /^v?\d+(?:\.\d+)*$/i.test(segment);
}

/** Device and kernel pseudo-files: `/dev/null`, `/proc/...`, `/sys/...`. */
function isPseudoFile(path: string): boolean {
  return /^\/(?:dev|proc|sys)(?:\/|$)/.test(path);
}

function isUnsafeCodeUnit(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x061c ||
    code === 0x2028 ||
    code === 0x2029 ||
    isHighSurrogate(code) ||
    isLowSurrogate(code)
  );
}
