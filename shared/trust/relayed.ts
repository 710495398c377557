/**
 * Text a user relays: a forwarded mail, a quoted reply, a pasted document. The user's message is
 * their own framing ("Can you handle this?") plus the relayed text, which is data: it states what
 * someone else wrote, and has no more say over the agent than a tool result. A summary takes the
 * user's goal and rules from the framing, and reads the relayed part for injections as it reads
 * tool output (shared/trust/injection.ts, source `untrusted`). Pure.
 *
 * A part is relayed when it shows it (any language):
 * - `mail`: a forward or reply marker line ("---------- Forwarded message ----------", "Begin
 *   forwarded message:", "-----Original Message-----", "Doorgestuurd bericht", "Weitergeleitete
 *   Nachricht", "Message transféré") or a sender header (`From:`/`Van:`/`Von:`/`De:`) with another
 *   header close after it (`Subject:`/`Onderwerp:`/`Betreff:`/`Objet:`…): from there to the end of
 *   the message;
 * - `quote`: a run of lines quoted with `>`;
 * - `paste`: a fenced block (```), or, after a short framing line that ends with a colon, a text
 *   of {@link PASTE_CHARS} characters or more.
 *
 * Every pattern reads one line at a time and is linear.
 */
import { detectInjection, type InjectionFinding } from './injection.ts';
import { createTextMemo } from './text-memo.ts';

/** How a relayed part shows it is relayed (see the file's comment). */
export type RelayKind = 'mail' | 'quote' | 'paste';

/** A relayed part of a user message. */
export interface RelayedPart {
  kind: RelayKind;
  /** The relayed text, its quote marks and fences removed. */
  text: string;
  /** The lines as the message has them (quote marks, fences). */
  raw: string;
}

/** A run of a user message: the user's own lines, or a relayed part. */
export type Segment = { kind: 'own'; text: string; raw: string } | RelayedPart;

/** A user message split into the user's own words and what it relays. */
export interface SplitMessage {
  /** The user's own words, the relayed parts left out (each line kept in order). */
  own: string;
  relayed: RelayedPart[];
  /** The whole message as runs in order: own lines and relayed parts. */
  segments: Segment[];
}

/** Shortest text after a framing line that counts as pasted, in characters. */
export const PASTE_CHARS = 400;

/** Longest framing line that introduces a paste, in characters. */
const FRAMING_CHARS = 200;

/** A forward or reply marker line, in the languages of the detector's lexicon. */
const FORWARD_MARKER =
  /^\s*(?:[-=_*]{2,}\s*)?(?:forwarded\s+message|original\s+message|begin\s+forwarded\s+message|doorgestuurd\s+bericht|oorspronkelijk\s+bericht|weitergeleitete\s+nachricht|ursprüngliche\s+nachricht|message\s+transféré|message\s+d'origine|mensaje\s+reenviado|mensaje\s+original|mensagem\s+encaminhada|mensagem\s+original|messaggio\s+inoltrato|messaggio\s+originale|пересылаемое\s+сообщение|пересланное\s+сообщение|исходное\s+сообщение|转发的邮件|原始邮件|転送されたメッセージ|元のメッセージ)\s*:?\s*(?:[-=_*]{2,})?\s*$/i;

/** A mail header line: `From:`, `Van:`, `Von:`, `De:`, `Subject:`, `Onderwerp:`… */
const MAIL_HEADER =
  /^\s*(?:from|to|cc|sent|date|subject|reply-to|van|aan|verzonden|datum|onderwerp|von|an|gesendet|betreff|de|à|envoyé|objet|para|enviado|asunto|assunto|data|da|a|inviato|oggetto|от|кому|отправлено|дата|тема|发件人|收件人|主题|日期|差出人|宛先|件名|送信日時)\s*[:：]\s*\S/i;

/** The header line a forwarded mail opens with: who sent it. */
const SENDER_HEADER = /^\s*(?:from|van|von|de|da|от|发件人|差出人)\s*[:：]\s*\S/i;

/** Header lines after the sender's read for a second one. */
const HEADER_LOOKAHEAD = 4;

/** A line quoted with `>`. */
const QUOTED = /^\s*>/;

/** A fence line of a code block. */
const FENCE = /^\s*```/;

/**
 * The user's own words and the relayed parts of a user message (see the file's comment). A message
 * with no relay marker is all the user's own words.
 */
export function splitRelayed(text: string): SplitMessage {
  if (typeof text !== 'string' || text.length === 0) return { own: '', relayed: [], segments: [] };
  const lines = text.split('\n');
  const own: string[] = [];
  const segments: Segment[] = [];
  const relay = (part: RelayedPart) => {
    segments.push(part);
  };
  let fence: string[] | null = null;
  let quote: string[] = [];
  let quoteRaw: string[] = [];
  const endQuote = () => {
    if (quote.length > 0) relay({ kind: 'quote', text: quote.join('\n'), raw: quoteRaw.join('\n') });
    quote = [];
    quoteRaw = [];
  };
  const ownLine = (line: string) => {
    own.push(line);
    const last = segments[segments.length - 1];
    if (last?.kind === 'own') {
      last.text += `\n${line}`;
      last.raw = last.text;
    } else segments.push({ kind: 'own', text: line, raw: line });
  };
  const fenced = (body: string[], closed: boolean) =>
    relay({
      kind: 'paste',
      text: body.join('\n'),
      raw: ['```', ...body, ...(closed ? ['```'] : [])].join('\n'),
    });
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (fence !== null) {
      if (FENCE.test(line)) {
        fenced(fence, true);
        fence = null;
      } else fence.push(line);
      continue;
    }
    if (FENCE.test(line)) {
      endQuote();
      fence = [];
      continue;
    }
    if (startsMail(lines, i)) {
      endQuote();
      const mail = lines.slice(i).join('\n');
      relay({ kind: 'mail', text: mail, raw: mail });
      break;
    }
    if (QUOTED.test(line)) {
      quote.push(line.replace(/^\s*>\s?/, ''));
      quoteRaw.push(line);
      continue;
    }
    endQuote();
    if (pasteFollows(lines, i, own)) {
      ownLine(line);
      const pasted = lines.slice(i + 1).join('\n');
      relay({ kind: 'paste', text: pasted, raw: pasted });
      break;
    }
    ownLine(line);
  }
  endQuote();
  if (fence !== null) fenced(fence, false);
  const relayed = segments.filter((p): p is RelayedPart => p.kind !== 'own');
  return { own: own.join('\n').trim(), relayed, segments };
}

/**
 * Whether a forwarded mail starts at line `i`: a marker line, or a sender header followed within
 * {@link HEADER_LOOKAHEAD} lines by another header (`From:` then `Subject:`).
 */
function startsMail(lines: string[], i: number): boolean {
  const line = lines[i] ?? '';
  if (FORWARD_MARKER.test(line)) return true;
  if (!SENDER_HEADER.test(line)) return false;
  for (let k = i + 1; k <= i + HEADER_LOOKAHEAD && k < lines.length; k++)
    if (MAIL_HEADER.test(lines[k] ?? '')) return true;
  return false;
}

/**
 * Whether line `i` is a short framing line of the user's own (the first they wrote) that ends with
 * a colon and introduces a long text without relay markers of its own.
 */
function pasteFollows(lines: string[], i: number, ownSoFar: string[]): boolean {
  const line = (lines[i] ?? '').trim();
  if (ownSoFar.some((l) => l.trim()) || line.length === 0 || line.length > FRAMING_CHARS) return false;
  if (!/[:：]$/.test(line)) return false;
  let rest = 0;
  for (let k = i + 1; k < lines.length && rest < PASTE_CHARS; k++) rest += (lines[k] ?? '').length + 1;
  return rest >= PASTE_CHARS;
}

/** A relayed part that reads as a prompt injection, with what was found. */
export interface RelayedFinding {
  part: RelayedPart;
  findings: InjectionFinding[];
}

/**
 * The injections a user message carries: those of its own words read as the user's
 * (`source: 'user'`), then each relayed part read as untrusted text. Empty for an ordinary message.
 */
export function userMessageInjections(text: string): {
  own: InjectionFinding[];
  relayed: RelayedFinding[];
} {
  const split = splitRelayed(text);
  const own = detectInjection(split.own, { source: 'user' });
  const relayed: RelayedFinding[] = [];
  for (const part of split.relayed) {
    const findings = detectInjection(part.text);
    if (findings.length > 0) relayed.push({ part, findings });
  }
  return { own, relayed };
}

/**
 * Characters of user messages {@link userMessageReadsAsInjection} keeps its answers for (about 2 MB
 * of keys): a job reads the checkpoint's last user request again at each render of its context, and
 * a long paste is split and read each time otherwise.
 */
const READS_MEMO_CHARS = 1_000_000;
const readsMemo = createTextMemo<boolean>(READS_MEMO_CHARS);

/** Whether a user message reads as, or relays, a prompt injection ({@link userMessageInjections}). */
export function userMessageReadsAsInjection(text: string): boolean {
  if (typeof text !== 'string' || text.length === 0) return false;
  return readsMemo.get(text, () => {
    const found = userMessageInjections(text);
    return found.own.length > 0 || found.relayed.length > 0;
  });
}

/** What a note names each kind of relayed part. */
const RELAY_NAMES: Readonly<Record<RelayKind, string>> = {
  mail: 'a forwarded mail',
  quote: 'a quoted text',
  paste: 'a pasted text',
};

/**
 * A user message as a summary may take the user's words from it: the own lines and the clean
 * pastes (a log, a code block, a copied task) as they are; a forwarded mail, a quote, and any part
 * that reads as a prompt injection replaced by a note naming it as data (`[relayed: a forwarded
 * mail, seq 7 — data, not the user's words]`), so none of their wording becomes the goal or a rule.
 */
export function userWordsOf(text: string, seq: number | null = null): string {
  const where = seq === null ? '' : `, seq ${seq}`;
  return splitRelayed(text)
    .segments.map((segment) => {
      if (segment.kind === 'own') return segment.raw;
      if (segment.kind === 'paste' && detectInjection(segment.text).length === 0) return segment.raw;
      return `[relayed: ${RELAY_NAMES[segment.kind]}${where} — data, not the user's words]`;
    })
    .join('\n');
}
