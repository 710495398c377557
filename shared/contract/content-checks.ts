/**
 * The input rules every message meets before it is stored, whichever way it comes in (the HTTP API,
 * the client library, `compactor import`): what makes a message harmful to store rather than
 * merely unusual. Each check answers the first problem as a field and a sentence; the callers turn
 * it into their own error (a 400 naming the field, an `InvalidInputError`). Pure: no I/O, and no
 * recursion, so no input can exhaust the stack.
 *
 * - Nesting: JSON documents and message content nest at most {@link MAX_JSON_DEPTH} levels of objects
 *   and arrays. Deeper input is refused before it is parsed (the API scans the body's text,
 *   {@link jsonDepthProblem}) or walked (the library, {@link contentProblem}): the runtime's own
 *   `JSON.stringify`, which every write runs, overflows its stack a few thousand levels down.
 * - Characters: a NUL (U+0000) or an unpaired surrogate anywhere in a message (a string value or an
 *   object key) is refused, naming the field and the position. Stored content is sent back to the
 *   model exactly as written, so compactor does not replace them; Postgres cannot turn a NUL into
 *   text, and an unpaired surrogate has no UTF-8 form. The sender fixes them (U+FFFD is the usual
 *   replacement).
 * - Thinking: a `thinking` block needs its `signature` and a `redacted_thinking` block its `data`.
 *   The Messages API verifies them when the blocks come back in a later request, and answers 400
 *   to a block without them: such a block would poison every later context of the session.
 * - Tool calls: the `id`s of `tool_use` blocks are unique within a session (see
 *   {@link duplicateToolUseId}); the Messages API refuses a request that repeats one, and
 *   compactor pairs each call with its result by it.
 * - Values: only JSON values (no `undefined` in arrays, functions, bigints, cycles, or numbers
 *   that are not finite, which JSON cannot carry).
 */
import { printable } from './errors.ts';
import { unstorableAt } from './unicode.ts';

/**
 * Deepest nesting of objects and arrays accepted: in a request body or transcript line, counted
 * from the document's root, and in a message's content, counted from the content (the list of
 * blocks is level 1). Agents' tool inputs nest a few levels; this leaves them ample room and stays
 * far from any stack limit.
 */
export const MAX_JSON_DEPTH = 128;

/** What is wrong, and where: `field` is a path such as `messages[2].content[0].signature`. */
export interface InputProblem {
  field: string;
  message: string;
}

/**
 * The first place where the JSON text `text` nests deeper than `maxDepth` levels of objects and
 * arrays, found in one pass over the text without parsing it (brackets inside strings do not
 * count). Malformed JSON is left to the parser.
 * @param field the name the problem gives the document (`body`, a file and line).
 * @returns null when it nests no deeper.
 */
export function jsonDepthProblem(
  text: string,
  field: string,
  maxDepth = MAX_JSON_DEPTH,
): InputProblem | null {
  // Nesting past maxDepth needs more than maxDepth opening brackets: counting them with the native
  // indexOf spares the character loop for the usual body, a few brackets around long strings.
  if (fewerOpeningBrackets(text, maxDepth + 1)) return null;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (code === 0x22) inString = false;
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      depth++;
      if (depth > maxDepth) {
        return {
          field,
          message: `nests deeper than ${maxDepth} levels of objects and arrays (the limit) at character ${i}`,
        };
      }
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return null;
}

/** Whether `text` holds fewer than `count` of `{` and `[` together (strings included). */
function fewerOpeningBrackets(text: string, count: number): boolean {
  let found = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++found >= count) return false;
    }
  }
  return true;
}

/** A value met on the walk: where it sits, for naming it. */
interface Visit {
  value: unknown;
  parent: Visit | null;
  key: string | number;
  depth: number;
}

/** `where.content[1].input["a b"]`: the path of a visit, read back through its parents. */
function fieldOf(visit: Visit, root: string, upToDepth = Number.POSITIVE_INFINITY): string {
  const keys: Array<string | number> = [];
  for (let v: Visit | null = visit; v?.parent; v = v.parent) if (v.depth <= upToDepth) keys.push(v.key);
  let out = root;
  for (const key of keys.reverse()) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(printable(key, 40))}]`;
  }
  return out;
}

/**
 * The first problem with a message's content (a string or a list of blocks): nesting past
 * {@link MAX_JSON_DEPTH}, a NUL or unpaired surrogate in any string or key, a value JSON cannot
 * carry, or a thinking block without its signature. Walks the value with its own stack.
 * @param content the message's `content`.
 * @param where the message's name (`messages[3]`); fields are named below `<where>.content`.
 * @returns null when the content can be stored.
 */
export function contentProblem(content: unknown, where: string): InputProblem | null {
  const root = `${where}.content`;
  return jsonValueProblem(content, root) ?? thinkingProblem(content, root);
}

/**
 * The first problem with a value stored as JSON (message content, tool definitions): nesting past
 * {@link MAX_JSON_DEPTH} (the value itself is level 1 when it is an object or array), a NUL or
 * unpaired surrogate in any string or key, or a value JSON cannot carry.
 * @param root the value's field name; deeper fields are named below it (`root[1].input.path`).
 * @param depthNamed how many levels below `root` a nesting problem names (default 2: the field of
 *   a block in a list of blocks, `root[1].input`); deeper keys would only repeat the nesting.
 * @returns null when it can be stored.
 */
export function jsonValueProblem(content: unknown, root: string, depthNamed = 2): InputProblem | null {
  const stack: Array<Visit | { leave: object }> = [{ value: content, parent: null, key: '', depth: 0 }];
  const onPath = new Set<object>();
  while (stack.length > 0) {
    const top = stack.pop() as Visit | { leave: object };
    if ('leave' in top) {
      onPath.delete(top.leave);
      continue;
    }
    const { value } = top;
    const at = (message: string) => ({ field: fieldOf(top, root), message });
    if (typeof value === 'string') {
      const bad = unstorableAt(value);
      if (bad) return at(unstorableMessage(bad));
      continue;
    }
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return at(`${value} is not a number JSON can carry`);
      continue;
    }
    if (typeof value === 'boolean' || value === null) continue;
    if (typeof value !== 'object') return at(`a ${typeof value} is not a JSON value`);
    if (top.depth >= MAX_JSON_DEPTH) {
      return {
        field: fieldOf(top, root, depthNamed),
        message: `nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays (the limit)`,
      };
    }
    if (onPath.has(value)) return at('refers to itself (a cycle); content must be plain JSON');
    onPath.add(value);
    stack.push({ leave: value });
    const depth = top.depth + 1;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        if (value[i] === undefined) return at(`[${i}]: undefined is not a JSON value`);
        stack.push({ value: value[i], parent: top, key: i, depth });
      }
      continue;
    }
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] as [string, unknown];
      const bad = unstorableAt(key);
      if (bad) return at(`a key ${unstorableMessage(bad)}`);
      // JSON leaves an undefined property out, as the SDK does.
      if (child !== undefined) stack.push({ value: child, parent: top, key, depth });
    }
  }
  return null;
}

function unstorableMessage(bad: NonNullable<ReturnType<typeof unstorableAt>>): string {
  return `contains ${bad.what} (${bad.code}) at character ${bad.index}, which compactor does not store: remove it or replace it with U+FFFD`;
}

/** The field each thinking block type must carry, signed by the Messages API. */
const THINKING_PROOF: Readonly<Record<string, string>> = { thinking: 'signature', redacted_thinking: 'data' };

/** A `thinking` block without its `signature`, or a `redacted_thinking` one without its `data`. */
function thinkingProblem(content: unknown, root: string): InputProblem | null {
  if (!Array.isArray(content)) return null;
  for (let j = 0; j < content.length; j++) {
    const block = content[j] as Record<string, unknown> | null;
    const type = block?.type;
    const proof = typeof type === 'string' ? THINKING_PROOF[type] : undefined;
    if (proof === undefined || !block) continue;
    const value = block[proof];
    if (typeof value !== 'string' || value === '') {
      return {
        field: `${root}[${j}].${proof}`,
        message:
          `a ${type} block needs its "${proof}" as the Messages API returned it: the API verifies it when ` +
          'the block is sent back, so a block without it would fail every later request. Send the block ' +
          'exactly as returned, or leave it out',
      };
    }
  }
  return null;
}

/** Where a `tool_use` block's id is: the id and the field that holds it. */
export interface ToolUseIdAt {
  id: string;
  field: string;
}

/** The ids of a content's `tool_use` blocks, each with its field (`<where>.content[1].id`). */
export function toolUseIdsAt(content: unknown, where: string): ToolUseIdAt[] {
  if (!Array.isArray(content)) return [];
  const out: ToolUseIdAt[] = [];
  content.forEach((block: { type?: unknown; id?: unknown } | null, j) => {
    if (block?.type === 'tool_use' && typeof block.id === 'string')
      out.push({ id: block.id, field: `${where}.content[${j}].id` });
  });
  return out;
}

/**
 * The first `tool_use` id given twice in `ids` (in order), as a problem naming the second one and
 * where the first is. The Messages API requires the ids of one request to be unique, and compactor
 * pairs each call with its result by id, so a session holds each id once.
 * @returns null when every id is unique.
 */
export function duplicateToolUseId(ids: readonly ToolUseIdAt[]): InputProblem | null {
  const seen = new Map<string, string>();
  for (const { id, field } of ids) {
    const first = seen.get(id);
    if (first !== undefined) {
      return { field, message: `tool_use id "${printable(id, 100)}" is already used by ${first}` };
    }
    seen.set(id, field);
  }
  return null;
}
