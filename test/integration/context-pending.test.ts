/**
 * A context read with messages not stored yet (`loadContext(…, { pending })`): they come back
 * rendered after the session's rows, by the session's format, and nothing is written; a pending
 * message of another format, or one the format refuses, is refused naming `pending[i]`.
 */
import { describe, expect, it } from 'vitest';
import { appendMessages, createSession, loadContext } from '../../producer/index.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'pending';

async function counts(sessionId: string) {
  const [row] = await ctx.tdb.database.sql<{ message_count: number; last_seq: string }[]>`
    select message_count, last_seq from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  return row;
}

describe('loadContext with pending messages', () => {
  it('renders them after the stored ones, as the append would store them, and writes nothing', async () => {
    const db = ctx.tdb.database.db;
    await createSession(db, {
      tenantId,
      sessionId: 'chat',
      format: 'openai-chat',
      messages: [
        { seq: 0, message: { role: 'system', content: 'Be brief.' }, pinned: true },
        { seq: 1, message: { role: 'user', content: 'List the files.' } },
      ],
    });
    const call = { id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } };
    await appendMessages(db, tenantId, 'chat', [{ role: 'assistant', content: null, tool_calls: [call] }]);
    const before = await counts('chat');
    const pending = [{ role: 'tool' as const, tool_call_id: 'call_1', content: 'a.ts b.ts' }];
    const alone = await loadContext(db, { tenantId, sessionId: 'chat', format: 'openai-chat' });
    const context = await loadContext(db, { tenantId, sessionId: 'chat', format: 'openai-chat', pending });
    expect(context.messages).toEqual([...alone.messages, pending[0]]);
    expect(context.tokens).toBeGreaterThan(alone.tokens);
    expect(await counts('chat')).toEqual(before);

    // Stored, they read back the same.
    await appendMessages(db, tenantId, 'chat', pending);
    const after = await loadContext(db, { tenantId, sessionId: 'chat', format: 'openai-chat' });
    expect(after.messages).toEqual(context.messages);
  });

  it('refuses a pending message of another format or one its format refuses, naming it', async () => {
    const db = ctx.tdb.database.db;
    await createSession(db, {
      tenantId,
      sessionId: 'claude',
      messages: [{ seq: 0, message: { role: 'user', content: 'hi' } }],
    });
    const read = (pending: unknown[]) => loadContext(db, { tenantId, sessionId: 'claude', pending });
    await expect(read([{ role: 'tool', tool_call_id: 'c', content: 'x' }])).rejects.toThrow(
      /pending\[0\]\.role: "tool" is a Chat Completions role, but session "claude" has format "anthropic"/,
    );
    await expect(
      read([
        { role: 'user', content: 'ok' },
        { role: 'robot', content: 'x' },
      ]),
    ).rejects.toThrow(/^pending\[1\]\.role: expected "user", "assistant" or "system"/);
    expect((await counts('claude'))?.message_count).toBe(1);
  });
});

describe('an append that names its session format', () => {
  it('stores in that format; a wrong name still leaves the session format to decide; an unknown one is refused', async () => {
    const db = ctx.tdb.database.db;
    await createSession(db, { tenantId, sessionId: 'named', format: 'openai-chat', messages: [] });
    const hi = { role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] };
    await appendMessages(db, tenantId, 'named', [hi], { format: 'openai-chat' });
    await appendMessages(db, tenantId, 'named', [hi], { format: 'anthropic' });
    await expect(appendMessages(db, tenantId, 'named', [hi], { format: 'klingon' as never })).rejects.toThrow(
      /^format: expected one of "anthropic", .*got "klingon"/,
    );
    const context = await loadContext(db, { tenantId, sessionId: 'named', format: 'openai-chat' });
    expect(context.messages).toEqual([hi, hi]);
    expect((await counts('named'))?.message_count).toBe(2);
  });
});
