/**
 * How a sentence of the user's own words reads as a rule, by its form rather than its subject:
 * modal verbs of obligation and prohibition, negated imperatives, "always/never/only", politeness
 * markers that open a request ("please use…"), an imperative that opens with a verb of how to work
 * and no marker word ("Use tabs", "Verwende pnpm", "用中文回答", "…てください", "…하세요"), in English,
 * German, French, Spanish, Dutch, Portuguese and Italian, and the Chinese, Japanese and Korean markers
 * of the same; and how a later
 * sentence lifts a rule ("you can use X now", "forget what I said about X"). Pure.
 */

/** Letters around a word: `\b` does not know accented letters, these lookarounds do. */
const W = (body: string) => `(?<![\\p{L}\\p{N}_])(?:${body})(?![\\p{L}\\p{N}_])`;

/** Strong markers: prohibitions, obligations, always/never, by language. */
const STRONG_PARTS = [
  // English.
  "don't|do not|dont|never|must(?:n't| not)?|always|shall not|should(?:n't| not)|not allowed|forbidden|under no circumstances|no (?:code )?(?:changes?|edits?|commits?|new files?|tests?)|without (?:changing|modifying|touching|asking)",
  // German.
  'niemals|nie|immer|stets|muss|musst|müssen|müsst|darf(?:st)? (?:\\p{L}+ ){0,3}(?:nicht|kein\\p{L}*)|dürfen (?:\\p{L}+ ){0,3}(?:nicht|kein\\p{L}*)|auf keinen fall|verboten|sollst (?:\\p{L}+ ){0,3}nicht',
  // French.
  "ne (?:\\p{L}+ ){1,2}(?:pas|jamais|plus)|n'\\p{L}+ (?:pas|jamais|plus)|ne pas|jamais|toujours|il faut|dois|doit|devez|interdit|en aucun cas",
  // Spanish.
  'nunca|jamás|siempre|debes|deben|debe|tienes que|hay que|prohibido|en ningún caso',
  // Dutch.
  'nooit|altijd|moet|moeten|mag (?:\\p{L}+ ){0,3}niet|mogen (?:\\p{L}+ ){0,3}niet|verboden|in geen geval',
  // Portuguese.
  'nunca|sempre|deves|deve|devem|tem que|tem de|precisa|proibido|de jeito nenhum',
  // Italian.
  'mai|sempre|devi|deve|devono|bisogna|occorre|vietato|in nessun caso',
];

/** A negated imperative opening a sentence: "No toques…", "Não altere…", "Non toccare…", "Nicht…". */
const NEGATED_IMPERATIVE =
  /^(?:(?:por favor|per favore|bitte|please),?\s+)?(?:no (?:(?:lo|la|los|las|le|les|me|te|se) )?\p{L}+(?:es|as|éis|áis)|não (?:\p{L}+ )?\p{L}+|non \p{L}+(?:are|ere|ire)|nicht \p{L}+|niet \p{L}+)(?![\p{L}])/iu;

/** Strong markers without word boundaries: Chinese, Japanese, Korean. */
const CJK_STRONG =
  /不要|不准|不能|别(?!人)|禁止|必须|一定要|总是|永远|務必|务必|绝不|絶対|切勿|请勿|不许|不得|不可以|严禁|千万别|しないで|ないでください|してはいけない|してはならない|しないこと|禁止|必ず|常に|決して|하지 ?마|하지 ?마세요|하지 말 것|절대|항상|반드시|금지|안 됩니다/u;

/** Weak markers: restrictions, preferences, requests that set how to work. */
const WEAK_PARTS = [
  // English.
  'only|make sure|ensure|avoid|stop|please (?:use|keep|write|run)|keep|instead|rather than|prefer|remember|from now on|going forward|important',
  // German.
  'nur|ausschließlich|bitte|achte darauf|stelle sicher|lieber|stattdessen|ab jetzt|von nun an|wichtig',
  // French.
  "uniquement|seulement|merci de|s'il (?:te|vous) pla[iî]t|svp|assure-toi|assurez-vous|plutôt|au lieu de|désormais|dorénavant|important",
  // Spanish.
  'solo|sólo|únicamente|por favor|asegúrate|asegúrese|prefiero|en lugar de|en vez de|a partir de ahora|importante',
  // Dutch.
  'alleen|uitsluitend|graag|alsjeblieft|alstublieft|zorg (?:ervoor )?dat|liever|in plaats van|vanaf nu|belangrijk',
  // Portuguese.
  'só|somente|apenas|por favor|certifique-se|garanta|prefiro|em vez de|ao invés de|a partir de agora|importante',
  // Italian.
  "solo|soltanto|esclusivamente|per favore|assicurati|preferisco|invece di|anziché|d[a’']ora in poi|importante",
];

/** Weak markers without word boundaries: Chinese, Japanese, Korean. */
const CJK_WEAK =
  /请|只(?:能|用|要)|仅|优先|改用|使用|记得|记住|确保|避免|尽量|保持|一律|统一|应该|应当|てください|でください|ようにして|ように。|べき|だけ|のみ|使って|주세요|하세요|십시오|해야|하도록|않도록|만 사용|사용하세요|대신/u;

/**
 * An imperative without a marker word: the sentence opens with a verb that tells how to work ("Use
 * tabs for indentation", "Name the command publish", "Write the docs in French", "Verwende pnpm",
 * "Utilise pnpm", "Usa pnpm"), after an optional "please", "also", "just", "and", "then".
 */
const IMPERATIVE = new RegExp(
  `^(?:(?:please|also|and|then|just|but|now|pls)[,]?\\s+)*${W(
    [
      'use|write|name|call|put|keep|add|run|follow|answer|reply|respond|format|output|store|save|place|include|exclude|limit|stick|leave|skip|ignore|target|support|document|commit|push|mention|respect|preserve|maintain|ensure|return|print|log|test|check|wait|ask|stay|treat|sort|prefix|suffix|wrap|indent|split|merge|rename|move|delete|remove|replace|pin|lock|set|stop|start|begin|finish|focus|cite|quote|link|translate|reuse|match|mirror|copy|report|summarize|explain|describe|prefer',
      'verwende|verwenden sie|nutze|benutze|schreib|schreibe|antworte|halte|lass|nimm|utilise|utilisez|écris|écrivez|réponds|répondez|garde|gardez|usa|use|utiliza|utilice|escribe|escriba|responde|mantén|gebruik|schrijf|antwoord|houd|utilizza|scrivi|rispondi|mantieni',
    ].join('|'),
  )}`,
  'iu',
);

/**
 * The same in Chinese, Japanese and Korean: a sentence opening with a verb of how to work ("用中文回答",
 * "使用 pnpm", "保持…", "把日志写到…", "先跑测试"), or ending with a polite or plain imperative
 * ("…てください", "…하세요", "…할 것").
 */
const CJK_IMPERATIVE =
  /^(?:请|請)?(?:用|使用|采用|保持|把|将|先|只|都用|一律|统一)|(?:て|で)ください[。！]?$|(?:하세요|하십시오|할 것|주세요)[.。!]?$/u;

const STRONG = new RegExp(W(STRONG_PARTS.join('|')), 'iu');
const WEAK = new RegExp(W(WEAK_PARTS.join('|')), 'iu');

/**
 * How strongly a sentence of the user's states a rule: `strong` (a prohibition or an obligation:
 * "never push to main", "Du darfst die API nicht ändern", "n'utilise pas npm", "不要修改测试"),
 * `weak` (a restriction or preference: "only touch src/", "bitte nur Deutsch", "使用 pnpm"), or null.
 * A question is no rule (its caller drops sentences ending in `?`).
 */
export function ruleStrength(sentence: string): 'strong' | 'weak' | null {
  const text = sentence.trim();
  if (STRONG.test(text) || CJK_STRONG.test(text) || NEGATED_IMPERATIVE.test(text) || /\bDO NOT\b/.test(text))
    return 'strong';
  if (WEAK.test(text) || CJK_WEAK.test(text) || IMPERATIVE.test(text) || CJK_IMPERATIVE.test(text))
    return 'weak';
  return null;
}

/**
 * A sentence that lifts an earlier rule: a permission ("you can use npm now", "feel free to edit the
 * tests", "it's fine to commit", "du darfst jetzt…", "tu peux maintenant…", "ya puedes…", "je mag nu…",
 * "pode agora…", "puoi ora…", "现在可以…") or a cancellation ("forget what I said about X", "ignore my
 * earlier rule", "no longer needed", "never mind"). What it lifts is the older rule that shares its
 * subject (the caller matches content words).
 */
const LIFT = new RegExp(
  W(
    [
      "you (?:can|may) (?:now|again|also|go ahead)|now you (?:can|may)|you (?:can|may) \\p{L}+(?: \\S+){0,5} (?:now|again)|feel free to|it'?s (?:fine|ok(?:ay)?|alright)(?: now)? to|you no longer (?:need|have) to|no longer (?:needed|necessary|required)|forget (?:about|what i said|that rule|the rule)|ignore (?:my|the) (?:earlier|previous|last|old)|never ?mind|scratch that|you are allowed to|is allowed now",
      'du darfst (?:jetzt|doch|wieder|nun)|ihr dürft (?:jetzt|doch|wieder)|vergiss|ist (?:doch |jetzt )?(?:ok|okay|in ordnung|erlaubt)|nicht mehr nötig',
      "tu peux (?:maintenant|finalement|désormais)|vous pouvez (?:maintenant|désormais)|oublie|c'est bon,? tu peux|n'est plus nécessaire",
      'ya puedes|ahora puedes|olvida|ya no es necesario|está bien que',
      'je mag (?:nu|toch|weer)|vergeet|is niet meer nodig',
      'agora (?:você )?pode|já pode|esquece|esqueça|não é mais necessário',
      'ora puoi|adesso puoi|dimentica|non è più necessario',
    ].join('|'),
  ),
  'iu',
);
const CJK_LIFT = /现在可以|可以用了|不用再|忘掉|もう.*てもいい|してもいいです|이제 .*해도 돼|해도 됩니다/u;

/** Whether a sentence of the user's lifts an earlier rule (see {@link LIFT}). */
export function liftsRule(sentence: string): boolean {
  if (REMINDER.test(sentence)) return false;
  return LIFT.test(sentence) || CJK_LIFT.test(sentence);
}

/** "Don't forget…" in any of the languages: a reminder of a rule, not its end. */
const REMINDER =
  /(?:don't|do not) forget|vergiss (?:\p{L}+ )?nicht|n'oublie(?:z)? pas|no (?:te )?olvides|vergeet (?:\p{L}+ )?niet|não (?:se )?esque[çc]a|non dimenticare/iu;

/**
 * A line's sentences: split after `.`, `!`, `?` and white space, and after the full-width
 * `。`, `！`, `？` of Chinese and Japanese, which need none.
 */
export function lineSentences(line: string): string[] {
  return line
    .split(/(?<=[.!?])\s+|(?<=[。！？])/u)
    .map((s) => s.trim())
    .filter(Boolean);
}
