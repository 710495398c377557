/**
 * The Claude Agent SDK's session store on compactor's database (CompactorSessionStore), called as
 * the SDK calls it: every line stored whole and in order (a retried batch writes a uuid's line
 * once), the conversation an `anthropic` session whose last reply waits for the run's end, a bad
 * batch refused with nothing written, a line compactor cannot hold as a message stored all the same
 * and named, subagent transcripts kept apart, sessions listed by project and deleted.
 */
import { describe, expect, it } from 'vitest';
import { CompactorSessionStore } from '../../producer/frameworks/claude-agent-sdk/index.ts';
import { loadContext } from '../../producer/index.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'sdk-store';
const projectKey = '-work-repo';

const user = (n: number, text: string) => ({
  type: 'user',
  uuid: `u${n}`,
  parentUuid: n === 1 ? null : `p${n}`,
  message: { role: 'user', content: [{ type: 'text', text }] },
  timestamp: '2026-11-01T10:00:00.000Z',
});
const replyLine = (n: number, id: string, block: Record<string, unknown>) => ({
  type: 'assistant',
  uuid: `a${n}`,
  message: {
    id,
    type: 'message',
    role: 'assistant',
    content: [block],
    usage: { input_tokens: 12, cache_read_input_tokens: 30 },
  },
});

function store(): CompactorSessionStore {
  return new CompactorSessionStore({ db: ctx.tdb.database.db, tenantId });
}

describe('the Claude Agent SDK session store', () => {
  it('keeps every line in order, a uuid once, and the conversation as messages', async () => {
    const s = store();
    const key = { projectKey, sessionId: 'sdk-1' };
    const first = [
      { type: 'queue-operation', operation: 'enqueue', sessionId: 'sdk-1' },
      user(1, 'Fix the parser.'),
      { type: 'attachment', uuid: 'att1', attachment: { type: 'date' } },
      replyLine(2, 'msg_1', { type: 'text', text: 'Reading.' }),
    ];
    await s.append(key, first);
    // The reply may still stream: only the user's message is in the session yet.
    let context = await loadContext(ctx.tdb.database.db, { tenantId, sessionId: 'sdk-1' });
    expect(context.messages.map((m) => m.role)).toEqual(['user']);
    // A retried batch: the lines with uuids are not stored twice.
    await s.append(key, first.slice(1));
    const more = [replyLine(3, 'msg_1', { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} })];
    await s.append(key, more);
    const end = await s.endRun('sdk-1');
    expect(end).toEqual({
      liveSessionId: 'sdk-1',
      usage: { inputTokens: 42, cacheReadTokens: 30 },
      missing: 0,
    });
    context = await loadContext(ctx.tdb.database.db, { tenantId, sessionId: 'sdk-1' });
    expect(context.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Fix the parser.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} },
        ],
      },
      // The newest reply's call stays open: its result is the agent's to append.
    ]);
    expect(await s.load(key)).toEqual([...first, ...more]);
    expect(await s.listSessions(projectKey)).toEqual([{ sessionId: 'sdk-1', mtime: expect.any(Number) }]);
    expect(await s.listSessions('another-project')).toEqual([]);
  });

  it('refuses a malformed key or batch, writing nothing', async () => {
    const s = store();
    const key = { projectKey, sessionId: 'sdk-2' };
    await expect(s.append(key, [user(1, 'a'), 'not a line' as never])).rejects.toThrow(
      /entries\[1\]: expected a JSON object/,
    );
    await expect(s.append(key, [{ uuid: 'x' } as never])).rejects.toThrow(/entries\[0\]\.type/);
    await expect(s.append(key, [{ type: 'x', n: Number.NaN }])).rejects.toThrow(InvalidInputError);
    await expect(s.append({ ...key, subpath: '' }, [user(1, 'a')])).rejects.toThrow(/subpath/);
    await expect(s.append({ projectKey, sessionId: 'has space' }, [user(1, 'a')])).rejects.toThrow(
      /sessionId/,
    );
    expect(await s.load(key)).toBeNull();
    await s.append(key, [user(1, 'a')]);
    await expect(s.append({ projectKey: 'other', sessionId: 'sdk-2' }, [user(2, 'b')])).rejects.toThrow(
      /stored under project "-work-repo", not "other"/,
    );
  });

  it('stores a line it cannot hold as a message, and says which', async () => {
    const s = store();
    const key = { projectKey, sessionId: 'sdk-3' };
    // Thinking without its signature: the API would refuse it back, so the session refuses it.
    const unsigned = replyLine(2, 'msg_9', { type: 'thinking', thinking: 'hm' });
    await s.append(key, [user(1, 'go')]);
    await s.append(key, [unsigned]);
    await expect(s.endRun('sdk-3')).rejects.toThrow(/signature/);
    // A resume still gets every line, and the warning says why it is not compactor's history.
    const warnings: string[] = [];
    const resuming = new CompactorSessionStore({
      db: ctx.tdb.database.db,
      tenantId,
      onWarning: (m) => warnings.push(m),
    });
    expect(await resuming.load(key)).toEqual([user(1, 'go'), unsigned]);
    expect(warnings).toEqual([
      expect.stringMatching(/session "sdk-3" resumes from its transcript as written: .*signature/),
    ]);
  });

  it('keeps subagent transcripts apart, as lines only, and deletes a session', async () => {
    const s = store();
    const key = { projectKey, sessionId: 'sdk-4' };
    const sub = { ...key, subpath: 'subagents/agent-1' };
    await s.append(key, [user(1, 'main')]);
    const subLines = [{ ...user(1, 'sub'), isSidechain: true }];
    await s.append(sub, subLines);
    expect(await s.load(sub)).toEqual(subLines);
    expect(await s.listSubkeys(key)).toEqual(['subagents/agent-1']);
    const context = await loadContext(ctx.tdb.database.db, { tenantId, sessionId: 'sdk-4' });
    expect(context.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'main' }] }]);
    await s.delete(key);
    expect(await s.load(key)).toBeNull();
    expect(await s.load(sub)).toBeNull();
  });
});
