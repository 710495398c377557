/**
 * Decisions: choices the assistant (in its words or its reasoning) or the user made between
 * alternatives, each with the reason given in the same message. What counts as a choice, by the sentence's form:
 * - a choice marker: "instead of" or "rather than" with someone choosing (I, we, let's, use,
 *   should: "the output shows X instead of Y" only describes), "decided", "chose", "opted for", "go with",
 *   "switch to", "prefer X over Y", "the fix is to", "we should", and the same in German, French,
 *   Spanish, Dutch, Portuguese and Italian ("statt", "au lieu de", "en lugar de", "in plaats van",
 *   "em vez de", "invece di", …), and in Chinese, Japanese and Korean ("改用", "而不是", "代わりに", "대신");
 * - a plan with its reason: "I'll use X because…", "Let's do X since…", "Since X, I'll use Y": an
 *   intent is narration unless it gives a reason or names the alternative it drops, "a different
 *   approach" included (then the sentence before it saying what did not work is its reason);
 * - a right way set against a wrong one: "X should copy the values, not set them to 1";
 * - a pick from options: a message listing two or more options (`1.`, `- Option A:`), then a
 *   message picking one ("option 2", "the second one", "go with B"): the picked option's text.
 * A sentence that only narrates ("Let me look at the file") or asks is no decision. The reason is
 * the sentence's own clause ("because…", "since…", "so that…") or the next sentence of the same
 * message when it opens with one ("This avoids…", "That way…", "Otherwise…").
 */
import type { Message } from '../contract/message.ts';
import { clipWords, sentences } from '../text/text.ts';
import { classifyUserMessage } from '../text/user-messages.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';

/** Decisions taken from one run of leaving messages (a third of a long session holds a dozen). */
const NEW_DECISIONS = 12;

/** Letters around a word, for accented words. */
const W = (body: string) => new RegExp(`(?<![\\p{L}\\p{N}_])(?:${body})(?![\\p{L}\\p{N}_])`, 'iu');

/** Markers of a choice between alternatives. */
const CHOICE = W(
  [
    'decided|decide to|decision is|over the other',
    "(?:chose|choose|opted|opt) (?:to|for)|going (?:to go )?with|go with|let's go with|settled on|switch(?:ed|ing)? to|move to using",
    'prefer \\S+(?: \\S+){0,3} over|the fix is|fix is to|the fix (?:should|will)|the (?:approach|solution|plan) (?:is|will be)|we should',
    'statt|stattdessen|anstatt|anstelle von|entschieden|wir nehmen|ich nehme|lieber',
    "au lieu de|plutôt que|plutôt|on part sur|j'ai choisi|nous avons choisi|décidé",
    'en lugar de|en vez de|vamos con|elegí|decidí|decidimos|mejor usar',
    'in plaats van|gekozen|besloten|we gaan voor',
    'em vez de|ao invés de|escolhi|decidi|decidimos|vamos com',
    'invece di|anziché|ho scelto|abbiamo scelto|deciso',
  ].join('|'),
);

/**
 * "Instead of", "rather than": a choice when someone makes it (`I`, `we`, `let's`, `use`, `should`,
 * …); "the output shows X instead of Y" describes, it does not choose.
 */
const INSTEAD = W('instead of|instead|rather than|in favou?r of');
const AGENT = W("I|we|let's|I'll|we'll|I'd|we'd|use|using|should|will|going to|switch|keep|go|you");

/** A reason given in the sentence itself. */
const REASON = W(
  'because|since|so that|as it|as this|to avoid|to keep|which (?:avoids|keeps|means)|weil|da|damit|parce que|car|puisque|porque|ya que|para que|omdat|want|zodat|pois|perché|poiché|dato che',
);

/**
 * The same markers in Chinese, Japanese and Korean, which have no word boundaries: a choice
 * ("决定", "改用", "而不是", "代わりに", "ではなく", "대신", "선택") and a reason ("因为", "为了",
 * "ので", "ため", "때문에").
 */
const CJK_CHOICE =
  /决定|決定|选择|選擇|选用|改用|改为|改為|改成|换成|換成|而不是|而非|代替|取代|采用|採用|代わりに|ではなく|にします|に決め|を選|대신|선택|결정|하기로/u;
const CJK_REASON = /因为|因為|由于|由於|为了|為了|以便|这样可以|這樣可以|ので|ため|때문에|위해/u;

/** A letter of Chinese, Japanese or Korean: such a sentence says much in few characters. */
const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/u;

/** A sentence that gives the reason of the one before it. */
const REASON_NEXT =
  /^(?:because|since|this (?:way|avoids|keeps|ensures|means|explains|is (?:simpler|safer|faster|cleaner))|that way|otherwise|the reason|it (?:avoids|keeps|is simpler|is safer)|weil|denn|dadurch|so bleibt|car|ainsi|sinon|porque|así|de lo contrario|omdat|zo |anders|assim|caso contrário|perché|così|altrimenti)\b/iu;

/** Narration: a plan to look around, not a choice ("Let me check", "I'll run the tests"). */
const NARRATION =
  /^(?:now,? |first,? |next,? |ok(?:ay)?,? |great,? |good,? |so,? )?(?:let me|let's|I'll|I will|we'll|we will|I'm going to|I am going to)\b/i;

/**
 * A plan stated after its reason in the same sentence: "Since X is not available, I'll use a hook",
 * "Da X fehlt, nehmen wir…": a reason clause opening the sentence, then the plan. The plan's verb
 * must be one that picks a way of doing (use, switch, try, upload, …), not one that looks around.
 */
const REASON_THEN_PLAN =
  /^(?:since|because|as|given that|now that|da|weil|comme|puisque|como|dado que|ya que|omdat|aangezien|poiché|siccome|visto che)\b[^,]{3,},\s*(?:so\s+)?(?:I'll|I will|we'll|we will|let's|let me|I'm going to|we're going to|I|we)\s+(?:\p{L}+\s+){0,2}?(?:use|go with|switch|keep|implement|fix|add|write|store|pick|try|upload|install|move|replace|wrap|return|raise|call|take|choose|opt)\b/iu;

/**
 * A choice of the right way against a wrong one in the same sentence: "X should copy the values,
 * not set them to 1", "we must keep the cache, rather than…": an obligation, then ", not …".
 */
const SHOULD_NOT =
  /\b(?:should|must|needs? to|has to|have to|is to|ought to|sollte|muss|doit|devrait|debe|debería|moet|deve|dovrebbe)\b[^.;]{3,},\s*(?:and )?(?:not|nicht|pas|no|niet|não|non)\b/iu;

/**
 * A plan that drops the way tried so far: "a different approach", "another way", "an alternative":
 * the alternative is the approach of the messages before; the reason is the sentence before it in
 * the same message when that one says what did not work ({@link FAILED_BEFORE}).
 */
const OTHER_WAY = W(
  '(?:a |an )?(?:different|another|alternative|simpler|other) (?:approach|way|strategy|method|fix)|andere[nm]? (?:ansatz|weg)|autre (?:approche|méthode)|otro (?:enfoque|método)|andere aanpak|outra abordagem|altro approccio',
);

/** A sentence that says something did not work: the reason for the plan after it. */
const FAILED_BEFORE =
  /\b(?:not working|doesn't work|does not work|didn't work|did not work|won't work|not work|failed|fails|can't|cannot|couldn't|unable|no (?:luck|output|results?)|did not (?:help|change)|didn't (?:help|change)|is not available|isn't available|not found|not applied|wasn't|was not)\b/i;

/** A choice marker that also makes a plan a decision: the alternative it drops. */
const DROPS = W(
  'instead of|instead|rather than|over|statt|au lieu de|en lugar de|en vez de|in plaats van|em vez de|invece di',
);

/**
 * Whether a sentence states a decision: a choice marker, or a plan with its reason or the
 * alternative it drops; not narration, not a question, not a heading-like fragment.
 */
export function isDecision(sentence: string): boolean {
  if (sentence.length < (CJK.test(sentence) ? 8 : 20) || /[?？]$/.test(sentence) || /[:：]$/.test(sentence))
    return false;
  if (REASON_THEN_PLAN.test(sentence) || SHOULD_NOT.test(sentence)) return true;
  if (NARRATION.test(sentence)) {
    const plan = /\b(?:use|go with|switch|keep|do|implement|fix|add|write|call|store|pick)\b/i.test(sentence);
    return (plan && (REASON.test(sentence) || DROPS.test(sentence))) || OTHER_WAY.test(sentence);
  }
  return (
    CHOICE.test(sentence) || CJK_CHOICE.test(sentence) || (INSTEAD.test(sentence) && AGENT.test(sentence))
  );
}

/**
 * Up to {@link NEW_DECISIONS} decisions of the assistant's prose and reasoning and the user's own messages
 * (not harness or tool text), newest kept, each with its reason: its own `because…` clause, or the
 * next sentence of the message when that one gives the reason. Then the picks from option lists.
 */
export function decisionItems(messages: Message[]): Item[] {
  const found: Item[] = [];
  messages.forEach((m, index) => {
    if (!speaks(m)) return;
    const said = sentences(m.content);
    said.forEach((sentence, k) => {
      if (!isDecision(sentence)) return;
      const next = said[k + 1];
      const before = said[k - 1];
      const gives = (text: string) => REASON.test(text) || CJK_REASON.test(text);
      const why =
        !gives(sentence) &&
        next &&
        (REASON_NEXT.test(next) || /^(?:因为|因為|由于|由於|这样|這樣)/u.test(next))
          ? ` ${next}`
          : '';
      // "X is not working. Let's try a different approach: …": the failure is the reason.
      const cause =
        !why && before && OTHER_WAY.test(sentence) && FAILED_BEFORE.test(before) ? `${before} ` : '';
      found.push({ text: clipWords(`${cause}${sentence}${why}`, ITEM_CHARS), seq: m.seq });
    });
    const picked = pickFromOptions(messages, index);
    if (picked) found.push(picked);
  });
  const unique = found.filter((item, i) => found.findIndex((o) => o.text === item.text) === i);
  return unique.sort((a, b) => (a.seq ?? -1) - (b.seq ?? -1)).slice(-NEW_DECISIONS);
}

/** Longest user message read for decisions, in characters. */
const USER_DECISION_CHARS = 600;

/** Whether a message is words of the assistant (its reasoning included) or of the user (not a harness). */
function speaks(m: Message): boolean {
  if (m.kind !== 'message' || typeof m.content !== 'string') return false;
  // The assistant's reasoning counts: it is where a choice and its reason are often first stated.
  if (m.role === 'assistant') return true;
  // A long user message is a task or a pasted text: its rules are the user's instructions.
  if (m.role !== 'user' || m.content.length > USER_DECISION_CHARS) return false;
  const kind = classifyUserMessage(m.content);
  return kind === 'request' || kind === 'answer';
}

/** The options a message lists: `1. x`, `- Option A: x`, `A) x`; at least two, else none. */
export function listedOptions(text: string): Map<string, string> {
  const options = new Map<string, string>();
  let n = 0;
  for (const line of text.split('\n')) {
    const match =
      /^\s*(?:[-*]\s+)?(?:\*\*)?(?:option|approach|choice|variante|opción|opção|opzione)?\s*([0-9]+|[A-Ha-h])[.):]\s*(?:\*\*)?\s*(.{6,})$/iu.exec(
        line,
      );
    if (!match) continue;
    n++;
    options.set((match[1] ?? '').toLowerCase(), (match[2] ?? '').replace(/\*\*/g, '').trim());
    options.set(ORDINALS[n - 1] ?? `#${n}`, (match[2] ?? '').replace(/\*\*/g, '').trim());
  }
  return n >= 2 ? options : new Map();
}

const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth'];

/**
 * The option a message picks from the option list of the message before it (of the other
 * speaker, or its own earlier one): "option 2", "2", "B", "the second one", "go with A".
 */
function pickFromOptions(messages: Message[], index: number): Item | null {
  const m = messages[index];
  if (!m || m.content.length > 400) return null;
  let listing: Message | undefined;
  for (let i = index - 1; i >= 0 && i >= index - 6; i--) {
    const before = messages[i];
    if (before?.kind === 'message' && before.role !== m.role && listedOptions(before.content).size > 0) {
      listing = before;
      break;
    }
  }
  if (!listing) return null;
  const options = listedOptions(listing.content);
  const text = m.content.trim().toLowerCase();
  const pick =
    /^(?:option\s+|approach\s+|choice\s+)?([0-9]+|[a-h])[.!)]?$/i.exec(text)?.[1] ??
    /\b(?:option|approach|choice|go with|take|pick|use)\s+(?:option\s+)?([0-9]+|[a-h])\b/i.exec(text)?.[1] ??
    /\bthe (first|second|third|fourth|fifth)(?: one| option| approach)?\b/i.exec(text)?.[1];
  const chosen = pick ? options.get(pick.toLowerCase()) : undefined;
  if (!chosen) return null;
  const who = m.role === 'user' ? 'the user picked' : 'picked';
  return { text: clipWords(`${who} ${pick}: ${chosen}`, ITEM_CHARS), seq: m.seq };
}
