/**
 * The keep-alive `fetch` the SDK clients use (worker/summarizers/keep-alive-fetch.ts): through the
 * real @anthropic-ai/sdk against the fake Messages API (summaries, retries of 529 and 500, a
 * timeout, a caller's abort), and on its own against small node:http servers for what the fake
 * does not send (a body streamed in parts, headers, statuses without a body, an abort while the
 * body is read, a connection the server dropped while idle, a refused connection).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Anthropic, { APIConnectionError, APIUserAbortError } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../shared/contract/errors.ts';
import type { SummarizeInput } from '../../shared/summary/summarizer.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { AnthropicTransientError } from '../../worker/summarizers/anthropic-errors.ts';
import { createKeepAliveFetch } from '../../worker/summarizers/keep-alive-fetch.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import { trackHandles } from '../support/handles.ts';
import { textMessage } from '../support/messages.ts';

const MODEL = 'claude-haiku-4-5';

function input(overrides: Partial<SummarizeInput> = {}): SummarizeInput {
  return {
    tenantId: 'tenant-1',
    sessionId: 'session-1',
    previous: null,
    leaving: [
      textMessage(1, 'user', 'Please fix the failing invoice test in src/billing/invoice.ts'),
      textMessage(2, 'assistant', 'Found the rounding bug in computeTotal and fixed it.'),
      textMessage(3, 'user', 'Great, now run the whole test suite'),
    ],
    maxSummaryTokens: 2_000,
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('keep-alive fetch through the SDK, against the fake Messages API', () => {
  let fake: FakeAnthropicServer;
  let url: string;

  beforeEach(async () => {
    fake = new FakeAnthropicServer();
    ({ url } = await fake.start());
  });

  afterEach(async () => {
    await fake.close();
  });

  it('sends summaries over kept-alive connections and reads their answers', async () => {
    const summarizer = createAnthropicSummarizer({ apiKey: 'sk-ant-test', baseURL: url, model: MODEL });
    const first = await summarizer.summarize(input());
    const second = await summarizer.summarize(input());
    expect(first.checkpoint.workingSet).toContain('src/billing/invoice.ts');
    expect(second.usage.inputTokens).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(2);
    for (const request of fake.requests) {
      expect(request.headers.connection).toBe('keep-alive');
      expect(request.headers.authorization).toBe('Bearer sk-ant-test');
      expect(Number(request.headers['content-length'])).toBe(Buffer.byteLength(request.rawBody));
    }
  });

  it('lets the SDK retry a 529 and then a 500, and answers with the third attempt', async () => {
    fake.enqueue({ status: 529 }, { status: 500 }, 'ok');
    const summarizer = createAnthropicSummarizer({
      apiKey: 'sk-ant-test',
      baseURL: url,
      model: MODEL,
      maxRetries: 2,
    });
    const result = await summarizer.summarize(input());
    expect(result.checkpoint.workingSet).toContain('src/billing/invoice.ts');
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
  });

  it('gives up at the timeout with a transient error', async () => {
    fake.enqueue({ delayMs: 5_000 });
    const summarizer = createAnthropicSummarizer({
      apiKey: 'sk-ant-test',
      baseURL: url,
      model: MODEL,
      timeoutMs: 200,
    });
    const error = await failure(summarizer.summarize(input()));
    expect(error).toBeInstanceOf(AnthropicTransientError);
    expect((error as Error).message).toMatch(/timed out/i);
  });

  it("stops at the caller's abort with the SDK's abort error", async () => {
    fake.enqueue({ delayMs: 5_000 });
    const controller = new AbortController();
    const summarizer = createAnthropicSummarizer({ apiKey: 'sk-ant-test', baseURL: url, model: MODEL });
    const pending = summarizer.summarize(input({ signal: controller.signal }));
    // Once the request has reached the server.
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    expect(await failure(pending)).toBeInstanceOf(APIUserAbortError);
  });

  it('leaves nothing referenced after a 429 and a 529 the caller waits out, as `compactor compact` does', async () => {
    fake.enqueue({ status: 429, retryAfter: 1 }, 'overloaded', 'ok');
    const summarizer = createAnthropicSummarizer({ apiKey: 'sk-ant-test', baseURL: url, model: MODEL });
    const { value: outcomes, left } = await trackHandles(async () => {
      const outcomes: unknown[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        outcomes.push(await summarizer.summarize(input()).catch((error: unknown) => error));
      }
      return outcomes;
    });
    expect(outcomes[0]).toBeInstanceOf(RateLimitedError);
    expect(outcomes[1]).toBeInstanceOf(AnthropicTransientError);
    expect(outcomes[2]).toMatchObject({ checkpoint: { workingSet: expect.any(Array) } });
    expect(left).toBe('');
  });

  it('is a connection error for the SDK when nothing listens', async () => {
    await fake.close();
    const client = new Anthropic({ apiKey: 'k', baseURL: url, maxRetries: 0, fetch: createKeepAliveFetch() });
    const error = await failure(
      client.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(((error as Error).cause as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });
});

describe('keep-alive fetch on its own', () => {
  let server: Server;
  let base: string;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  const sockets = new Set<Socket>();
  let connections = 0;

  beforeEach(async () => {
    connections = 0;
    server = createServer((req, res) => handler(req, res));
    server.on('connection', (socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('streams a body: the first part can be read before the server sends the rest', async () => {
    let sendRest: () => void = () => {};
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      sendRest = () => res.end('data: two\n\n');
    };
    const response = await createKeepAliveFetch()(`${base}/stream`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    expect(decoder.decode(first.value)).toBe('data: one\n\n');
    sendRest();
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read())
      rest += decoder.decode(part.value);
    expect(rest).toBe('data: two\n\n');
  });

  it('sends method, headers and body, and answers with status, status text and every header', async () => {
    let seen: { method?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    handler = (req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        seen = { method: req.method ?? '', headers: req.headers, body };
        res.writeHead(404, 'Nope', [
          ['content-type', 'application/json'],
          ['set-cookie', 'a=1'],
          ['set-cookie', 'b=2'],
          ['request-id', 'req_1'],
        ]);
        res.end('{"type":"error"}');
      });
    };
    const headers = new Headers({ 'x-api-key': 'k', 'content-type': 'application/json' });
    const response = await createKeepAliveFetch()(`${base}/v1/messages`, {
      method: 'post',
      headers,
      body: JSON.stringify({ é: 'ü' }),
    });
    expect(seen).toMatchObject({ method: 'POST', body: '{"é":"ü"}' });
    expect(seen.headers).toMatchObject({ 'x-api-key': 'k', 'content-length': '11' });
    expect(response.status).toBe(404);
    expect(response.statusText).toBe('Nope');
    expect(response.ok).toBe(false);
    expect(response.headers.get('request-id')).toBe('req_1');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ type: 'error' });
  });

  it('answers a 204 with no body', async () => {
    handler = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    const response = await createKeepAliveFetch()(`${base}/none`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('rejects with an AbortError when aborted before, while waiting, or while the body is read', async () => {
    const fetch = createKeepAliveFetch();
    handler = () => {};
    await expect(fetch(`${base}/x`, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
    const waiting = new AbortController();
    const pending = fetch(`${base}/x`, { signal: waiting.signal });
    while (sockets.size === 0) await new Promise((r) => setTimeout(r, 10));
    waiting.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });

    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    };
    const reading = new AbortController();
    const response = await fetch(`${base}/y`, { signal: reading.signal });
    const text = response.text();
    reading.abort();
    await expect(text).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('sends a request again once when the server had dropped the idle connection it reused', async () => {
    const served = new Map<Socket, number>();
    handler = (req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      // A server that closed the idle connection as the request arrived.
      if (n > 1) req.socket.destroy();
      else res.end(`answer ${served.size}`);
    };
    const fetch = createKeepAliveFetch();
    expect(await (await fetch(`${base}/a`, { method: 'POST', body: 'x' })).text()).toBe('answer 1');
    expect(await (await fetch(`${base}/b`, { method: 'POST', body: 'y' })).text()).toBe('answer 2');
    expect(served.size).toBe(2);
  });

  it('leaves nothing referenced once its answers are read or cancelled, over one reused connection', async () => {
    handler = (req, res) => {
      req.resume();
      req.on('end', () => {
        const status = Number(req.url?.slice(1));
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: status === 200 ? 'message' : 'error' }));
      });
    };
    const fetch = createKeepAliveFetch();
    const { value: answers, left } = await trackHandles(async () => {
      const answers: unknown[] = [];
      for (const status of [429, 529, 200]) {
        answers.push(await (await fetch(`${base}/${status}`, { method: 'POST', body: '{}' })).json());
      }
      const unread = await fetch(`${base}/529`, { method: 'POST', body: '{}' });
      await unread.body?.cancel();
      return answers;
    });
    expect(answers).toEqual([{ type: 'error' }, { type: 'error' }, { type: 'message' }]);
    expect(connections).toBe(1);
    expect(left).toBe('');
  });

  it('refuses a bad option, naming it', () => {
    expect(() => createKeepAliveFetch({ maxIdleSockets: 0 })).toThrow(
      /maxIdleSockets must be a positive integer/,
    );
  });
});
