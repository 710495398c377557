/**
 * How the SDK clients reach the Messages API (worker/summarizers/anthropic.ts, `anthropicClient`):
 * the SDK's own `fetch` through one keep-alive undici `Agent`. Through the real @anthropic-ai/sdk
 * against the fake Messages API (summaries, retries of 529 and 500, a timeout, a caller's abort,
 * nothing left referenced, a refused connection), and against a small node:http server that counts
 * its connections (one reused connection for requests in turn; a connection the server closed
 * while idle is not reused).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { APIConnectionError, APIUserAbortError } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../shared/contract/errors.ts';
import type { SummarizeInput } from '../../shared/summary/summarizer.ts';
import { anthropicClient, createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { AnthropicTransientError } from '../../worker/summarizers/anthropic-errors.ts';
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

describe("the SDK clients' fetch and keep-alive pool, against the fake Messages API", () => {
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
    const client = anthropicClient({ apiKey: 'k', baseURL: url, model: MODEL, maxRetries: 0 });
    const error = await failure(
      client.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(((error as Error).cause as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });
});

describe('connections of the SDK clients', () => {
  let server: Server;
  let url: string;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  const sockets = new Set<Socket>();
  let connections = 0;

  /** Answers a Messages API request with a message, or with the error status its model names. */
  const messages = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const status = Number(/"model":"status-(\d+)"/.exec(body)?.[1] ?? 200);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          status === 200
            ? {
                id: 'msg_1',
                type: 'message',
                role: 'assistant',
                model: MODEL,
                content: [{ type: 'text', text: 'ok' }],
                stop_reason: 'end_turn',
                stop_sequence: null,
                usage: { input_tokens: 3, output_tokens: 1 },
              }
            : { type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
        ),
      );
    });
  };

  const ask = (model = MODEL) =>
    anthropicClient({ apiKey: 'k', baseURL: url, model: MODEL }).messages.create({
      model,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });

  beforeEach(async () => {
    connections = 0;
    handler = messages;
    server = createServer((req, res) => handler(req, res));
    server.on('connection', (socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends requests in turn over one kept-alive connection, errors included, and leaves nothing referenced', async () => {
    const { value: answers, left } = await trackHandles(async () => {
      const answers: unknown[] = [];
      for (const model of ['status-429', 'status-529', MODEL, MODEL]) {
        answers.push(
          await ask(model).then(
            (m) => m.content,
            (error: { status?: number }) => error.status,
          ),
        );
        // A worker's next summary comes at least a turn of the event loop later; asked in the same
        // turn, the pool would open a second connection while the first is still being released.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return answers;
    });
    expect(answers).toEqual([429, 529, [{ type: 'text', text: 'ok' }], [{ type: 'text', text: 'ok' }]]);
    expect(connections).toBe(1);
    expect(left).toBe('');
  });

  it("does not reuse a connection past the server's keep-alive timeout", async () => {
    server.keepAliveTimeout = 1_000; // sent as `Keep-Alive: timeout=1`
    expect((await ask()).content).toEqual([{ type: 'text', text: 'ok' }]);
    await new Promise((r) => setTimeout(r, 1_500)); // the server closes the idle connection
    expect((await ask()).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(connections).toBe(2);
  });

  it('opens a new connection when the server dropped the idle one without a word', async () => {
    handler = (req, res) => {
      messages(req, res);
      res.on('finish', () => setTimeout(() => req.socket.destroy(), 50));
    };
    expect((await ask()).content).toEqual([{ type: 'text', text: 'ok' }]);
    await new Promise((r) => setTimeout(r, 300));
    expect((await ask()).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(connections).toBe(2);
  });
});
