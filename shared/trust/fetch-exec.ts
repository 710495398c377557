/**
 * Fetch-then-execute in any shell form: a download whose output reaches an interpreter. The
 * classic `curl … | sh` is one form; the same effect is reached by saving the download to a file
 * and running that file later in the text (`wget -O /tmp/u.sh URL; chmod +x /tmp/u.sh; /tmp/u.sh`,
 * `iwr URL -OutFile x.ps1; .\x.ps1`, a file run first and fetched after in a list of steps), by an
 * interpreter that fetches and evaluates in one expression (`python -c "exec(urlopen(…).read())"`,
 * `node -e "fetch(…).then(r => r.text()).then(eval)"`), or said in words in any language ("download
 * the script from https://… and run it"). Pure; reads the lower-case, Latin-folded view of a text
 * (shared/trust/injection.ts).
 *
 * Every pattern is linear: the gaps are bounded, a saved file's name is searched with `indexOf`, and
 * at most {@link MAX_DOWNLOADS} downloads and {@link MAX_MENTIONS} mentions of each file are read.
 */
import { anyMatch } from './any-match.ts';
import { DOWNLOAD_THEN_RUN } from './injection-lexicon.ts';

/** Downloads read per text. */
const MAX_DOWNLOADS = 16;

/** Mentions of a saved file's name read per download. */
const MAX_MENTIONS = 16;

/**
 * A program that fetches from the network, then an argument (`http/client.py` in a traceback is no
 * command), or a call that saves a download; then the rest of its command (one line, bounded).
 */
const DOWNLOAD =
  /(?:\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|start-bitstransfer|aria2c|lwp-download|lwp-request|httpie|http|nc|ncat|netcat|certutil|bitsadmin|tftp)[ \t]|\b(?:urlretrieve|downloadfile)\s*\()[^\n;&|]{0,300}/g;

/** The interpreters a download can be piped into. */
const INTERPRETER =
  '(?:sudo\\s+(?:-\\S+\\s+){0,3})?(?:(?:ba|z|k|da|fi|c|tc|a)?sh|python[23]?(?:\\.\\d+)?|py|perl|ruby|node|nodejs|bun|deno|php|lua|iex|invoke-expression|powershell(?:\\.exe)?|pwsh|source|cmd(?:\\.exe)?|bash\\.exe)\\b';

/** A download piped into an interpreter, possibly through other filters (`| tee x | sh`). */
const PIPED = new RegExp(
  `\\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|nc|ncat|netcat|http)\\b[^\\n]{0,300}?\\|\\s*${INTERPRETER}(?!\\s+-m\\s+json\\.tool)`,
);

/** An interpreter that fetches and evaluates in one expression. */
const FETCH_EVAL: readonly RegExp[] = [
  /\b(?:exec|eval)\s*\([^\n]{0,120}\b(?:urlopen|urllib|requests\.get|httpx\.get|fetch|http\.get|urlretrieve)\b/,
  /\b(?:urlopen|requests\.get|httpx\.get|fetch|http\.get)\b[^\n]{0,200}(?:\beval\b|\bexec\s*\(|\bnew\s+function\b|\bexecsync\b|\bos\.system\b|\bsubprocess\b|\bchild_process\b|\bspawn\s*\()/,
  /\b(?:iex|invoke-expression)\b[^\n]{0,40}\b(?:downloadstring|iwr|irm|invoke-webrequest|invoke-restmethod)\b/,
  /\b(?:downloadstring|irm|invoke-restmethod)\b[^\n]{0,200}\|\s*(?:iex|invoke-expression)\b/,
];

/** Where a download says it saves: `-o FILE`, `-O FILE`, `--output FILE`, `-OutFile FILE`, `> FILE`. */
const SAVED_TO =
  /(?:\s-o\s*|\s--output[= ]\s*|\s--output-document[= ]\s*|\s-outfile\s+|\s-destination\s+|>\s*)["']?([^\s"'<>|;&,)]{2,200})/g;

/** A download call's second argument, the file it saves to: `urlretrieve(url, "x.sh")`. */
const CALL_SAVED = /^(?:urlretrieve|downloadfile)\s*\(\s*[^,\n]{1,300},\s*["']([^"'\n]{2,200})["']/;

/** Where a download fetches from: a URL, an IP address, a host name with a dot. */
const REMOTE = /:\/\/|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|\b[a-z0-9-]{1,63}\.[a-z]{2,24}\b/;

/** A URL, whose last path segment names the file `wget URL` or `curl -O URL` saves. */
const URL_FILE = /\bhttps?:\/\/[^\s"'<>]{0,300}\/([\w-]{1,100}\.[a-z0-9]{1,5})(?=[\s"'<>)]|$)/;

/** What runs a file named right after it: an interpreter, `chmod +x`, `source`, or a run verb. */
const RUNS_BEFORE =
  /(?:\b(?:(?:ba|z|k|da|fi|a)?sh|source|python[23]?(?:\.\d+)?|py|perl|ruby|node|bun|deno|php|lua|pwsh|powershell(?:\.exe)?|start-process|invoke-item|chmod|exec|nohup|sudo|cmd(?:\.exe)?\s+\/c|run|execute|launch|start|voer|draai|start|führe|starte|exécute[rz]?|lance[rz]?|ejecuta[r]?|executa[r]?|esegui|запусти|выполни)\b[^\n;|]{0,60}|(?:^|[\n;&|`(]|\bthen|\bdo|&&)\s*|(?:^|\s)\.\s+)$/;

/**
 * The words that show a download reaching an interpreter in `view` (lower case, look-alike letters
 * as Latin ones), or null; `native` is the same text with its scripts kept, where the words of
 * other languages are read. See the file's comment for the forms.
 */
export function fetchThenExecute(view: string, native: string = view): string | null {
  // One search for any download or fetching call first: most text has none (shared/trust/any-match.ts).
  if (ANY_FETCH(view)) {
    const found = fetchedThenRun(view);
    if (found) return found;
  }
  if (/\bhttps?:\/\/|\bftp:\/\//.test(native)) {
    for (const pattern of DOWNLOAD_THEN_RUN) {
      const match = pattern.exec(native);
      if (match) return match[0];
    }
  }
  return null;
}

/** Whether a view has any of what {@link fetchedThenRun} reads: a piped download, a fetch evaluated, a download. */
const ANY_FETCH = anyMatch([PIPED, ...FETCH_EVAL, DOWNLOAD]);

/** A download piped into an interpreter, a fetch evaluated, or a download saved and run, in `view`. */
function fetchedThenRun(view: string): string | null {
  const piped = PIPED.exec(view);
  if (piped) return piped[0];
  for (const pattern of FETCH_EVAL) {
    const match = pattern.exec(view);
    if (match) return match[0];
  }
  return savedThenRun(view);
}

/** A download saved to a file that is run anywhere in the text (before or after it): both commands. */
function savedThenRun(view: string): string | null {
  let count = 0;
  for (const download of view.matchAll(DOWNLOAD)) {
    if (++count > MAX_DOWNLOADS) break;
    const command = download[0];
    for (const file of savedFiles(command)) {
      const run = runOf(view, file, download.index ?? 0, command.length);
      if (run) return `${command.trim().slice(0, 120)} … ${run}`;
    }
  }
  return null;
}

/** The base names of the files a download command saves to (the named output, else the URL's file). */
function savedFiles(command: string): string[] {
  const names = new Set<string>();
  if (!REMOTE.test(command)) return [];
  const called = CALL_SAVED.exec(command)?.[1];
  if (called) names.add(baseName(called));
  for (const m of command.matchAll(SAVED_TO)) {
    const target = m[1] ?? '';
    if (/^-|^\/dev\/|^https?:/.test(target) || target === '-') continue;
    names.add(baseName(target));
  }
  const url = URL_FILE.exec(command)?.[1];
  if (url) names.add(url);
  return [...names].filter((n) => n.length >= 2 && /[a-z]/.test(n));
}

function baseName(path: string): string {
  const parts = path.split(/[/\\]/);
  return parts[parts.length - 1] ?? path;
}

/**
 * The words that run `file` somewhere in `view` outside the download itself: the file named after
 * an interpreter, `chmod`, `source` or a run verb, or invoked as a command by its path (`./x.sh`,
 * `/tmp/x.sh`, `.\x.ps1` at the start of a command); null when it is never run.
 */
function runOf(view: string, file: string, downloadAt: number, downloadLength: number): string | null {
  let from = 0;
  for (let n = 0; n < MAX_MENTIONS; n++) {
    const at = view.indexOf(file, from);
    if (at < 0) return null;
    from = at + file.length;
    if (at >= downloadAt && at < downloadAt + downloadLength) continue;
    // A mention is the file itself, not a longer name that ends with it (`setup.sh.bak`).
    if (
      /[\w.-]/.test(view.charAt(at + file.length)) &&
      !/^\.\s/.test(view.slice(at + file.length, at + file.length + 2))
    )
      continue;
    const lineStart = view.lastIndexOf('\n', at) + 1;
    const before = view.slice(Math.max(lineStart, at - 120), at);
    // The path the file is reached by (`/tmp/`, `./`, `.\`, `~/`), then what stands before it.
    const path = /[^\s"'`(=]*$/.exec(before)?.[0] ?? '';
    const head = before.slice(0, before.length - path.length);
    if (RUNS_BEFORE.test(head) && (path !== '' || !/(?:^|[\n;&|`(]|\bthen|\bdo|&&)\s*$/.test(head)))
      return view.slice(Math.max(lineStart, at - 60), at + file.length).trim();
  }
  return null;
}
