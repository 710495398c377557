/**
 * Secret-looking paths and when one may enter a checkpoint's working set. The working set is
 * restated to the agent after every compaction as "the files you worked with": a credentials file
 * named there invites the agent to open it again. Tool output is anyone's text (a README, a web
 * page, an error message written by an attacker), so it must not be able to put such a path there.
 *
 * The rule ({@link secretPathAllowed}): a secret path enters the working set only when
 * 1. the agent itself named it in its own turn (a tool call, or an assistant message: agents that
 *    write their commands as text act there), and
 * 2. the user's own words asked for it: a user request or answer (not a tool result, not a harness
 *    message, not text that reads as an injection) names the path, its file name, or the kind of
 *    secret it is ("ssh", "aws", "env file", "pgpass"...), in the same messages or in what the
 *    previous checkpoint kept of the user's words (goal, instructions, last request).
 *
 * A path mentioned only in tool output, or only by the assistant, stays out; the messages
 * themselves are archived whole, so nothing is lost, only not pointed at. Pure.
 */
import type { Message } from '../contract/message.ts';
import { isUserWords } from '../text/user-messages.ts';
import { userMessageReadsAsInjection } from './relayed.ts';

/** Folders whose every file is a secret, by their name (lower case). */
const SECRET_DIRS = new Set(['.ssh', '.aws', '.gnupg', '.kube', '.azure', '.password-store', '.docker']);

/** File names that hold credentials (lower case). */
const SECRET_NAMES = new Set([
  'id_rsa',
  'id_dsa',
  'id_ecdsa',
  'id_ed25519',
  'credentials',
  'credentials.json',
  'credentials.yml',
  'credentials.yaml',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.htpasswd',
  '.envrc',
  'secrets.json',
  'secrets.yml',
  'secrets.yaml',
  'shadow',
]);

/** Extensions of private keys and key stores (lower case, without the dot). */
const SECRET_EXTENSIONS = new Set(['pem', 'key', 'p12', 'pfx', 'jks', 'keystore', 'kdbx']);

/** `.env` files that are templates, not secrets. */
const ENV_TEMPLATE = /^\.env\.(?:example|sample|template|dist|defaults?|schema)$/;

/** The file name and folders of a path, lower case. */
function segmentsOf(path: string): string[] {
  return path
    .toLowerCase()
    .split(/[\\/]+/)
    .filter((s) => s.length > 0 && s !== '~');
}

/**
 * Whether a path names a secret: anything under `~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.kube`,
 * `~/.azure`, `~/.docker`; a `.env` file (`.env`, `.env.local`; not `.env.example` and the like);
 * `id_rsa` and its kin (not their `.pub`), `credentials`, `.netrc`, `.pgpass`, `.git-credentials`,
 * `.npmrc`, `.pypirc`, `secrets.*`, `/etc/shadow`, `service-account*.json`; a private key or key
 * store (`*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`, `*.keystore`, `*.kdbx`).
 */
export function isSecretPath(path: string): boolean {
  if (typeof path !== 'string' || path.length === 0) return false;
  const segments = segmentsOf(path);
  const name = segments[segments.length - 1] ?? '';
  if (name.endsWith('.pub')) return false;
  if (segments.slice(0, -1).some((s) => SECRET_DIRS.has(s)) || SECRET_DIRS.has(name)) return true;
  if (/^\.env(?:\.[\w.-]+)?$/.test(name)) return !ENV_TEMPLATE.test(name);
  if (SECRET_NAMES.has(name) || /^service[-_]?account[\w.-]*\.json$/.test(name)) return true;
  const dot = name.lastIndexOf('.');
  return dot > 0 && SECRET_EXTENSIONS.has(name.slice(dot + 1));
}

/** The words by which a user names a secret path: its file name, and the kind of secret it is. */
function namesOf(path: string): string[] {
  const segments = segmentsOf(path);
  const name = segments[segments.length - 1] ?? '';
  const words = new Set<string>([name, name.replace(/^[._]/, '')]);
  for (const s of segments) if (SECRET_DIRS.has(s)) words.add(s.slice(1));
  if (/^\.env/.test(name)) for (const w of ['dotenv', 'env file', 'environment file', '.env']) words.add(w);
  if (/^id_/.test(name)) words.add('ssh');
  const dot = name.lastIndexOf('.');
  if (dot > 0 && SECRET_EXTENSIONS.has(name.slice(dot + 1))) {
    for (const w of [name.slice(dot + 1), 'private key', 'certificate', 'tls', 'ssl']) words.add(w);
  }
  return [...words].filter((w) => w.length >= 3);
}

/** Whether `text` (lower case) holds `word` as a word of its own. */
function mentions(text: string, word: string): boolean {
  let from = 0;
  for (;;) {
    const at = text.indexOf(word, from);
    if (at < 0) return false;
    const before = text.charAt(at - 1);
    const after = text.charAt(at + word.length);
    if (!/[\p{L}\p{N}_]/u.test(before) && !/[\p{L}\p{N}_]/u.test(after)) return true;
    from = at + 1;
  }
}

/** What a run of messages says about who named a path: the agent's turns and the user's own words. */
export interface PathWitnesses {
  /** Texts of the agent's own turns (tool calls and assistant messages), lower case. */
  agent: string[];
  /** Texts of the user's own words (requests and answers that do not read as injections), lower case. */
  user: string[];
}

/**
 * The witnesses of a run of messages, with `userWords` (what an earlier checkpoint kept of the
 * user's words: goal, instructions, last request) counted as the user's.
 */
export function pathWitnesses(
  messages: readonly Message[],
  userWords: readonly string[] = [],
): PathWitnesses {
  const agent: string[] = [];
  const user: string[] = userWords.filter((w) => typeof w === 'string').map((w) => w.toLowerCase());
  for (const m of messages) {
    if (typeof m?.content !== 'string') continue;
    if (m.role === 'assistant' && m.kind !== 'summary') agent.push(m.content.toLowerCase());
    else if (isUserWords(m) && !userMessageReadsAsInjection(m.content)) user.push(m.content.toLowerCase());
  }
  return { agent, user };
}

/**
 * Whether `path` may enter the working set (the file's rule): any path that is not a secret; a
 * secret one when the agent named it in its own turn and the user's own words asked for it.
 */
export function secretPathAllowed(path: string, witnesses: PathWitnesses): boolean {
  if (!isSecretPath(path)) return true;
  const lower = path.toLowerCase();
  const tail = segmentsOf(path).slice(-2).join('/');
  const agentActed = witnesses.agent.some((t) => t.includes(lower) || (tail !== '' && t.includes(tail)));
  if (!agentActed) return false;
  const names = namesOf(path);
  return witnesses.user.some((t) => t.includes(lower) || names.some((w) => mentions(t, w)));
}
