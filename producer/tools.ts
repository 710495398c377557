/**
 * A session's declared tools: the `tools` an agent sends with the session's requests. compactor
 * never calls them; the `anthropic-compaction` summarizer sends them on its compaction request,
 * because the turns kept after a compaction block keep their thinking only when `system` and
 * `tools` are the same on the compaction request and afterwards (Anthropic, "Compaction and
 * preserved thinking", 2026-09).
 */
import type { ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import { jsonValueProblem } from '../shared/contract/content-checks.ts';
import { InvalidInputError, printable, SessionNotFoundError } from '../shared/contract/errors.ts';
import type { Db } from './postgres/db.ts';
import { updateSessionTools } from './postgres/sessions.ts';

/** Most tools a session may declare (the Messages API's own limit is in the hundreds). */
export const MAX_SESSION_TOOLS = 1_000;

/**
 * Checks declared tools: an array of objects, each with a non-empty string `name`, names unique,
 * and plain JSON that can be stored (shared/contract/content-checks.ts: nesting, NUL, unpaired
 * surrogates). The definitions are otherwise stored as given (the API, not compactor, judges a
 * schema).
 * @throws {InvalidInputError} naming the first bad entry.
 */
export function assertTools(tools: unknown): asserts tools is ToolUnion[] {
  if (!Array.isArray(tools)) throw new InvalidInputError('tools: must be an array of tool definitions');
  if (tools.length > MAX_SESSION_TOOLS)
    throw new InvalidInputError(`tools: at most ${MAX_SESSION_TOOLS} tools, got ${tools.length}`);
  const names = new Set<string>();
  tools.forEach((tool, i) => {
    const name = (tool as { name?: unknown } | null)?.name;
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool))
      throw new InvalidInputError(`tools[${i}]: must be a tool definition object`);
    if (typeof name !== 'string' || name.trim() === '')
      throw new InvalidInputError(`tools[${i}].name: must be a non-empty string`);
    if (names.has(name))
      throw new InvalidInputError(`tools[${i}].name: "${printable(name)}" is declared twice`);
    const problem = jsonValueProblem(tool, `tools[${i}]`, 1);
    if (problem) throw new InvalidInputError(`${problem.field}: ${problem.message}`);
    names.add(name);
  });
}

/**
 * Declares the tools the agent sends with this session's requests (exactly as it sends them:
 * same definitions, same order), or clears them with null.
 * @throws {InvalidInputError} for bad tools (nothing is written).
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function setSessionTools(
  db: Db,
  tenantId: string,
  sessionId: string,
  tools: ToolUnion[] | null,
): Promise<void> {
  if (tools !== null) assertTools(tools);
  if (!(await updateSessionTools(db, tenantId, sessionId, tools))) {
    throw new SessionNotFoundError(tenantId, sessionId);
  }
}
