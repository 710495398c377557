/**
 * A SWE-agent trajectory (`*.traj`, JSON) as the Chat Completions request SWE-agent sends next: one
 * JSONL line `{"model"?: …, "messages": [...]}`, which `compactor import --format openai-chat` reads.
 * The messages are the trajectory's `history`, mapped exactly as SWE-agent maps it before each call
 * (SWE-agent `sweagent/agent/models.py`, `_history_to_messages`, v1.x; `convert_system_to_user`
 * off, its default): a `tool` entry keeps `role`, `content` and the first of its `tool_call_ids` as
 * `tool_call_id`; an entry with `tool_calls` keeps `role`, `content`, `tool_calls`; every other
 * entry keeps `role` and `content`. SWE-agent's own bookkeeping (`agent`, `message_type`, `thought`,
 * `action`, `is_demo`) is what it leaves out of the request, and is left out here too.
 *
 *     tsx scripts/corpus/swe-agent-to-chat.ts TRAJ OUT.jsonl [MODEL]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpusValue } from './pi-to-corpus.ts';

/** One entry of a trajectory's `history`, as SWE-agent writes it. */
interface HistoryItem {
  role: string;
  content: unknown;
  tool_calls?: unknown[] | null;
  tool_call_ids?: string[];
  [field: string]: unknown;
}

/** A Chat Completions request message, as SWE-agent builds it from a history entry. */
type ChatMessage = Record<string, unknown>;

/**
 * The request messages SWE-agent builds from `history` (see the file comment).
 * @throws {Error} naming the entry when `history` is not a list of `{role, content}` objects or a
 *   `tool` entry has no `tool_call_ids`.
 */
export function historyToMessages(history: unknown): ChatMessage[] {
  if (!Array.isArray(history)) throw new Error('history: expected a list');
  return history.map((raw, i) => {
    const item = raw as HistoryItem;
    if (typeof item !== 'object' || item === null || typeof item.role !== 'string' || !('content' in item))
      throw new Error(`history[${i}]: expected an object with role and content`);
    if (item.role === 'tool') {
      const id = item.tool_call_ids?.[0];
      if (typeof id !== 'string') throw new Error(`history[${i}].tool_call_ids: expected a call id`);
      return { role: item.role, content: item.content, tool_call_id: id };
    }
    if (item.tool_calls !== undefined && item.tool_calls !== null)
      return { role: item.role, content: item.content, tool_calls: item.tool_calls };
    return { role: item.role, content: item.content };
  });
}

/** The JSONL text of a trajectory: one request line, with `model` when given, strings {@link corpusValue}. */
export function trajectoryToJsonl(trajectory: string, model?: string): string {
  const { history } = JSON.parse(trajectory) as { history?: unknown };
  const messages = corpusValue(historyToMessages(history));
  return `${JSON.stringify(model === undefined ? { messages } : { model, messages })}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [source, out, model] = process.argv.slice(2);
  if (!source || !out) {
    console.error('usage: tsx scripts/corpus/swe-agent-to-chat.ts TRAJ OUT.jsonl [MODEL]');
    process.exit(2);
  }
  writeFileSync(out, trajectoryToJsonl(readFileSync(source, 'utf8'), model));
}
