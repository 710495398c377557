/** Input hygiene: which messages can be summarized, and the previous checkpoint made valid. */

import type { Message } from '../contract/message.ts';
import {
  type Checkpoint,
  type CheckpointEntry,
  checkpointSchema,
  emptyCheckpoint,
  errorFixSchema,
  fileSchema,
  type StoredCheckpoint,
} from '../summary/checkpoint.ts';
import { clipRequest } from '../summary/last-request.ts';
import { cleanItem, clipWords, isRecord } from '../text/text.ts';
import { extractWorkingSet } from '../working-set/working-set.ts';
import { MAX_WORKING_SET } from './limits.ts';

/** Whether a message can be summarized: an object with text content, not a summary or system message. */
export function isUsable(message: Message): boolean {
  return (
    message !== null &&
    typeof message === 'object' &&
    typeof message.content === 'string' &&
    message.kind !== 'summary' &&
    message.role !== 'system'
  );
}

const ENTRY_LISTS = [
  'userInstructions',
  'completed',
  'inProgress',
  'pending',
  'blockers',
  'decisions',
  'openQuestions',
  'discoveries',
  'commands',
] as const;

/**
 * The previous checkpoint as a valid one, whatever was stored: the current shape, an older one
 * (string items; see `checkpointSchema`), or a broken one (invalid items dropped or clipped).
 */
export function safePrevious(previous: Checkpoint | StoredCheckpoint | null): Checkpoint {
  if (previous === null || typeof previous !== 'object') return emptyCheckpoint();
  const parsed = checkpointSchema.safeParse(previous);
  if (parsed.success) return parsed.data;
  const raw = previous as unknown as Record<string, unknown>;
  const out = emptyCheckpoint();
  out.goal = typeof raw.goal === 'string' ? clipWords(raw.goal, 4_000) : '';
  out.lastUserRequest = typeof raw.lastUserRequest === 'string' ? clipRequest(raw.lastUserRequest) : '';
  for (const key of ENTRY_LISTS) out[key] = entries(raw[key]).slice(-100);
  out.currentWork = entries([raw.currentWork])[0] ?? null;
  out.nextStep = entries([raw.nextStep])[0] ?? null;
  out.errorsAndFixes = valid(raw.errorsAndFixes, errorFixSchema).slice(-100);
  out.files = valid(raw.files, fileSchema).slice(0, 200);
  const paths: unknown = raw.workingSet;
  out.workingSet = extractWorkingSet([], Array.isArray(paths) ? paths : []).slice(0, MAX_WORKING_SET);
  return out;
}

/** Strings and `{text, seq}` objects as clean entries; anything else dropped. */
function entries(value: unknown): CheckpointEntry[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v): CheckpointEntry[] => {
    const text = typeof v === 'string' ? v : isRecord(v) && typeof v.text === 'string' ? v.text : '';
    const seq = isRecord(v) && typeof v.seq === 'number' && Number.isInteger(v.seq) ? v.seq : null;
    const clean = cleanItem(text, 2_000);
    return clean ? [{ text: clean, seq }] : [];
  });
}

function valid<T>(
  value: unknown,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
): T[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v) => {
    const parsed = schema.safeParse(v);
    return parsed.success ? [parsed.data] : [];
  });
}
