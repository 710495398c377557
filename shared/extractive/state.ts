/** Where the agent stands at the cutoff: in progress, pending, the current work and the next step. */
import type { Message } from '../contract/message.ts';
import type { Outcome } from '../text/error-lines.ts';
import { cleanItem, clipWords, isRecord, isThinking, sentences } from '../text/text.ts';
import { describeCall } from './describe-call.ts';
import { recentFocus } from './focus.ts';
import { trailingIntents } from './intents.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';
import type { ToolRun } from './tool-runs.ts';

/** What {@link currentState} found; `todosDone` go to completed work. */
export interface CurrentState {
  inProgress: Item[];
  pending: Item[];
  todosDone: Item[];
  currentWork: Item | null;
  nextStep: Item | null;
}

/** A todo list: its items by status, and the seq of the message that holds it. */
interface TodoList {
  seq: number;
  done: string[];
  active: string[];
  open: string[];
}

/**
 * Where the agent stands at the cutoff: calls without a result, the latest todo list (a tool call
 * whose arguments hold `todos: [{content, status}]`, or a checklist printed in any message:
 * `☐`/`☒`/`☑`/`✔`, `- [ ]`/`- [x]`), and the intents the agent stated after its last tool result
 * ("Next I will run the tests"). The current work is the todo in progress, else a call still
 * running, else the agent's last words (less the next step they state) and the call they led to,
 * else its last call; the next step is the first open todo, else the first intent.
 */
export function currentState(
  messages: Message[],
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
): CurrentState {
  const inProgress: Item[] = [];
  const pending: Item[] = [];
  const todosDone: Item[] = [];
  for (const run of runs.values()) {
    if (!run.result)
      inProgress.push({ text: `waiting for result: ${describeCall(run).text}`, seq: run.call.seq });
  }
  const todos = latestTodoList(messages, runs);
  if (todos) {
    const item = (text: string) => ({ text: cleanItem(text, ITEM_CHARS), seq: todos.seq });
    inProgress.push(...todos.active.map(item));
    pending.push(...todos.open.map(item));
    todosDone.push(...todos.done.map(item));
  }
  const intents = trailingIntents(messages);
  pending.push(...intents);
  const nextStep = (todos ? pending[0] : undefined) ?? intents[0] ?? null;
  // The agent's last words are often the intent already shown as the next step: then not again.
  const words = lastWords(messages, runs, ended);
  const said =
    words && nextStep ? words.text.replace(nextStep.text, '').replace(/\s+/g, ' ').trim() : words?.text;
  const spoken = words && said && !/^→/.test(said) ? { ...words, text: said } : null;
  // Failing those, the last call and how it ended.
  const current = inProgress[inProgress.length - 1] ?? spoken ?? lastCall(runs, ended);
  // The names the agent's last messages keep coming back to say what "that function" is.
  const focus = current ? recentFocus(messages, runs, `${current.text} ${nextStep?.text ?? ''}`) : [];
  const named = `(focus: ${focus.join(', ')})`;
  const currentWork =
    current && focus.length > 0
      ? { ...current, text: `${clipWords(current.text, ITEM_CHARS - named.length - 1)} ${named}` }
      : current;
  return { inProgress, pending, todosDone, currentWork, nextStep };
}

/** The latest todo list of the messages, from a tool's `todos` argument or a printed checklist. */
function latestTodoList(messages: Message[], runs: Map<number, ToolRun>): TodoList | null {
  let latest: TodoList | null = null;
  for (const run of runs.values()) {
    if (!Array.isArray(run.args.todos)) continue;
    const list: TodoList = { seq: run.call.seq, done: [], active: [], open: [] };
    for (const todo of run.args.todos as unknown[]) {
      if (!isRecord(todo)) continue;
      const text = String(todo.content ?? todo.title ?? todo.text ?? todo.task ?? '').trim();
      const status = String(todo.status ?? '').toLowerCase();
      if (!text) continue;
      if (/progress|active|doing/.test(status)) list.active.push(text);
      else if (/complete|done/.test(status)) list.done.push(text);
      else if (/pending|todo|open|not.?started/.test(status)) list.open.push(text);
    }
    if (!latest || list.seq >= latest.seq) latest = list;
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m || m.kind === 'tool_call' || (latest && m.seq <= latest.seq)) continue;
    const printed = checklist(m.content, m.seq);
    if (printed) return printed;
  }
  return latest;
}

/** A checkbox opening a line (after a list marker), white space after it. */
const CHECK_BOX = /^\s*(?:[-*+]\s+|\d+[.)]\s+)?(☐|☒|☑|✅|✔|✓|⬜|◻|◼|🔄|\[[ xX~-]\])(?=\s)/u;
/** Line breaks other than `\n`: a task never spans one. */
const LINE_BREAK = /[\r\u2028\u2029]/;

/** A checklist printed in a text (at least two checkbox lines), or null. */
export function checklist(text: string, seq: number): TodoList | null {
  const list: TodoList = { seq, done: [], active: [], open: [] };
  let count = 0;
  for (const line of text.slice(0, 50_000).split('\n')) {
    const match = CHECK_BOX.exec(line);
    if (!match) continue;
    // The task: the rest of the line, trimmed. (A pattern `\s+(.+?)\s*$` took it before: on a long
    // run of spaces inside the line, it read the run again from each of its positions.)
    const body = line.slice(match[0].length).trim();
    if (body === '' || LINE_BREAK.test(body)) continue;
    const box = match[1] ?? '';
    const task = body.replace(/~~/g, '').trim();
    if (task.length < 2) continue;
    count++;
    if (/[☒☑✅✔✓◼]|\[[xX]\]/u.test(box)) list.done.push(task);
    else if (/🔄|\[[~-]\]/u.test(box)) list.active.push(task);
    else list.open.push(task);
  }
  return count >= 2 ? list : null;
}

/**
 * The agent's last words (the first two sentences of its last prose message, wherever it stands)
 * and, when it called tools after them, its last call and how it ended: what the agent was doing at
 * the cutoff. Agents that write a thought before each call (SWE-agent, mini-swe-agent, OpenHands)
 * state their current focus there, before the call, not after its result. Null without prose.
 */
function lastWords(
  messages: Message[],
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
): Item | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'assistant' || m.kind !== 'message' || isThinking(m.content)) continue;
    const said = sentences(m.content)
      .filter((s) => s.length >= 12)
      .slice(0, 2)
      .join(' ');
    if (!said) continue;
    let after: [number, ToolRun] | null = null;
    for (const entry of runs) if (entry[0] > i && (!after || entry[0] > after[0])) after = entry;
    const call = after
      ? ` → ${describeCall(after[1]).text} (${ended.get(after[0]) ?? 'waiting for its result'})`
      : '';
    return {
      text: clipWords(clipWords(said, ITEM_CHARS - Math.min(call.length, 150)) + call, ITEM_CHARS),
      seq: m.seq,
    };
  }
  return null;
}

/** The agent's last call and how it ended, or null. */
function lastCall(runs: Map<number, ToolRun>, ended: Map<number, Outcome>): Item | null {
  let last: [number, ToolRun] | null = null;
  for (const entry of runs) if (!last || entry[0] > last[0]) last = entry;
  if (!last) return null;
  const [index, run] = last;
  const how = ended.get(index) ?? 'waiting for its result';
  return { text: clipWords(`last call: ${describeCall(run).text} (${how})`, ITEM_CHARS), seq: run.call.seq };
}
