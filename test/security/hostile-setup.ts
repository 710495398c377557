/**
 * What the hostile-input cases (hostile-cases.ts) are sent against, set up the same way by the test
 * (hostile-input.test.ts, in process) and the bench (test/bench/hostile-suite.ts, against
 * `compactor api` in a process of its own): acme's sessions, one per format (the anthropic one with
 * an open tool call), globex's, and each case as a request.
 */
import { appendMessages, createSession } from '../../producer/index.ts';
import type { Db } from '../../producer/postgres/db.ts';
import type { HostileCase, Target } from './hostile-cases.ts';

/** The open tool call of acme's anthropic session. */
export const OPEN_TOOL_USE = 'toolu_open_1';

/** The target of the cases, but its body limit and the key the rotation cases aim at. */
export const HOSTILE_TARGET: Omit<Target, 'maxBodyBytes' | 'keyId'> = {
  sessions: { anthropic: 'anth', 'openai-chat': 'chat', 'openai-responses': 'resp' },
  openToolUseId: OPEN_TOOL_USE,
  otherTenantSession: 'globex-own',
};

/**
 * Creates acme's sessions and globex's. `afterTurns` runs once the anthropic session has its eight
 * turns and before its open tool call is appended (the test compacts it there, so that it has an
 * archive).
 */
export async function seedHostileSessions(
  db: Db,
  afterTurns: () => Promise<void> = async () => {},
): Promise<void> {
  const { sessions } = HOSTILE_TARGET;
  const turns = Array.from({ length: 8 }, (_, i) => ({
    seq: i,
    message: {
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: `step ${i}: checking the rollout of the canary`,
    },
  }));
  await createSession(db, { tenantId: 'acme', sessionId: sessions.anthropic, messages: turns });
  await afterTurns();
  await appendMessages(db, 'acme', sessions.anthropic, [
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: OPEN_TOOL_USE, name: 'read_file', input: { path: 'a.ts' } }],
    },
  ]);
  await createSession(db, {
    tenantId: 'acme',
    sessionId: sessions['openai-chat'],
    format: 'openai-chat',
    messages: [
      { seq: 0, message: { role: 'system', content: 'Be brief.' } },
      { seq: 1, message: { role: 'user', content: 'hello' } },
    ] as never,
  });
  await createSession(db, {
    tenantId: 'acme',
    sessionId: sessions['openai-responses'],
    format: 'openai-responses',
    messages: [{ seq: 0, message: { role: 'user', content: 'hello' } }] as never,
  });
  await createSession(db, { tenantId: 'globex', sessionId: HOSTILE_TARGET.otherTenantSession, messages: [] });
}

/** Case `c` as a request to the API at `base`: its URL and init, credentials `authorization`. */
export function hostileRequest(
  base: string,
  c: HostileCase,
  target: Target,
  authorization: string | undefined,
): { url: string; init: { method: string; headers: Record<string, string>; body?: Uint8Array } } {
  const headers: Record<string, string> = {};
  if (authorization) headers.authorization = authorization;
  if (c.route === 'mcp') headers.accept = 'application/json, text/event-stream';
  if (c.body !== undefined && c.contentType !== null)
    headers['content-type'] = c.contentType ?? 'application/json';
  Object.assign(headers, c.headers);
  const body = typeof c.body === 'string' ? Buffer.from(c.body, 'utf8') : c.body;
  return {
    url: `${base}${c.path.replace('{keyId}', target.keyId)}`,
    init: { method: c.method, headers, ...(body !== undefined ? { body } : {}) },
  };
}
