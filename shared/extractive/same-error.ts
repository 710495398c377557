/**
 * An error fixed once is fixed wherever it showed before: agents meet the same failure through
 * several calls (a reproduction script, a debug script, the test suite, an inline `python -c`), and
 * usually re-run only one of them once it is fixed. When one call's blocker is resolved, the
 * blockers of other calls that failed with the same error message before that point are resolved
 * too. The message is compared without its exception type or module (`sqlite3.IntegrityError:` and
 * `django.db.utils.IntegrityError:` raise the same `FOREIGN KEY constraint failed`), and only when it
 * says something of its own: an exit code or a bare "Traceback" names no error.
 */
import { type ErrorFix, renderErrorFix } from '../summary/checkpoint.ts';
import { cleanItem, clipWords, normalizeKey } from '../text/text.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';
import { STILL_FAILING } from './run-state.ts';

/** Shortest message, in characters, that is compared: shorter ones (`failed`, `exit code 1`) say too little. */
const MIN_SIGNATURE_CHARS = 12;

/** Messages that name no particular error. */
const GENERIC =
  /^(?:exit (?:code|status)\b.*|(?:python )?traceback\b.*|failed|error|command failed.*|.*\bfailed with exit\b.*)$/;

/** A leading exception type, qualified or not (`django.db.utils.IntegrityError:`, `Error:`, `[error]`). */
const TYPE_PREFIX = /^(?:\[?(?:[a-z_][\w.]*?)?(?:error|exception|failure|fault)\]?\s*:?\s+)+/i;

/**
 * The message an error line states, in normal form, without where it came from, the open-error
 * label, or a leading exception type; null when it names no particular error (too short, or an exit
 * code, a bare traceback, "failed").
 */
export function errorSignature(text: string): string | null {
  const message = normalizeKey(
    text
      .replace(/ \(from: .+\)$/, '')
      .replace(` — ${STILL_FAILING}`, '')
      .replace(/…$/, ''),
  ).replace(TYPE_PREFIX, '');
  if (message.length < MIN_SIGNATURE_CHARS || !/\s/.test(message) || GENERIC.test(message)) return null;
  return message;
}

/**
 * The blockers left once every error in `fixed` (errorsAndFixes items of these messages: blockers a
 * later run resolved, at their `seq` or after) is taken as fixed wherever it showed up to that seq:
 * a blocker with the same {@link errorSignature} and a seq no later than the fixed one's moves to
 * `resolved`, naming the fix of its twin. Blockers with no seq, or with a later one (the error came
 * back after the fix), stay.
 */
export function withoutFixedTwins(blockers: Item[], fixed: Item[]): { blockers: Item[]; resolved: Item[] } {
  const fixes = fixed.flatMap((f) => {
    const signature = f.fix ? errorSignature(f.fix.error) : null;
    const how = f.fix?.fix;
    return signature && how && f.seq !== null ? [{ signature, seq: f.seq, how }] : [];
  });
  if (fixes.length === 0) return { blockers, resolved: [] };
  const kept: Item[] = [];
  const resolved: Item[] = [];
  for (const b of blockers) {
    const signature = errorSignature(b.text);
    const twin =
      signature === null || b.seq === null
        ? undefined
        : fixes.find((f) => f.signature === signature && (b.seq ?? Infinity) <= f.seq);
    if (!twin) {
      kept.push(b);
      continue;
    }
    const fix: ErrorFix = {
      error: cleanItem(b.text.replace(/ \(from: .+\)$/, ''), ITEM_CHARS),
      fix: cleanItem(
        `the same error, met through another call, was resolved: ${clipWords(twin.how, 160)}`,
        ITEM_CHARS,
      ),
      seq: b.seq,
    };
    resolved.push({ text: renderErrorFix(fix), seq: b.seq, fix });
  }
  return { blockers: kept, resolved };
}
