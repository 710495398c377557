/**
 * The answer every LLM summarizer asks for, whichever API carries it: the JSON schema of a
 * checkpoint opened by the `analysis` scratch field (the Messages API's forced tool input, Chat
 * Completions' `response_format` or forced function), and how an answer's JSON becomes a stored
 * checkpoint. One source, so that the `anthropic` and `openai` summarizers ask for and accept
 * exactly the same thing. Pure: no I/O, no SDK types.
 */
import { z } from 'zod';
import { SummaryRejectedError } from '../contract/errors.ts';
import { sanitizePath } from '../working-set/working-set.ts';
import { type Checkpoint, checkpointSchema } from './checkpoint.ts';
import { ANALYSIS_DESCRIPTION, ANALYSIS_FIELD } from './prompt.ts';

/** Most working-set paths a checkpoint holds (the schema's bound). */
const MAX_WORKING_SET = 10_000;

/** A JSON schema object, as the APIs take it. */
export type JsonSchema = Record<string, unknown>;

/**
 * The JSON schema of {@link checkpointSchema} (zod 4's `toJSONSchema`, output types, without
 * `$schema`, which no API needs) opened by a required string property `analysis`: the model
 * reasons there before it writes the checkpoint (JSON properties come out in schema order), and
 * {@link checkpointFromAnswer} drops it before validation. `media` is left out: compactor fills it.
 */
export const CHECKPOINT_ANSWER_SCHEMA: JsonSchema = (() => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(checkpointSchema) as JsonSchema;
  // `media` is compactor's list (shared/summary/media.ts), never the model's: not asked for.
  const { media: _media, ...properties } = schema.properties as JsonSchema;
  const required = (schema.required as string[]).filter((key) => key !== 'media');
  return {
    ...schema,
    type: 'object',
    properties: { [ANALYSIS_FIELD]: { type: 'string', description: ANALYSIS_DESCRIPTION }, ...properties },
    required: [ANALYSIS_FIELD, ...required],
  };
})();

/**
 * Keywords outside the strict subset of OpenAI's Structured Outputs (guide "Structured model
 * outputs", developers.openai.com/api/docs/guides/structured-outputs, read 2026-11): `default` has
 * no meaning there, and `minLength`/`maxLength` are not among the supported string keywords.
 * {@link checkpointFromAnswer} still enforces every bound with zod.
 */
const UNSUPPORTED_KEYWORDS = new Set(['default', 'minLength', 'maxLength', '$schema']);

/**
 * `schema` in the strict subset of OpenAI's Structured Outputs (same guide): every object lists
 * all its properties as `required` and has `additionalProperties: false`; the keywords of
 * {@link UNSUPPORTED_KEYWORDS} are dropped, and so are the integer bounds zod writes for
 * `.int()` (±2^53−1), which say nothing. Fields that may be absent in a stored checkpoint are
 * required here: the model always writes them (an empty list, or null where the type allows it).
 * Pure; returns a new object.
 */
export function strictJsonSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (UNSUPPORTED_KEYWORDS.has(key)) continue;
    if ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER)
      continue;
    out[key] = strictValue(key, value);
  }
  if (out.type === 'object' && typeof out.properties === 'object' && out.properties !== null) {
    out.required = Object.keys(out.properties);
    out.additionalProperties = false;
  }
  return out;
}

function strictValue(key: string, value: unknown): unknown {
  if (key === 'properties' && isObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, isObject(v) ? strictJsonSchema(v) : v]),
    );
  }
  if (Array.isArray(value)) return value.map((v) => (isObject(v) ? strictJsonSchema(v) : v));
  if (isObject(value) && (key === 'items' || key === '$defs' || key === 'definitions')) {
    return key === 'items'
      ? strictJsonSchema(value)
      : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObject(v) ? strictJsonSchema(v) : v]));
  }
  return value;
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An answer without its `analysis` scratch field, which is never validated nor stored. */
export function withoutAnalysis(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const { [ANALYSIS_FIELD]: _discarded, ...checkpoint } = input as Record<string, unknown>;
  return checkpoint;
}

/**
 * Whether a checkpoint says nothing: goal, last request and every list blank. The working set and
 * the media list are not counted: the model can copy the paths from the prompt without having summarized anything.
 */
export function isEmptyCheckpoint(checkpoint: Checkpoint): boolean {
  const { workingSet: _paths, media: _media, ...rest } = checkpoint;
  return Object.values(rest).every((v) =>
    v === null ? true : Array.isArray(v) ? v.length === 0 : typeof v === 'string' ? v.trim() === '' : false,
  );
}

/**
 * The checkpoint of an answer's JSON (the tool input, or the parsed `response_format` content):
 * `analysis` dropped, validated with {@link checkpointSchema}, then its working set set to the
 * paths compactor extracted (`workingSet`, most recent first) followed by any the model added
 * (sanitized like compactor's). Pure.
 * @param ref names the answer in error messages (`message msg_..., request-id req_...`).
 * @throws {SummaryRejectedError} when the answer breaks the schema (the message names the field)
 *   or says nothing (every field but the working set empty).
 */
export function checkpointFromAnswer(answer: unknown, workingSet: string[], ref: string): Checkpoint {
  const parsed = checkpointSchema.safeParse(withoutAnalysis(answer));
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => {
      const where = i.path.length > 0 ? i.path.join('.') : 'checkpoint';
      return `${where}: ${i.message}`;
    });
    throw new SummaryRejectedError(`invalid checkpoint (${ref}): ${problems.join('; ')}`);
  }
  if (isEmptyCheckpoint(parsed.data)) {
    throw new SummaryRejectedError(`empty checkpoint: every field but workingSet is blank (${ref})`);
  }
  const extras = parsed.data.workingSet.map(sanitizePath);
  const merged = [...new Set([...workingSet, ...extras])].slice(0, MAX_WORKING_SET);
  const final = checkpointSchema.safeParse({ ...parsed.data, workingSet: merged });
  if (!final.success) {
    throw new SummaryRejectedError(
      `invalid working set (${ref}): ${final.error.issues[0]?.message ?? 'unknown'}`,
    );
  }
  return final.data;
}
