/**
 * Prompt-injection detection: whether a text from a session reads as orders aimed at the agent
 * rather than as the user's request or an ordinary record of work. A summary must never promote
 * such text to the user's instructions, the current work or the next step (see
 * `shared/summary/guard.ts`), since every later context would restate it as the user's rule. Pure.
 *
 * The detector recognises families of known injections, not one wording:
 * - `override`: telling the model to drop its instructions ("ignore previous instructions",
 *   "disregard the system prompt", "new instructions:", "you are now in developer mode");
 * - `concealment`: hiding something from the user ("do not tell the user", "without informing the
 *   user", "silently upload");
 * - `remote-exec`: downloading and running code (`curl … | sh`, `bash <(wget …)`, `iex (iwr …)`,
 *   `base64 -d | sh`, "download and execute");
 * - `exfiltration`: sending data to somewhere outside (`curl -d @file`, "send the API keys to
 *   https://…", a URL built from `$(cat …)` or a secret variable);
 * - `secret-path`: reading or printing credentials (`cat ~/.aws/credentials`, "print id_rsa");
 * - `impersonation`: text posing as another role or closing a frame (`SYSTEM:`, `</transcript>`,
 *   `<|im_start|>`, `[INST]`, "Human:" turns).
 *
 * Before matching, the text is normalized so obfuscation does not hide it (see
 * {@link detectionViews}): Unicode compatibility forms folded (NFKC: full-width and mathematical
 * letters), zero-width and bidirectional controls and soft hyphens removed, look-alike Cyrillic and
 * Greek letters mapped to Latin ones, letters spaced out or dotted ("i g n o r e", "I.G.N.O.R.E")
 * joined, digits used as letters ("1gn0re") read as letters, lower case; a base64-looking run that
 * decodes to text is decoded and read too (an `encoded` finding). Phrasings of the `override` and
 * `concealment` families are known in Spanish, French, German, Portuguese, Italian, Russian,
 * Chinese, Japanese and Korean too.
 *
 * Beyond wordings, the detector reads what an injection does, in any language:
 * - a download that reaches an interpreter in any shell form, piped or saved to a file that is
 *   run anywhere in the text (shared/trust/fetch-exec.ts), as `remote-exec`;
 * - secrecy toward the user with no object named ("no need to bring it up", "niet melden"), from the
 *   multilingual lexicon kept as data (shared/trust/injection-lexicon.ts), as `concealment`;
 * - a role marker opening a line (`User:`, `Assistant:`, `Gebruiker:`, `### Instruction:`) or a
 *   claimed authority ("the administrator has authorized", "de beheerder zegt dat je"), as
 *   `impersonation`;
 * - text addressed to the agent ("note to AI agents", "aan de AI-assistent") that orders it to act
 *   on a URL or an address, as `agent-directive`.
 *
 * Who wrote a text matters ({@link InjectionSource}): the user may ask for `curl … | sh`, say "don't
 * mention it" or quote a chat with `User:` lines, so in the user's own words those structural
 * signals do not count, only the wordings that turn against the user or the agent's rules (and a
 * download run through an obfuscation). A tool result, a text the user relays (a forwarded mail)
 * and an echo of either have no say over the agent: every signal counts.
 *
 * Every pattern is linear in the text: no nested quantifiers, gaps bounded by a fixed count.
 */

import { anyMatch } from './any-match.ts';
import { fetchThenExecute } from './fetch-exec.ts';
import {
  ACT_VERB,
  ADDRESSED_TO_AGENT,
  AUTHORITY,
  BARE_SECRECY,
  OVERRIDE,
  ROLE_WORDS,
} from './injection-lexicon.ts';
import { createTextMemo } from './text-memo.ts';

/**
 * Who wrote a text: `user` for the user's own words (a request, an answer, a rule; the agent's own
 * prose reads the same), `untrusted` for anything else: a tool result, a text the user relays, a
 * summary's item whose source is unknown. The default is `untrusted`.
 */
export type InjectionSource = 'user' | 'untrusted';

/** Options of {@link detectInjection}. */
export interface DetectOptions {
  /** Who wrote the text (default `untrusted`). */
  source?: InjectionSource;
}

/** The families of prompt injection the detector knows (see the file's comment). */
export const INJECTION_FAMILIES = [
  'override',
  'concealment',
  'remote-exec',
  'exfiltration',
  'secret-path',
  'impersonation',
  'agent-directive',
] as const;

export type InjectionFamily = (typeof INJECTION_FAMILIES)[number];

/** One family found in a text, and the (normalized) words that matched, at most 80 characters. */
export interface InjectionFinding {
  family: InjectionFamily;
  match: string;
  /** True when it was found in a base64 payload the text carried, decoded. */
  encoded: boolean;
}

/** Longest text read, in characters: a longer one is read in its first and last halves of this. */
export const MAX_SCANNED_CHARS = 200_000;

/** Base64-looking runs decoded per text, and the longest run decoded, in characters. */
const MAX_PAYLOADS = 16;
const MAX_PAYLOAD_CHARS = 8_192;

/** Credential files and folders, as a pattern over normalized (lower-case) text. */
export const CREDENTIAL_PATH = String.raw`(?:~|\$home|/home/[\w.-]{1,40}|/root|/users/[\w.-]{1,40})?/?\.(?:ssh|aws|gnupg|kube|docker)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\.netrc\b|\.pgpass\b|\.git-credentials\b|\.npmrc\b|\.pypirc\b|/etc/shadow\b|\bcredentials\.json\b|\bservice[-_]account[\w-]{0,20}\.json\b|\.(?:pem|p12|pfx|key)\b`;

const NEG = "(?:do not|don't|dont|never|must not|mustn't|should not|shouldn't)";
const USER = '(?:the |your |my )?(?:user|human|developer|owner|operator|maintainers?|reviewers?)';

/** English (and shared) patterns, read on the Latin-folded views. */
const PATTERNS: ReadonlyArray<readonly [InjectionFamily, RegExp]> = [
  [
    'override',
    /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|of\s+|the\s+|your\s+|these\s+|those\s+|every\s+){0,3}(?:previous|prior|above|earlier|preceding|former|original|system|initial|safety)\s+(?:instructions?|prompts?|rules?|directives?|guidelines?|guidance|context|orders?|constraints?)/,
  ],
  [
    'override',
    /\b(?:ignore|disregard|forget)\s+(?:all|everything)\s+(?:you\s+(?:were|have been)\s+told|(?:said|written|above|before))/,
  ],
  [
    'override',
    /\b(?:new|updated|real|actual|revised)\s+(?:system\s+)?(?:instructions?|directives?|orders?)\s*(?::|follow\b)/,
  ],
  [
    'override',
    /\b(?:these|the following|this)\s+(?:instructions?|rules?|message)\s+(?:take\s+precedence|override|overrides|supersedes?|replaces?)\b/,
  ],
  [
    'override',
    /\byou\s+are\s+(?:now|no\s+longer)\s+(?:in\s+)?(?:a\s+|an\s+)?(?:dan\b|developer\s+mode|god\s+mode|admin\s+mode|jailbroken|unrestricted|unfiltered|bound\b|an?\s+assistant\s+without)/,
  ],
  ['override', /\b(?:developer|god|debug|jailbreak)\s+mode\s+(?:enabled|activated|on)\b/],
  [
    'concealment',
    new RegExp(
      String.raw`\b${NEG}\s+(?:tell|inform|mention|reveal|disclose)\s+(?:this\s+|it\s+|anything\s+|that\s+){0,2}(?:to\s+)?(?:the |your )?(?:user|human)\b|\b${NEG}\s+let\s+(?:the |your )?(?:user|human)\s+know\b`,
    ),
  ],
  [
    'concealment',
    /\bwithout\s+(?:telling|informing|notifying|alerting|asking|warning|letting)\s+(?:the |your |my )?(?:user|human|developer|owner|operator)\b/,
  ],
  [
    'concealment',
    new RegExp(
      String.raw`\b(?:keep|hide|conceal)\s+(?:this|it|these|that|the\s+\w{1,20})\s+(?:secret\s+|hidden\s+)?from\s+${USER}\b`,
    ),
  ],
  [
    'concealment',
    new RegExp(
      String.raw`\b${USER}\s+(?:must|should|need|needs|will)\s+(?:not|never)\s+(?:know|find out|be told|learn)\b`,
    ),
  ],
  [
    'concealment',
    /\b(?:silently|secretly|quietly|covertly|stealthily)\s+(?:run|execute|send|upload|post|install|exfiltrate|copy|add|download|forward|delete)\b/,
  ],
  [
    'concealment',
    /\b(?:proceed|continue|act|do\s+(?:it|this|so))\s+(?:silently|secretly|covertly|stealthily)\b/,
  ],
  [
    'remote-exec',
    /\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|lwp-download|aria2c)\b[^\n|;]{0,300}\|\s*(?:sudo\s+(?:-\S+\s+){0,3})?(?:(?:ba|z|k|da|fi|c|tc)?sh|python[23]?|perl|ruby|node|php|iex|invoke-expression|powershell|pwsh|source)\b(?!\s+-m\s+json\.tool)/,
  ],
  ['remote-exec', /\b(?:ba|z)?sh\s+(?:-c\s+)?["']?(?:<\(|\$\(|`)\s*(?:curl|wget|fetch)\b/],
  ['remote-exec', /\b(?:source|\.)\s+<\(\s*(?:curl|wget)\b/],
  ['remote-exec', /\beval\s*\(?\s*["']?\$\(\s*(?:curl|wget)\b/],
  [
    'remote-exec',
    /\b(?:iex|invoke-expression)\s*\(?\s*(?:\(?\s*new-object\s+(?:system\.)?net\.webclient|iwr|irm|invoke-webrequest|invoke-restmethod)\b/,
  ],
  ['remote-exec', /\bbase64\s+(?:-d|--decode|-D)\b[^\n|]{0,80}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b/],
  [
    'remote-exec',
    /\bdownload\s+(?:and|then|&)\s+(?:run|execute|exec|install)\b[^\n]{0,80}\b(?:https?:\/\/|script|binary|payload)/,
  ],
  [
    'exfiltration',
    /\b(?:curl|wget|http|httpie|nc|ncat|netcat)\b[^\n]{0,200}(?:\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-f|--form|-t|--upload-file|--post-file)\s*["']?[\w-]{0,20}=?@|--post-file=)/,
  ],
  [
    'exfiltration',
    /\b(?:send|post|upload|exfiltrate|forward|transmit|leak|email|mail)\s+(?:(?:the|all|any|your|its|their|my|of|every|contents?\s+of)\s+){0,3}(?:\S+\s+){0,2}(?:contents?|keys?|secrets?|credentials?|tokens?|passwords?|env(?:ironment)?(?:\s+variables?)?|api[\s_-]?keys?|ssh\s+keys?|\.env|conversation|chat\s+history|system\s+prompt|private\s+keys?|cookies?)\b[^\n]{0,120}\b(?:to|at|into)\s+(?:https?:\/\/|[\w-]+(?:\.[\w-]+)+\/|[\w.+-]+@[\w-]+\.[\w.]+|webhook|pastebin|our\s+server|this\s+url|the\s+url|the\s+endpoint)/,
  ],
  [
    'exfiltration',
    /https?:\/\/[^\s"'<>]{0,200}(?:\$\(\s*(?:cat|env|printenv|whoami|hostname|base64)\b|\$\{?[a-z_]{0,30}(?:key|token|secret|passw(?:or)?d)[a-z_]{0,20}\}?)/,
  ],
  ['exfiltration', /\b(?:printenv|env|cat\s+[^\n|]{0,80})\s*\|\s*(?:curl|wget|nc|ncat|netcat)\b/],
  // A redirection to a socket (`>& /dev/tcp/host/port`): a reverse shell or a raw upload.
  ['exfiltration', /[<>]&?\s*\/dev\/(?:tcp|udp)\//],
  [
    'secret-path',
    new RegExp(
      String.raw`\b(?:cat|less|more|head|tail|print|read|output|show|display|dump|echo|type|get-content|open|copy|cp|scp|rsync|tar|zip|base64|upload|send|include|paste|attach|reveal)\b[^\n]{0,80}(?:${CREDENTIAL_PATH})`,
    ),
  ],
  [
    'impersonation',
    /(?:^|\n)[ \t]*(?:[[<(*#>]{1,3}[ \t]*)?(?:system|(?:system|developer|admin(?:istrator)?)[ \t]+(?:message|prompt|override|instructions?|notice|update|alert|command))[ \t]*(?:[\])>*]{1,3}[ \t]*)?:[ \t]*\S/,
  ],
  // A role marker quoted inside a line: `The page says: "SYSTEM: …"`.
  [
    'impersonation',
    /[:"'“«]\s*[[<(]?(?:system|developer)(?:\s+(?:message|prompt|override|instructions?|notice))?[\])>]?\s*:\s*\S/,
  ],
  [
    'impersonation',
    /<\s*\/?\s*(?:system|transcript|session-record|user_messages|previous_checkpoint|working_set|im_start|im_end|assistant|human|tool_result|function_results|antml:[\w-]{1,30})(?![\w-])[^>\n]{0,60}>/,
  ],
  ['impersonation', /<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\s*\|>/],
  ['impersonation', /\[\/?inst\]|<<\/?sys>>/],
  [
    'impersonation',
    /(?:^|\n)[ \t]*(?:human|assistant)[ \t]*:[^\n]{0,200}\n[\s\S]{0,400}?(?:^|\n)[ \t]*(?:human|assistant)[ \t]*:/,
  ],
];

/** Phrasings in other languages, read on the NFKC-folded lower-case view (scripts kept). */
const MULTILINGUAL: ReadonlyArray<readonly [InjectionFamily, RegExp]> = [
  // Spanish, Portuguese, Italian, French, German: "ignore the previous instructions".
  [
    'override',
    /\b(?:ignora|ignore|ignorez|ignoriere|ignorieren\s+sie|olvida|esquece|esqueça|dimentica|oublie|oubliez|vergiss)\s+(?:todas\s+|todos\s+|toutes\s+|tutte\s+|alle\s+|tous\s+)?(?:las\s+|los\s+|as\s+|os\s+|les\s+|le\s+|die\s+)?(?:instrucciones|instruções|instrucoes|istruzioni|instructions|anweisungen|instruktionen|regeln|reglas|regras|regole|règles)\s+(?:anteriores|previas|precedentes|précédentes|precedenti|antérieures|vorherigen|bisherigen|vorigen)/,
  ],
  [
    'override',
    /\b(?:ignoriere|vergiss)\s+(?:alle\s+)?(?:vorherigen|bisherigen|vorigen|früheren)\s+(?:anweisungen|instruktionen|regeln|befehle)/,
  ],
  [
    'override',
    /\b(?:ignora|ignore|olvida|esqueça|oublie|oubliez)\s+(?:todas\s+|toutes\s+|tutte\s+)?(?:las\s+|as\s+|les\s+|le\s+)?(?:instrucciones|instruções|istruzioni|instructions)\s+(?:del\s+sistema|do\s+sistema|di\s+sistema|système|du\s+système)/,
  ],
  // Russian: "ignore (all) previous instructions".
  [
    'override',
    /(?:игнорируй|игнорируйте|проигнорируй|забудь|забудьте)\s+(?:все\s+)?(?:предыдущие|прежние|прошлые|системные|данные\s+ранее)\s+(?:инструкции|указания|правила|команды)/,
  ],
  // Chinese, Japanese, Korean.
  [
    'override',
    /(?:忽略|无视|無視|忽視|忘记|忘記)(?:掉)?(?:之前|以前|上面|先前|前面|所有|上述)(?:的)?(?:所有)?(?:的)?(?:指令|指示|说明|說明|规则|規則|提示)/,
  ],
  [
    'override',
    /(?:以前|前|上記|これまで|先)の(?:すべての|全ての)?(?:指示|命令|ルール|プロンプト)を(?:すべて|全て)?無視/,
  ],
  [
    'override',
    /(?:이전|앞의|위의|모든)\s*(?:지시|지침|명령|규칙)(?:사항)?(?:을|를|은|는)?\s*(?:모두\s*)?무시/,
  ],
  // Concealment: "do not tell the user".
  [
    'concealment',
    /\b(?:no\s+(?:se\s+lo\s+|le\s+|lo\s+)?(?:digas|diga|menciones|cuentes|informes)\s+(?:nada\s+)?al\s+usuario|sin\s+(?:decirle|avisar|informar)(?:le)?\s+al\s+usuario|não\s+(?:conte|diga|informe|mencione)\s+(?:nada\s+)?(?:ao|para\s+o)\s+usuário|sem\s+(?:avisar|contar|informar)\s+(?:o|ao)\s+usuário|ne\s+(?:le\s+|rien\s+)?(?:dis|dites|mentionne|mentionnez|signale|signalez)\s+(?:rien\s+|pas\s+|jamais\s+)(?:à\s+)?l'utilisateur|sans\s+(?:le\s+)?(?:dire|prévenir|informer)\s+(?:à\s+)?l'utilisateur|(?:sag|sage|sagen\s+sie)\s+(?:es\s+|das\s+|nichts\s+)?(?:dem|den)\s+(?:benutzer|nutzer|anwender)\s+nicht|ohne\s+(?:es\s+)?(?:dem|den)\s+(?:benutzer|nutzer|anwender)\s+(?:zu\s+sagen|mitzuteilen|zu\s+informieren)|non\s+(?:dirlo|dire|dirgli|informare|avvisare)\s+(?:nulla\s+)?(?:all'utente|l'utente))/,
  ],
  [
    'concealment',
    /не\s+(?:говори|говорите|сообщай|сообщайте|рассказывай|показывай)\s+(?:об\s+этом\s+|это\s+|ничего\s+)?пользовател/,
  ],
  ['concealment', /(?:不要|别|不许|不准|切勿)(?:告诉|告訴|通知|让|讓)(?:用户|用戶|使用者)/],
  ['concealment', /ユーザー(?:に|には)(?:言わ|伝え|知らせ|教え|報告し)ないで/],
  ['concealment', /사용자(?:에게|한테)\s*(?:말하지|알리지|보고하지)\s*(?:마|말)/],
];

/**
 * Zero-width characters, soft hyphens, bidirectional controls, word joiners, variation selectors,
 * Hangul fillers and the BOM, as ranges of code units (inclusive).
 */
const INVISIBLE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
];

const hex = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`;

/** The {@link INVISIBLE_RANGES} as a character class over code units (no `u` flag). */
const INVISIBLE = new RegExp(
  `[${INVISIBLE_RANGES.map(([from, to]) => `${hex(from)}-${hex(to)}`).join('')}]`,
  'g',
);

/** A character outside ASCII: text without one is left as it is by NFKC and every table below. */
const NON_ASCII = /[^\p{ASCII}]/u;

/** Cyrillic and Greek letters that look like Latin ones (lower case, after NFKC and lower-casing). */
const LOOKALIKES: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ɡ: 'g',
  α: 'a',
  β: 'b',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ı: 'i',
};

/** Digits and signs used as letters ("1gn0re pr3v10us"). */
const LEET: Readonly<Record<string, string>> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '@': 'a',
  $: 's',
  '!': 'i',
};

/** Any key of {@link LOOKALIKES} (each one UTF-16 code unit). */
const LOOKALIKE = new RegExp(`[${Object.keys(LOOKALIKES).join('')}]`, 'g');

/** Any key of {@link LEET}. */
const LEET_CHAR = new RegExp(
  `[${Object.keys(LEET)
    .map((ch) => ch.replace(/[\\\]^-]/g, '\\$&'))
    .join('')}]`,
  'g',
);

/**
 * Letters spaced out or dotted: three or more single letters each followed by one separator
 * ("i g n o r e   a l l", "I.G.N.O.R.E", "i-g-n-o-r-e"), then a last letter; three, so that short
 * words of a spaced-out phrase ("a l l") join too. Linear: each step takes two characters.
 */
const SPACED = /(?<![\p{L}\p{N}])(?:\p{L}[ ._\-*·]){2,}\p{L}(?![\p{L}\p{N}])/gu;

/** {@link SPACED} for ASCII text, where a letter is one of A-Z and a-z and a digit one of 0-9. */
const SPACED_ASCII = /(?<![A-Za-z0-9])(?:[A-Za-z][ ._\-*]){2,}[A-Za-z](?![A-Za-z0-9])/g;

/** A run of spaces and tabs that is not one space: what {@link detectionViews} makes one space. */
const BLANKS = /[ \t]{2,}|\t/g;

/**
 * The views of a text the patterns read: `native` (compatibility forms folded, invisible characters
 * removed, lower case: for phrasings in other scripts), `latin` (look-alike letters mapped to Latin,
 * runs of spaces and tabs as one space), `joined` (`latin` with spaced-out letters joined) and
 * `leet` (`joined` with digits as letters). `latin` and `joined` are the same string unless
 * spaced-out letters were joined.
 *
 * No pattern needs two blanks in a row or a tab rather than a space (each reads `\s`, `[ \t]` or
 * one space, and a gap counts at most so many characters), so a match in a text is a match with its
 * blank runs made one; the collapse lets the patterns write "do not" with one space, and makes the
 * second view read only where letters were joined, not wherever a line was indented.
 */
export function detectionViews(text: string): {
  native: string;
  latin: string;
  joined: string;
  leet: string;
} {
  // Regular expressions over the tables, not a loop per character: the same views, built fast
  // enough for every message of every job (ASCII text skips what cannot change it).
  const ascii = !NON_ASCII.test(text);
  const native = ascii ? text.toLowerCase() : text.replace(INVISIBLE, '').normalize('NFKC').toLowerCase();
  const mapped = ascii ? native : native.replace(LOOKALIKE, (ch) => LOOKALIKES[ch] ?? ch);
  let spaced = false;
  // Letters are joined before blanks are collapsed: "i g n o r e   a l l" is two words.
  const unspaced = mapped.replace(ascii ? SPACED_ASCII : SPACED, (run) => {
    spaced = true;
    // Two-letter words and the like stay: only a run of single letters is a spaced-out word.
    return run.replace(/[ ._\-*·]/g, '');
  });
  const joined = unspaced.replace(BLANKS, ' ');
  const latin = spaced ? mapped.replace(BLANKS, ' ') : joined;
  const leet = joined.replace(LEET_CHAR, (ch) => LEET[ch] ?? ch);
  return { native, latin, joined, leet };
}

/**
 * The injection families a text reads as, each once (the first match), those found in a decoded
 * base64 payload marked `encoded`. Empty for ordinary text. `options.source` says who wrote it
 * ({@link InjectionSource}): in the user's own words, a plain download-and-run, bare secrecy, role
 * lines, claimed authority and text addressed to the agent do not count. Never throws.
 */
export function detectInjection(text: string, options: DetectOptions = {}): InjectionFinding[] {
  if (typeof text !== 'string' || text.length === 0) return [];
  const untrusted = options?.source !== 'user';
  const memo = untrusted ? untrustedMemo : userMemo;
  return memo.get(text, () => scan(text, untrusted)).map((f) => ({ ...f }));
}

/**
 * Characters of text each source's memo of findings holds (about 8 MB of keys each): a job's
 * messages are read by several stages, and a worker at concurrency 128 has that many jobs' texts
 * in flight.
 */
const MEMO_CHARS = 4_000_000;
const untrustedMemo = createTextMemo<readonly Readonly<InjectionFinding>[]>(MEMO_CHARS);
const userMemo = createTextMemo<readonly Readonly<InjectionFinding>[]>(MEMO_CHARS);

/** One detector pass over `text` (see {@link detectInjection}); pure, so its answer is memoized. */
function scan(text: string, untrusted: boolean): InjectionFinding[] {
  const scanned =
    text.length > MAX_SCANNED_CHARS
      ? `${text.slice(0, MAX_SCANNED_CHARS / 2)}\n${text.slice(-MAX_SCANNED_CHARS / 2)}`
      : text;
  let found = findIn(scanned, false, untrusted);
  const seen = new Set(found.map((f) => f.family));
  for (const payload of decodedPayloads(scanned)) {
    for (const finding of findIn(payload, true, untrusted)) {
      if (seen.has(finding.family)) continue;
      seen.add(finding.family);
      found.push(finding);
    }
  }
  // The user may ask for `curl … | sh`; not for one hidden by invisible characters or an encoding.
  if (!untrusted && !hasInvisible(scanned))
    found = found.filter((f) => f.family !== 'remote-exec' || f.encoded || /base64|frombase64/.test(f.match));
  return found;
}

/**
 * Whether a text reads as a prompt injection of any known family ({@link detectInjection}), as
 * written by `options.source` (default `untrusted`).
 */
export function readsAsInjection(text: string, options: DetectOptions = {}): boolean {
  return detectInjection(text, options).length > 0;
}

function hasInvisible(text: string): boolean {
  INVISIBLE.lastIndex = 0;
  return INVISIBLE.test(text);
}

/** The families whose words the leet view reads (it would make `curl … | sh` unreadable). */
const LEET_FAMILIES: ReadonlySet<InjectionFamily> = new Set(['override', 'concealment']);

/** The second view {@link findIn} reads a family of {@link PATTERNS} in, after `joined`. */
const secondViewOf = (family: InjectionFamily, views: ReturnType<typeof detectionViews>) =>
  LEET_FAMILIES.has(family) ? views.leet : views.latin;

/**
 * One search over each list of patterns (shared/trust/any-match.ts), read before the list itself;
 * over the leet and latin views, only the patterns {@link findIn} reads in them.
 */
const ANY_PATTERN = anyMatch(PATTERNS.map(([, pattern]) => pattern));
const ANY_LEET_PATTERN = anyMatch(PATTERNS.filter(([f]) => LEET_FAMILIES.has(f)).map(([, p]) => p));
const ANY_LATIN_PATTERN = anyMatch(PATTERNS.filter(([f]) => !LEET_FAMILIES.has(f)).map(([, p]) => p));
const ANY_MULTILINGUAL = anyMatch(MULTILINGUAL.map(([, pattern]) => pattern));
const ANY_OVERRIDE = anyMatch(OVERRIDE);
const ANY_BARE_SECRECY = anyMatch(BARE_SECRECY);
const ANY_AUTHORITY = anyMatch(AUTHORITY);
const ANY_ADDRESSED_TO_AGENT = anyMatch(ADDRESSED_TO_AGENT);
/**
 * Every list read in the native view, in one search: most text matches none, and one search costs
 * less than five (bench texts: 1.2 against 1.9 µs).
 */
const ANY_NATIVE = anyMatch([
  ...MULTILINGUAL.map(([, pattern]) => pattern),
  ...OVERRIDE,
  ...BARE_SECRECY,
  ...AUTHORITY,
  ...ADDRESSED_TO_AGENT,
]);

function findIn(text: string, encoded: boolean, untrusted: boolean): InjectionFinding[] {
  const views = detectionViews(text);
  const found: InjectionFinding[] = [];
  const seen = new Set<InjectionFamily>();
  const take = (family: InjectionFamily, pattern: RegExp, view: string): boolean => {
    if (seen.has(family)) return true;
    const match = pattern.exec(view);
    if (!match) return false;
    seen.add(family);
    found.push({ family, match: match[0].trim().slice(0, 80), encoded });
    return true;
  };
  // Each list is read pattern by pattern only where one search over all of it matches: most text
  // matches none of them (shared/trust/any-match.ts).
  const anyPattern =
    ANY_PATTERN(views.joined) ||
    (views.leet !== views.joined && ANY_LEET_PATTERN(views.leet)) ||
    (views.latin !== views.joined && ANY_LATIN_PATTERN(views.latin));
  if (anyPattern) {
    for (const [family, pattern] of PATTERNS) {
      // The leet view only for words: it would make `curl … | sh` or `<|im_start|>` unreadable.
      const second = secondViewOf(family, views);
      // The second view only where it differs from the first: the same text would match the same.
      if (!take(family, pattern, views.joined) && second !== views.joined) take(family, pattern, second);
    }
  }
  const anyNative = ANY_NATIVE(views.native);
  if (anyNative && ANY_MULTILINGUAL(views.native))
    for (const [family, pattern] of MULTILINGUAL) take(family, pattern, views.native);
  if (anyNative && ANY_OVERRIDE(views.native))
    for (const pattern of OVERRIDE) take('override', pattern, views.native);
  if (!seen.has('remote-exec')) {
    const match = fetchThenExecute(views.latin, views.native);
    if (match) take('remote-exec', /[\s\S]+/, match);
  }
  if (untrusted) structuralSignals(views, take, anyNative);
  return found;
}

/**
 * A line that opens with a chat role and a colon and then says something (four words or more, or a
 * phrase in a script without spaces): a turn of the conversation posed inside a text that is not
 * one. `User: alice` (a field of a record) is not. Decorations around the role (`**User:**`,
 * `[Assistant]:`, `### Gebruiker:`) are read through.
 */
const ROLE_LINE = new RegExp(
  `(?:^|\\n)[ \\t]*(?:[*_#>\\[(<|]{1,4}[ \\t]*)?${ROLE_WORDS}(?:[ \\t]*(?:turn|message|prompt|bericht|nachricht))?[ \\t]*(?:[\\])>*_|]{1,4}[ \\t]*)?[:：][ \\t]*[*_]{0,2}[ \\t]*([^\\n]{1,300})`,
  'g',
);

/** A prompt-format heading posing as a role: `### Instruction:`, `## System prompt:`, `### Response:`. */
const FORMAT_HEADING = /(?:^|\n)[ \t]*#{2,4}[ \t]*(?:instruction|system(?:[ \t]+prompt)?|response)s?[ \t]*:/;

/** A URL, an IP address or a mail address: something an order sends to or fetches from. */
const TARGET = /\bhttps?:\/\/|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|[\w.+-]+@[\w-]+\.[a-z]/;

/** Characters after the words that address the agent in which its order is read. */
const DIRECTIVE_WINDOW = 400;

/**
 * The signals that count only outside the user's own words: bare secrecy, a role line, a
 * prompt-format heading, a claimed authority, and an order to act on a URL or address in text
 * addressed to the agent. `anyNative`: whether {@link ANY_NATIVE} matched the native view (none of
 * the lists can match where it did not).
 */
function structuralSignals(
  views: ReturnType<typeof detectionViews>,
  take: (family: InjectionFamily, pattern: RegExp, view: string) => boolean,
  anyNative: boolean,
): void {
  if (anyNative && ANY_BARE_SECRECY(views.native))
    for (const pattern of BARE_SECRECY) if (take('concealment', pattern, views.native)) break;
  const role = roleLine(views.native);
  if (role) take('impersonation', /[\s\S]+/, role);
  take('impersonation', FORMAT_HEADING, views.native);
  if (anyNative && ANY_AUTHORITY(views.native))
    for (const pattern of AUTHORITY) if (take('impersonation', pattern, views.native)) break;
  if (!anyNative || !ANY_ADDRESSED_TO_AGENT(views.native)) return;
  for (const pattern of ADDRESSED_TO_AGENT) {
    const match = pattern.exec(views.native);
    if (!match) continue;
    const window = views.native.slice(match.index, match.index + DIRECTIVE_WINDOW);
    if (ACT_VERB.test(window) && TARGET.test(window)) {
      take('agent-directive', /[\s\S]+/, window.slice(0, 80));
      break;
    }
  }
}

/** The first role line of a text ({@link ROLE_LINE}) whose content is a sentence, or null. */
function roleLine(view: string): string | null {
  ROLE_LINE.lastIndex = 0;
  let n = 0;
  for (let m = ROLE_LINE.exec(view); m !== null && n < 64; m = ROLE_LINE.exec(view), n++) {
    const said = (m[1] ?? '').trim();
    const words = said.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
    const unspaced = (
      said.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu) ?? []
    ).length;
    if (words >= 4 || unspaced >= 6) return m[0].trim();
  }
  return null;
}

/**
 * The base64-looking runs of a text that decode to mostly printable text (at most
 * {@link MAX_PAYLOADS}, each clipped to {@link MAX_PAYLOAD_CHARS}), decoded; a payload decoded from
 * a payload is read too, one level deeper.
 */
function decodedPayloads(text: string, depth = 0): string[] {
  const out: string[] = [];
  for (let at = base64RunFrom(text, 0); at !== null; at = base64RunFrom(text, at.end)) {
    if (out.length >= MAX_PAYLOADS) break;
    const run = text.slice(at.start, Math.min(at.end, at.start + MAX_PAYLOAD_CHARS));
    // A run of one kind of character (a hash in hex, a word) is not base64.
    if (!/[A-Z]/.test(run) || !/[a-z]/.test(run)) continue;
    const decoded = decodeBase64(run);
    if (decoded === null) continue;
    out.push(decoded);
    if (depth < 1) out.push(...decodedPayloads(decoded, depth + 1));
  }
  return out;
}

/** The characters a base64 (or base64url) run is made of: A-Z, a-z, 0-9, `+`, `/`, `_` and `-`. */
const BASE64_CHAR = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-')
  BASE64_CHAR[ch.charCodeAt(0)] = 1;

/** Fewest characters of a run read as a base64 payload. */
const BASE64_MIN_CHARS = 24;

/**
 * The first base64-looking run of `text` that starts at or after `from`: a whole run of
 * {@link BASE64_CHAR} characters, {@link BASE64_MIN_CHARS} or more, and up to two `=` of padding
 * after it; as `[start, end)`, or null. One pass over the code units: a regular expression over
 * every position costs several times more on text that has none, which is nearly every text.
 */
function base64RunFrom(text: string, from: number): { start: number; end: number } | null {
  let run = 0;
  let i = from;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128 && BASE64_CHAR[c] === 1) run++;
    else if (run >= BASE64_MIN_CHARS) break;
    else run = 0;
  }
  if (run < BASE64_MIN_CHARS) return null;
  let end = i;
  while (end < i + 2 && text.charCodeAt(end) === 61 /* = */) end++;
  return { start: i - run, end };
}

/** The UTF-8 text a base64 (or base64url) run decodes to, or null when it is not mostly printable. */
function decodeBase64(run: string): string | null {
  let bytes: string;
  try {
    const standard = run.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
    const padded = standard + '='.repeat((4 - (standard.length % 4)) % 4);
    bytes = atob(padded);
  } catch {
    return null;
  }
  let printable = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes.charCodeAt(i);
    if ((c >= 0x20 && c < 0x7f) || c === 0x0a || c === 0x0d || c === 0x09 || c >= 0x80) printable++;
  }
  if (bytes.length < 12 || printable / bytes.length < 0.9) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}
