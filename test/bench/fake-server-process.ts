/**
 * The fake Messages API in a process of its own, for benchmarks: the server's own CPU (parsing
 * prompts, deriving checkpoints) must not share the event loop of the worker being measured.
 * `tsx test/bench/fake-server-process.ts [--delay-ms N]` prints its URL on the first line of
 * stdout and answers every request after N ms (default 0), until it is killed.
 */
import { parseArgs } from 'node:util';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';

const { values } = parseArgs({ options: { 'delay-ms': { type: 'string', default: '0' } } });
const delayMs = Number(values['delay-ms']);
const fake = new FakeAnthropicServer();
if (delayMs > 0) fake.defaultBehaviour = { delayMs };
const { url } = await fake.start();
process.stdout.write(`${url}\n`);
