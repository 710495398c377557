/**
 * Media by reference: the checkpoint's list of the images and documents that left the live
 * history (`Checkpoint.media`), so a summary says what media the agent no longer sees and by which
 * seq it reads them back (recall). compactor computes the list from the leaving messages
 * (shared/contract/media-refs.ts) and merges it with the previous checkpoint's, the way the working
 * set is kept: no summarizer writes or drops it ({@link mergeMedia} runs in `guardCheckpoint`).
 * Pure.
 */
import { z } from 'zod';
import { CAPTION_CHARS, MEDIA_SOURCES, type MediaRef } from '../contract/media-refs.ts';
import type { Message } from '../contract/message.ts';

/** Most media a checkpoint keeps, the newest (highest seq) ones. */
export const MAX_MEDIA = 1_000;

/** Media a rendered summary lists, the newest ones; a count stands for the rest. */
export const RENDERED_MEDIA = 20;

/** zod schema of one listed media item (shared/contract/media-refs.ts, `MediaRef`). */
export const mediaRefSchema = z
  .object({
    seq: z.number().int(),
    index: z.number().int().min(0),
    kind: z.enum(['image', 'document']),
    mediaType: z.string().min(1).max(120).nullable(),
    source: z.enum(MEDIA_SOURCES),
    bytes: z.number().int().min(0).nullable(),
    tokens: z.number().int().min(0),
    caption: z.string().min(1).max(CAPTION_CHARS).nullable(),
  })
  .strict();

/** The media of the leaving messages (each message's `media`), in seq order. */
export function mediaOfLeaving(leaving: readonly Message[]): MediaRef[] {
  return leaving.flatMap((m) => m.media ?? []);
}

/**
 * `previous` (the last checkpoint's list) with `leaving` added: one item per `(seq, index)`, the
 * newer reading winning, ascending by seq then index, at most {@link MAX_MEDIA} (the newest).
 */
export function mergeMedia(previous: readonly MediaRef[], leaving: readonly MediaRef[]): MediaRef[] {
  const byKey = new Map<string, MediaRef>();
  for (const m of [...previous, ...leaving]) byKey.set(`${m.seq}:${m.index}`, m);
  const all = [...byKey.values()].sort((a, b) => a.seq - b.seq || a.index - b.index);
  return all.slice(Math.max(0, all.length - MAX_MEDIA));
}
