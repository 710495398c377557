/** Tool calls paired with their results, and the arguments they were called with. */
import type { Message } from '../contract/message.ts';
import { isRecord, parseJson } from '../text/text.ts';

/** A tool call, what it asked for, and its result when the leaving messages hold it. */
export interface ToolRun {
  index: number;
  call: Message;
  name: string;
  args: Record<string, unknown>;
  result: Message | null;
  resultIndex: number;
}

/** Pairs each tool call with the first later result of the same `toolCallId`. */
export function pairToolCalls(messages: Message[]): Map<number, ToolRun> {
  const runs = new Map<number, ToolRun>();
  const waiting = new Map<string, ToolRun[]>();
  messages.forEach((m, index) => {
    if (m.kind === 'tool_call') {
      const run: ToolRun = { index, call: m, ...parseCall(m), result: null, resultIndex: -1 };
      runs.set(index, run);
      if (m.toolCallId) waiting.set(m.toolCallId, [...(waiting.get(m.toolCallId) ?? []), run]);
    } else if (m.kind === 'tool_result' && m.toolCallId) {
      const run = waiting.get(m.toolCallId)?.shift();
      if (run) {
        run.result = m;
        run.resultIndex = index;
      }
    }
  });
  return runs;
}

/** The tool name and arguments of a call: `{"name", "arguments"}` (arguments possibly a JSON string). */
function parseCall(m: Message): { name: string; args: Record<string, unknown> } {
  const fallback = m.toolName ?? 'tool';
  const json = parseJson(m.content);
  if (!isRecord(json)) return { name: fallback, args: { command: m.content } };
  const name = typeof json.name === 'string' && json.name ? json.name : fallback;
  let args: unknown = json.arguments ?? json.input ?? json.args ?? json.parameters;
  if (args === undefined && !('name' in json)) args = json;
  if (typeof args === 'string') args = parseJson(args) ?? { command: args };
  return { name, args: isRecord(args) ? args : {} };
}

/** The file a call names (`path`, `file_path`, `filename`, ...): one line, trimmed; else null. */
export function pathArgument(args: Record<string, unknown>): string | null {
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== 'string' || !value.trim() || value.includes('\n')) continue;
    if (/^(?:path|file|file_?path|file_?name|filename|notebook_?path|target_?file)$/i.test(key))
      return value.trim();
  }
  return null;
}

/** The first of `keys` whose argument is a non-blank string, trimmed; else null. */
export function stringArgument(args: Record<string, unknown>, keys: string[]): string | null {
  for (const key of keys) {
    const value = args[key];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  return null;
}
