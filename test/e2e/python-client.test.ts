/**
 * The Python client of `examples/python/` (standard library only), run with `python3` against a
 * live `compactor api` process and a worker: create, an idempotent append resent, the context,
 * an event, compact-and-wait, the smaller context, a refused request naming its field, delete.
 * And its webhook verifier, on headers compactor's delivery code signs.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { webhookHeaders } from '../../producer/webhook-signature.ts';
import { newWebhookSecret, webhookMessageId } from '../../shared/contract/webhooks.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { patient } from '../support/patience.ts';
import { killAllChildren, startCompactor } from '../support/processes.ts';

const run = promisify(execFile);
const ctx = useIntegration();
const EXAMPLE = fileURLToPath(new URL('../../examples/python/agent_session.py', import.meta.url));
const VERIFIER = fileURLToPath(new URL('../../examples/python/webhook_verify.py', import.meta.url));

/** Runs the Python verifier on one delivery (JSON on its stdin); what it printed. */
async function pythonVerifies(delivery: { body: string; headers: Record<string, string>; secret: string }) {
  const child = spawn('python3', [VERIFIER], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stdin.end(JSON.stringify(delivery));
  await new Promise((resolve) => child.on('close', resolve));
  return JSON.parse(out) as { id?: string; error?: string };
}

afterAll(killAllChildren);

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('the Python client', () => {
  it(
    'drives a session through a live compactor api with python3',
    async () => {
      const port = await freePort();
      const token = randomBytes(24).toString('hex');
      const api = startCompactor(['api', '--port', String(port)], {
        ...ctx.cliEnv,
        COMPACTOR_DASHBOARD_TOKENS: `acme:${token}`,
      });
      const url = `http://127.0.0.1:${port}`;
      await waitFor(async () => {
        if (api.exitCode !== null) throw new Error(`compactor api exited: ${api.output().stderr}`);
        return fetch(`${url}/v1/openapi.json`).then(
          (r) => r.ok || undefined,
          () => undefined,
        );
      });
      ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });

      const { stdout, stderr } = await run('python3', [EXAMPLE], {
        env: { ...process.env, COMPACTOR_API_URL: url, COMPACTOR_API_TOKEN: token, COMPACTOR_TENANT: 'acme' },
      });
      expect(stderr).toBe('');
      const seen = JSON.parse(stdout) as Record<string, unknown>;
      expect(seen).toMatchObject({
        created: 1,
        tools_declared: true,
        appended: 32,
        resend_same_answer: true,
        messages_before: 32,
        enqueued: true,
        compact_state: 'settled',
        compact_status: 'applied',
        alternates: true,
        refused: { status: 400, type: 'invalid_request_error', field: 'messages[0].content[0].tool_use_id' },
        deleted: [seen.session],
        after_delete: 404,
      });
      // The pinned system prompt stays out of `messages` (it is `system`); the window kept the tail.
      expect(seen.messages_after).toBeLessThan(seen.messages_before as number);
      expect(seen.version_after).toBeGreaterThan(0);
      // Nothing of the session is left behind.
      const [left] = await ctx.tdb.database.sql<{ n: number }[]>`
      select (select count(*) from messages where tenant_id = 'acme')
           + (select count(*) from archived_messages where tenant_id = 'acme')
           + (select count(*) from append_requests where tenant_id = 'acme') as n`;
      expect(Number(left?.n)).toBe(0);
    },
    patient(90_000),
  );

  it('verifies a delivery signed as Standard Webhooks, and refuses a changed id or body', async () => {
    const secret = newWebhookSecret();
    const id = webhookMessageId('acme', '0b9a3f0e-6a54-4f5e-9a51-0d3c7c0f6a11');
    const body = JSON.stringify({ type: 'session.compacted', note: 'naïve ✓' });
    const headers = webhookHeaders(id, Math.floor(Date.now() / 1000), body, secret);
    expect(await pythonVerifies({ body, headers, secret })).toEqual({ id });
    expect(
      await pythonVerifies({ body, headers: { ...headers, 'webhook-id': 'msg_other' }, secret }),
    ).toEqual({
      error: 'mismatch',
    });
    expect(await pythonVerifies({ body: `${body} `, headers, secret })).toEqual({ error: 'mismatch' });
    const old = webhookHeaders(id, Math.floor(Date.now() / 1000) - 400, body, secret);
    expect(await pythonVerifies({ body, headers: old, secret })).toEqual({ error: 'stale' });
  });
});
