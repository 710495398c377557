/** Where the agent stands at the cutoff: in progress and pending. */
import type { Message } from '../contract/message.ts';
import { describeCall } from './describe-call.ts';
import { trailingIntents } from './intents.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';
import { cleanItem, isRecord } from './text.ts';
import type { ToolRun } from './tool-runs.ts';

/** What {@link currentState} found; `todosDone` go to completed work. */
export interface CurrentState {
  inProgress: Item[];
  pending: Item[];
  todosDone: Item[];
}

/**
 * Where the agent stands at the cutoff: calls without a result, the latest todo list (any tool whose
 * arguments hold `todos: [{content, status}]`), and the intents the agent stated after its last tool
 * result ("Next I will run the tests").
 */
export function currentState(messages: Message[], runs: Map<number, ToolRun>): CurrentState {
  const inProgress: Item[] = [];
  const pending: Item[] = [];
  const todosDone: Item[] = [];
  let latestTodos: ToolRun | undefined;
  for (const run of runs.values()) {
    if (Array.isArray(run.args.todos)) latestTodos = run;
    if (!run.result)
      inProgress.push({ text: `waiting for result: ${describeCall(run).text}`, seq: run.call.seq });
  }
  if (latestTodos) {
    for (const todo of latestTodos.args.todos as unknown[]) {
      if (!isRecord(todo)) continue;
      const text = cleanItem(String(todo.content ?? todo.title ?? todo.text ?? todo.task ?? ''), ITEM_CHARS);
      const status = String(todo.status ?? '').toLowerCase();
      if (!text) continue;
      const item = { text, seq: latestTodos.call.seq };
      if (/progress|active|doing/.test(status)) inProgress.push(item);
      else if (/complete|done/.test(status)) todosDone.push(item);
      else if (/pending|todo|open|not.?started/.test(status)) pending.push(item);
    }
  }
  pending.push(...trailingIntents(messages));
  return { inProgress, pending, todosDone };
}
