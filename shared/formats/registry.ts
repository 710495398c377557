/**
 * The session formats, by name, and what only the registry knows because it sees them all: which
 * format a message belongs to, and which format a transcript file is. A session's snapshot and
 * context read carry its format (`sessions.format`); every caller takes the format's rules from
 * here. A format's own module never names another format's words: each declares its own
 * vocabulary (format.ts, `FormatVocabulary`), and the registry compares them.
 */

import { InvalidInputError, printable, TranscriptError } from '../contract/errors.ts';
import type { MediaRef } from '../contract/media-refs.ts';
import { type PdfPageCounter, pdfPageCount } from '../contract/media-tokens.ts';
import { parseJsonLine, type TranscriptFormat } from '../contract/native-transcripts.ts';
import {
  DEFAULT_SESSION_FORMAT,
  SESSION_FORMATS,
  type SessionFormat as SessionFormatName,
} from '../contract/session-format.ts';
import { aiSdkFormat } from './ai-sdk/format.ts';
import { anthropicFormat } from './anthropic/format.ts';
import type { FormatVocabulary, SessionFormat, TranscriptReader } from './format.ts';
import { openaiChatFormat } from './openai-chat/format.ts';
import { openaiResponsesFormat } from './openai-responses/format.ts';

/** Every session format, by name. */
export const SESSION_FORMAT_RULES: Readonly<Record<SessionFormatName, SessionFormat>> = {
  anthropic: anthropicFormat,
  'openai-chat': openaiChatFormat,
  'openai-responses': openaiResponsesFormat,
  'ai-sdk': aiSdkFormat,
};

/**
 * The images and documents of a stored row of a session of `format`, as references by `seq` and
 * place (shared/contract/media-refs.ts), read by the format ({@link SessionFormat.mediaOf}). Never
 * throws: content the format cannot read has none.
 * @param stored the row's stored content (`content_blocks`).
 * @param pdfPages counts a base64 PDF's pages for its tokens.
 */
export function mediaRefsOf(
  format: SessionFormatName,
  seq: number,
  stored: unknown,
  pdfPages: PdfPageCounter = pdfPageCount,
): MediaRef[] {
  try {
    return SESSION_FORMAT_RULES[format].mediaOf(stored, pdfPages).map((f, index) => ({ ...f, seq, index }));
  } catch {
    return [];
  }
}

/** The formats in {@link SESSION_FORMATS}' order, the default first. */
const ALL: readonly SessionFormat[] = SESSION_FORMATS.map((name) => SESSION_FORMAT_RULES[name]);

/** One word of a message, where it is, and how each vocabulary is asked whether it has it. */
interface Word {
  field: string;
  shown: string;
  kind: keyof FormatVocabulary['names'];
  has: (v: FormatVocabulary) => boolean;
}

/** The words of a message's top level, in the order an error names them (see `FormatVocabulary`). */
function wordsOf(value: unknown, where: string): Word[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const m = value as Record<string, unknown>;
  const words: Word[] = [];
  if (typeof m.type === 'string') {
    const type = m.type;
    words.push({
      field: `${where}.type`,
      shown: `"${type}"`,
      kind: 'item',
      has: (v) => v.itemTypes.has(type),
    });
  }
  if (typeof m.role === 'string') {
    const role = m.role;
    words.push({ field: `${where}.role`, shown: `"${role}"`, kind: 'role', has: (v) => v.roles.has(role) });
  }
  for (const name of Object.keys(m)) {
    words.push({ field: `${where}.${name}`, shown: name, kind: 'field', has: (v) => v.fields.has(name) });
  }
  if (m.content === null) {
    words.push({ field: `${where}.content`, shown: '', kind: 'nullContent', has: (v) => v.nullContent });
  }
  if (Array.isArray(m.content)) {
    m.content.forEach((part: unknown, j) => {
      const type = (part as { type?: unknown } | null)?.type;
      if (typeof type !== 'string') return;
      words.push({
        field: `${where}.content[${j}].type`,
        shown: `"${type}"`,
        kind: 'part',
        has: (v) => v.partTypes.has(type),
      });
    });
  }
  return words;
}

/** How a word reads in an error: `"tool" is a Chat Completions role`, `tool_calls is a … field`. */
function wordSays(word: Word, owners: readonly SessionFormat[]): string {
  const names = owners.map((f) => f.vocabulary.names[word.kind]).join(' or ');
  return word.kind === 'nullContent'
    ? `${word.field}: a null content is ${names}`
    : `${word.field}: ${word.shown} is ${names}`;
}

/**
 * What shows that `value` is a message of another format than `format`, as `<field>: <why>`, or
 * null: its first word (its `type`, `role`, a field, null `content`, a content part type) that
 * `format` lacks and another format has. Words no format has are left to `format`'s own
 * validation, which names what is wrong with them. Formats share roles, so a role shows less than
 * a content part: when a part type only one format has shows the message's format and that format
 * lacks the message's role (an AI SDK tool message's `tool`, which the AI SDK leaves to Chat
 * Completions), the role is no other format's sign, and the parts are read instead.
 * @param where the message's field, for the answer (`messages[2]`).
 */
export function foreignWord(format: SessionFormatName, value: unknown, where: string): string | null {
  const own = SESSION_FORMAT_RULES[format].vocabulary;
  const words = wordsOf(value, where);
  const shown = shownByParts(words);
  for (const word of words) {
    if (word.has(own)) continue;
    if (word.kind === 'role' && shown !== undefined && !word.has(shown.vocabulary)) continue;
    const owners = ALL.filter((f) => f.name !== format && word.has(f.vocabulary));
    if (owners.length > 0) return wordSays(word, owners);
  }
  return null;
}

/** The format a message's content parts show: the first part type that only one format has. */
function shownByParts(words: readonly Word[]): SessionFormat | undefined {
  for (const word of words) {
    if (word.kind !== 'part') continue;
    const owners = ALL.filter((f) => word.has(f.vocabulary));
    if (owners.length === 1) return owners[0];
  }
  return undefined;
}

/**
 * Whether `value` reads as a message of `format` and not of the default format: it has a word
 * `format` has and the default lacks (or, for a format of typed items, a `type` the default has
 * not), and none `format` lacks that another has. The HTTP API's
 * message union tells the formats apart by it (a message with no such word reads alike in both,
 * and the session's format decides).
 */
export function readsAs(format: SessionFormatName, value: unknown): boolean {
  const own = SESSION_FORMAT_RULES[format].vocabulary;
  const base = SESSION_FORMAT_RULES[DEFAULT_SESSION_FORMAT].vocabulary;
  if (foreignWord(format, value, '') !== null) return false;
  if (wordsOf(value, '').some((word) => word.has(own) && !word.has(base))) return true;
  // An item type no format has (a misspelt one, one newer than this code): the typed format's own
  // check names what is wrong with it, where the default's could only say that its role is missing.
  const type = (value as { type?: unknown } | null)?.type;
  return own.openItemTypes && typeof type === 'string' && !base.itemTypes.has(type);
}

/**
 * The format an append's messages most likely are: the first format (the default first) in whose
 * vocabulary every message fits; the default when none fits them all. A guess, to validate before
 * the session's format is read: the append checks it against the session's.
 */
export function likelyFormat(values: readonly unknown[]): SessionFormatName {
  const fits = ALL.find((f) => values.every((v, i) => foreignWord(f.name, v, `messages[${i}]`) === null));
  return fits?.name ?? DEFAULT_SESSION_FORMAT;
}

/**
 * The error for a message of another format than its session's: what shows it, and the session's
 * format.
 * @param marker `<field>: <why>` ({@link foreignWord}).
 */
export function formatMismatch(
  marker: string,
  sessionId: string,
  format: SessionFormatName,
): InvalidInputError {
  const expected = SESSION_FORMAT_RULES[format].vocabulary.messages;
  return new InvalidInputError(
    `${marker}, but session "${printable(sessionId)}" has format "${format}" (its messages are ${expected}); ` +
      'one session holds one format: create another session for the other',
  );
}

/** A transcript kind a format reads, with the format its session is created in. */
export interface TranscriptKind {
  name: TranscriptFormat;
  format: SessionFormatName;
  reader: TranscriptReader;
}

/** Every transcript kind of every format, in the registry's order. */
const KINDS: readonly TranscriptKind[] = ALL.flatMap((f) =>
  Object.entries(f.transcripts).map(([name, reader]) => ({
    name: name as TranscriptFormat,
    format: f.name,
    reader,
  })),
);

/**
 * The transcript kind of a name `--format` takes, or undefined for `corpus` (compactor's own
 * JSONL, which no provider format reads) and for a name no format reads.
 */
export function transcriptKind(name: string): TranscriptKind | undefined {
  return KINDS.find((k) => k.name === name);
}

/**
 * The transcript format of a file: a kind written as one JSON array whose reader takes the array
 * (a session's Responses items), else read off its first non-empty line: the first kind sure of
 * it, a corpus line (`seq` or `kind`), the first kind for which it may be.
 * @throws {TranscriptError} when the file is empty, its first line is no JSON object, or no
 *   format detects it (name it with `--format`).
 */
export function detectFormat(text: string, source: string): TranscriptFormat {
  const array = detectArrayFormat(text);
  if (array) return array;
  const lines = text.split('\n');
  const index = lines.findIndex((l) => l.trim() !== '');
  if (index < 0) throw new TranscriptError(`${source}: no messages`);
  const value = parseJsonLine(lines[index] as string, source, index + 1);
  const firstSure = KINDS.find((k) => k.reader.detects(value) === 'yes');
  if (firstSure) return firstSure.name;
  if ('seq' in value || 'kind' in value) return 'corpus';
  const maybe = KINDS.find((k) => k.reader.detects(value) === 'maybe');
  if (maybe) return maybe.name;
  throw new TranscriptError(
    `${source}:${index + 1}: cannot tell the format: expected a corpus line (seq, kind), ${KINDS.map((k) => k.reader.looksLike).join(', ')}; name it with --format`,
  );
}

/** The kind of a file that is one JSON array its reader takes (see {@link detectFormat}), or null. */
export function detectArrayFormat(text: string): TranscriptFormat | null {
  const whole = text.trimStart().startsWith('[') ? jsonArrayOf(text) : null;
  return (whole && KINDS.find((k) => k.reader.detectsArray?.(whole) === true)?.name) ?? null;
}

/** `text` parsed as a JSON array, or null when it is not one. */
function jsonArrayOf(text: string): unknown[] | null {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Every transcript format name the formats read, `corpus` first: what `TRANSCRIPT_FORMATS`
 * (shared/contract/native-transcripts.ts) lists, which the CLI's help is written from.
 */
export const TRANSCRIPT_KIND_NAMES: readonly string[] = ['corpus', ...KINDS.map((k) => k.name)];
