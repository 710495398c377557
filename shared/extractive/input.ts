/** Input hygiene: which messages can be summarized, and the previous checkpoint made valid. */

import type { Message } from '../contract/message.ts';
import { type Checkpoint, checkpointSchema, emptyCheckpoint } from '../summary/checkpoint.ts';
import { clipRequest } from '../summary/last-request.ts';
import { extractWorkingSet } from '../working-set/working-set.ts';
import { MAX_WORKING_SET, TRIM_ORDER } from './limits.ts';
import { cleanItem, clipWords } from './text.ts';

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

/** The previous checkpoint as a valid one, whatever was stored (invalid items dropped or clipped). */
export function safePrevious(previous: Checkpoint | null): Checkpoint {
  if (previous === null || typeof previous !== 'object') return emptyCheckpoint();
  const parsed = checkpointSchema.safeParse(previous);
  if (parsed.success) return parsed.data;
  const out = emptyCheckpoint();
  out.goal = typeof previous.goal === 'string' ? clipWords(previous.goal, 4_000) : '';
  out.lastUserRequest =
    typeof previous.lastUserRequest === 'string' ? clipRequest(previous.lastUserRequest) : '';
  for (const key of TRIM_ORDER) {
    const values: unknown = previous[key];
    out[key] = (Array.isArray(values) ? values : [])
      .filter((v): v is string => typeof v === 'string')
      .map((v) => cleanItem(v, 2_000))
      .filter((v) => v.length > 0)
      .slice(-200);
  }
  const paths: unknown = previous.workingSet;
  out.workingSet = extractWorkingSet([], Array.isArray(paths) ? paths : []).slice(0, MAX_WORKING_SET);
  return out;
}
