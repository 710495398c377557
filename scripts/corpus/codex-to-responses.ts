/**
 * An OpenAI Codex CLI rollout file (`~/.codex/sessions/…/rollout-*.jsonl`) as a Responses API
 * request: one JSONL line `{"model": …, "input": [...]}`. A rollout line is `{timestamp, type,
 * payload}`; the lines of type `response_item` hold the items Codex keeps as its conversation and
 * sends back as `input` (messages, `reasoning` with its `encrypted_content`, `function_call`,
 * `function_call_output`, `custom_tool_call`, `web_search_call`, …). Their payloads are kept whole,
 * in file order; `model` is the last `turn_context`'s. The other lines (`session_meta`,
 * `turn_context`, `event_msg`: UI events, token counts, and copies of what the items already say)
 * are not part of the conversation and are left out; so is the base instructions text of
 * `session_meta`, which Codex sends as the request's `instructions`, not as an input item.
 * (Format: codex-rs `protocol/src/protocol.rs` `RolloutItem`/`RolloutLine`, `models.rs` `ResponseItem`.)
 *
 *     tsx scripts/corpus/codex-to-responses.ts ROLLOUT.jsonl OUT.jsonl
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpusValue } from './pi-to-corpus.ts';

/** One line of a rollout file. */
interface RolloutLine {
  type?: unknown;
  payload?: { model?: unknown; [field: string]: unknown };
}

/** The Responses request a rollout's conversation makes. */
export interface ResponsesRequest {
  model: string;
  input: Record<string, unknown>[];
}

/**
 * The request of a rollout's text (see the file comment).
 * @throws {Error} naming the line when a line is not JSON or a `response_item` has no typed
 *   payload, or when no `turn_context` names a model or no line is a `response_item`.
 */
export function rolloutToRequest(text: string): ResponsesRequest {
  let model: string | undefined;
  const input: Record<string, unknown>[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    let line: RolloutLine;
    try {
      line = JSON.parse(raw) as RolloutLine;
    } catch (error) {
      throw new Error(`line ${i + 1}: not JSON (${(error as Error).message})`);
    }
    if (line.type === 'turn_context' && typeof line.payload?.model === 'string') model = line.payload.model;
    if (line.type !== 'response_item') return;
    if (typeof line.payload !== 'object' || line.payload === null || typeof line.payload.type !== 'string')
      throw new Error(`line ${i + 1}: payload: expected a response item with a type`);
    input.push(line.payload);
  });
  if (model === undefined) throw new Error('no turn_context names the model');
  if (input.length === 0) throw new Error('no response_item line');
  return { model, input };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [source, out] = process.argv.slice(2);
  if (!source || !out) {
    console.error('usage: tsx scripts/corpus/codex-to-responses.ts ROLLOUT.jsonl OUT.jsonl');
    process.exit(2);
  }
  writeFileSync(out, `${JSON.stringify(corpusValue(rolloutToRequest(readFileSync(source, 'utf8'))))}\n`);
}
