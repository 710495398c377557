/**
 * The checkpoint: the structured summary a `summarize` compaction leaves behind. Stored in
 * `sessions.checkpoint` and rendered as the text of the summary message. Each compaction merges the
 * previous checkpoint with the messages now leaving.
 */
import { z } from 'zod';
import { formatWorkingSetForPrompt } from '../working-set/working-set.ts';

const item = z.string().min(1).max(2_000);
const list = z.array(item).max(200);

/** zod schema of a checkpoint; also the input schema of the LLM's forced tool call. */
export const checkpointSchema = z
  .object({
    /** What the session is for, in one or two sentences. */
    goal: z.string().max(4_000),
    /** The last request the user made, verbatim (clipped with a marker when huge). */
    lastUserRequest: z.string().max(20_000),
    completed: list,
    inProgress: list,
    pending: list,
    blockers: list,
    decisions: list,
    openQuestions: list,
    /** File paths the agent worked with, most recent first; all of them, not only the prompt's 20. */
    workingSet: z.array(z.string().min(1).max(300)).max(10_000),
  })
  .strict();

export type Checkpoint = z.infer<typeof checkpointSchema>;

/** An empty checkpoint, the "previous" of a first compaction. */
export function emptyCheckpoint(): Checkpoint {
  return {
    goal: '',
    lastUserRequest: '',
    completed: [],
    inProgress: [],
    pending: [],
    blockers: [],
    decisions: [],
    openQuestions: [],
    workingSet: [],
  };
}

/** The checkpoint's list sections and their titles, in the order a summary shows them. */
export const CHECKPOINT_SECTIONS = [
  ['completed', 'Completed'],
  ['inProgress', 'In progress'],
  ['pending', 'Pending'],
  ['blockers', 'Blockers and errors'],
  ['decisions', 'Decisions'],
  ['openQuestions', 'Open questions'],
] as const satisfies ReadonlyArray<readonly [keyof Checkpoint, string]>;

/**
 * Renders a checkpoint as the text of the summary message the agent reads on its next run. The
 * working set shows its 20 most recent paths and how many more the checkpoint holds.
 * @param coveredThroughSeq the highest seq the summary covers.
 */
export function renderCheckpoint(checkpoint: Checkpoint, coveredThroughSeq: number): string {
  return [
    `[compactor summary of messages up to seq ${coveredThroughSeq}]`,
    ...checkpointSections(checkpoint),
  ].join('\n\n');
}

/**
 * The checkpoint's sections as text, without the header that names seqs: what a model is shown
 * (shared/context/render.ts frames it for the model).
 */
export function renderCheckpointBody(checkpoint: Checkpoint): string {
  return checkpointSections(checkpoint).join('\n\n');
}

/** The header line {@link renderCheckpoint} starts with, to take it off a stored summary's text. */
export const CHECKPOINT_HEADER = /^\[compactor summary of messages up to seq -?\d+\]\n*/;

function checkpointSections(checkpoint: Checkpoint): string[] {
  const out: string[] = [];
  if (checkpoint.goal) out.push(`Goal: ${checkpoint.goal}`);
  if (checkpoint.lastUserRequest) out.push(`Last user request (verbatim):\n${checkpoint.lastUserRequest}`);
  for (const [key, title] of CHECKPOINT_SECTIONS) {
    const values = checkpoint[key] as string[];
    if (values.length > 0) out.push(`${title}:\n${values.map((v) => `- ${v}`).join('\n')}`);
  }
  // The 20 most recent paths, then a count: the message stays short; the checkpoint keeps them all.
  if (checkpoint.workingSet.length > 0) {
    out.push(`Working set (files, most recent first):\n${formatWorkingSetForPrompt(checkpoint.workingSet)}`);
  }
  return out;
}
