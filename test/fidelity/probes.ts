/**
 * Probes: questions an agent resuming after a compaction must answer, one file per corpus session
 * with more than 40 messages (`test/fidelity/probes/<session>.json`), each with a machine-gradable
 * answer. Pure: the schema, where a session is cut, the grader and the precision rules; reading
 * the files is probe-files.ts, the measure is probes-run.ts (`npm run fidelity:probes`).
 *
 * A probe applies at one point of the transcript (`at`): the prefix up to a third, two thirds or
 * the end of its messages ({@link pointCut}). Its answer is graded on a text (the rendered
 * checkpoint, with or without the kept live messages) by normalised substrings ({@link gradeExpect}).
 * Graded on the checkpoint alone, a probe whose answer only the kept messages state is asked as of
 * the last message that left ({@link aloneExpect}): no summary of the leaving messages can say what
 * came after them.
 */

import { z } from 'zod';
import type { Checkpoint } from '../../shared/summary/checkpoint.ts';
import { withoutCdSteps } from '../../shared/text/shell.ts';

/** What a probe asks. */
export const PROBE_TYPES = [
  /** What the agent was about to do next. */
  'nextStep',
  /** The test or build command in use. */
  'testCommand',
  /** The error still open at the cut, or "none" (then `noneOf` holds the stale error strings). */
  'unresolvedError',
  /** Rules and corrections the user (or the task's framing) gave. */
  'userRules',
  /** Files edited and how. */
  'filesChanged',
  /** The user's last real request, not a harness, slash-command or IDE notice. */
  'lastRequest',
  /** What the session is trying to achieve overall. */
  'goal',
  /** A choice made between alternatives, and its reason. */
  'decisions',
] as const;
export type ProbeType = (typeof PROBE_TYPES)[number];

/** Where in the transcript a probe applies, in the order a session is compacted. */
export const POINTS = ['third', 'twoThirds', 'end'] as const;
export type Point = (typeof POINTS)[number];

const needle = z
  .string()
  .min(2)
  .max(300)
  .refine((s) => s.trim() === s && normalise(s) === s.toLowerCase(), 'must be trimmed, with single spaces');

/** How an answer is graded: every `allOf`, one of each `anyOf` group, none of `noneOf`. */
export const expectSchema = z
  .object({
    allOf: z.array(needle).min(1).optional(),
    anyOf: z.array(z.array(needle).min(1)).min(1).optional(),
    noneOf: z.array(needle).min(1).optional(),
  })
  .strict()
  .refine((e) => e.allOf || e.anyOf || e.noneOf, 'needs allOf, anyOf or noneOf');
export type Expect = z.infer<typeof expectSchema>;

export const probeSchema = z
  .object({
    type: z.enum(PROBE_TYPES),
    at: z.enum(POINTS),
    question: z.string().min(5).max(500),
    expect: expectSchema,
    /** Where in the transcript the answer comes from, with seqs. */
    why: z.string().min(5).max(1_000),
    /**
     * The answer as it stood at the last message that leaves the context at this point, for a probe
     * whose `expect` only the kept messages state (what the agent did just after the cut). The
     * checkpoint alone is graded on this; with the kept messages, on `expect`. Absent: `expect`
     * answers both.
     */
    alone: z
      .object({
        /**
         * The last seq that leaves the context at this point (keepRecent 10), as the answer reads it;
         * a list when the answer was read at each of several cuts (a summary rejected by the fidelity
         * check under one summarizer and committed under the other moves the cut).
         */
        leavingThrough: z.union([
          z.number().int().nonnegative(),
          z.array(z.number().int().nonnegative()).min(1),
        ]),
        /**
         * Null when the answer is only in messages that never leave the context (a system message):
         * then the checkpoint alone is not asked.
         */
        expect: expectSchema.nullable(),
        why: z.string().min(5).max(1_000),
      })
      .strict()
      .optional(),
  })
  .strict();
export type Probe = z.infer<typeof probeSchema>;

/** zod schema of a probe file. */
export const probeFileSchema = z
  .object({
    session: z.string().regex(/^[\w.-]+$/),
    probes: z.array(probeSchema).min(1),
  })
  .strict();
export type ProbeFile = z.infer<typeof probeFileSchema>;

/**
 * What the checkpoint alone must answer: the probe's `alone` answer when it has one, else its
 * `expect`; null when the checkpoint alone is not asked (the answer never leaves the context).
 */
export function aloneExpect(probe: Probe): Expect | null {
  return probe.alone ? probe.alone.expect : probe.expect;
}

/** The cuts (last seqs leaving) a probe's `alone` answer was read at; [] without one. */
export function aloneCuts(probe: Probe): number[] {
  const through = probe.alone?.leavingThrough;
  return through === undefined ? [] : Array.isArray(through) ? through : [through];
}

/** Sessions with more than this many messages are probed. */
export const PROBED_MIN_MESSAGES = 41;

/**
 * How many messages the prefix of a point holds: a third (two thirds, all) of them, rounded,
 * moved past tool results so that a call and its answer stay on the same side.
 */
export function pointCut(messages: ReadonlyArray<{ kind: string }>, at: Point): number {
  const n = messages.length;
  let cut = Math.round((n * (POINTS.indexOf(at) + 1)) / 3);
  while (cut < n && messages[cut]?.kind === 'tool_result') cut++;
  return cut;
}

/** Lower case, whitespace runs as one space, trimmed: how texts and answers are compared. */
export function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * Whether `text` answers as `expect` says: all of `allOf`, one of each `anyOf` group, and none of
 * `noneOf` in `summaryText` (default `text`). Graded with the kept messages, `noneOf` is checked
 * against the checkpoint only: the kept messages are the transcript itself, which shows old errors
 * as they happened; what must not hold them is the summary that says where the work stands (the
 * caller passes the checkpoint without the errors it lists as fixed).
 */
export function gradeExpect(expect: Expect, text: string, summaryText: string = text): boolean {
  const t = normalise(text);
  const s = normalise(summaryText);
  return (
    (expect.allOf ?? []).every((n) => t.includes(normalise(n))) &&
    (expect.anyOf ?? []).every((group) => group.some((n) => t.includes(normalise(n)))) &&
    !(expect.noneOf ?? []).some((n) => s.includes(normalise(n)))
  );
}

/**
 * Stale blockers: checkpoint blockers naming an error the transcript shows resolved by the point.
 * Rule: a blocker is stale when it contains (normalised) a `noneOf` string of an `unresolvedError`
 * probe of that point; those strings are, by how probes are written, errors seen earlier in the
 * transcript and fixed before the cut.
 */
export function staleBlockers(checkpoint: Checkpoint, probes: Probe[]): string[] {
  const stale = probes
    .filter((p) => p.type === 'unresolvedError')
    .flatMap((p) => p.expect.noneOf ?? [])
    .map(normalise);
  return checkpoint.blockers.map((b) => b.text).filter((b) => stale.some((s) => normalise(b).includes(s)));
}

/** A transcript message, as much as the precision rules read. */
export interface TranscriptLike {
  seq: number;
  role: string;
  kind: string;
  content: string;
  toolCallId: string | null;
}

/**
 * Whether a tool result reports a failure: a non-zero exit (`<returncode>N`, OpenHands' "exit code
 * N"), a Python traceback, a tool-use error, a rejection or interruption by the user, an unknown
 * command or missing file, or SWE-agent's refused edits. Independent of the extractive
 * summarizer's own error detection, which it measures.
 */
export function isFailedResult(content: string): boolean {
  const head = content.slice(0, 4_000);
  return (
    /<returncode>\s*-?[1-9]\d*\s*<\/returncode>/.test(head) ||
    /executed with exit code [1-9]/.test(content.slice(-500)) ||
    /Traceback \(most recent call last\)/.test(content) ||
    /<tool_use_error>/.test(head) ||
    /The user doesn't want to proceed with this tool use|\[Request interrupted by user/.test(head) ||
    /^(?:Error|ERROR)\b/.test(head.trimStart()) ||
    /command not found|No such file or directory/.test(head) ||
    /Your proposed edit has introduced new syntax error|Usage: (?:edit|open|goto|create)\b/.test(head)
  );
}

/**
 * A tool call's key: its shell command, else its file argument, normalised (null when neither),
 * and whether it is an edit (an editor's `create`/`str_replace`/`insert`, or an edit/write tool).
 */
export function callKey(callContent: string): { command: string | null; path: string | null; edit: boolean } {
  let json: unknown;
  try {
    json = JSON.parse(callContent);
  } catch {
    return { command: normalise(callContent).slice(0, 200) || null, path: null, edit: false };
  }
  const record = (v: unknown): Record<string, unknown> =>
    v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  let args: unknown = record(json).arguments ?? record(json).input;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      args = { command: args };
    }
  }
  const a = record(args);
  const str = (k: string) => (typeof a[k] === 'string' && (a[k] as string).trim() ? (a[k] as string) : null);
  const command = str('command') ?? str('cmd');
  const path = str('path') ?? str('file_path') ?? str('filename');
  const editorSub = command !== null && /^(?:view|create|str_replace|insert|undo_edit)$/.test(command);
  const name = typeof record(json).name === 'string' ? (record(json).name as string) : '';
  return {
    // `cd /repo && x` runs x: the same call as `x` written without it.
    command: command && !editorSub ? normalise(withoutCdSteps(command)).slice(0, 200) : null,
    path: path ? normalise(path) : null,
    edit: editorSub ? command !== 'view' : /edit|write|create|replace|insert/i.test(name) && command === null,
  };
}

/**
 * Failures listed as completed: `completed` items that describe a tool call whose result was a
 * failure ({@link isFailedResult}) with no later success of the same call in `messages` (the
 * prefix compacted). An item describes a shell call when it holds the command's first 40
 * characters (normalised; the extractive summarizer writes `ran: <command>`), and an edit when it
 * names the file with an edit verb and every edit of that file failed.
 */
export function failedCompleted(checkpoint: Checkpoint, messages: TranscriptLike[]): string[] {
  const results = new Map<string, TranscriptLike>();
  for (const m of messages) if (m.kind === 'tool_result' && m.toolCallId) results.set(m.toolCallId, m);
  const commands = new Map<string, boolean>(); // command prefix → last outcome ok
  const edits = new Map<string, boolean>(); // path → any edit ok
  for (const m of messages) {
    if (m.kind !== 'tool_call' || !m.toolCallId) continue;
    const result = results.get(m.toolCallId);
    if (!result) continue;
    const ok = !isFailedResult(result.content);
    const { command, path, edit } = callKey(m.content);
    if (command !== null) commands.set(command.slice(0, 40), ok);
    else if (path !== null && edit) edits.set(path, (edits.get(path) ?? false) || ok);
  }
  const failedCommands = [...commands].filter(([c, ok]) => !ok && c.length >= 8).map(([c]) => c);
  const failedEdits = [...edits].filter(([, ok]) => !ok).map(([p]) => p);
  return checkpoint.completed
    .map((item) => item.text)
    .filter((item) => {
      const t = normalise(item);
      if (failedCommands.some((c) => t.includes(c))) return true;
      return /\b(?:edited|created|wrote)\b/.test(t) && failedEdits.some((p) => t.includes(p));
    });
}

/**
 * Harness, slash-command and meta messages: not a user's request. A goal or last request that is
 * one (after the IDE notices and system reminders a real request may carry are taken off) was
 * taken from the wrong message.
 */
export const META_PATTERNS: RegExp[] = [
  /^\s*\/[\w:-]+(?:\s|$)/, // starts with a slash command, `/status`
  /<command-(?:name|message|args)>/,
  /<local-command-(?:stdout|stderr|caveat)>/,
  /\[Request interrupted by user/,
  /<task-notification>/,
  /Your last tool call was malformed/i,
  /^\s*Tool call error:/, // mini-swe-agent's format error notice
  /Here is general guidance on how to submit correct toolcalls/i,
  /^\s*Caveat: The messages below were generated by the user/,
];

const NOTICES = /<(ide_opened_file|ide_selection|system-reminder)>[\s\S]*?<\/\1>/g;

/** Whether a goal or request text comes from a harness, slash-command or meta message. */
export function isMetaText(text: string): boolean {
  if (!text.trim()) return false;
  const rest = text.replace(NOTICES, '').trim();
  if (!rest) return true;
  const head = rest.slice(0, 500);
  return META_PATTERNS.some((p) => p.test(head));
}
