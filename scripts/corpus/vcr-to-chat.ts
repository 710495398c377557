/**
 * A VCR cassette (vcrpy's YAML: `interactions: [{ request: { method, uri, body }, response }]`) of
 * an agent's calls to OpenAI Chat Completions as the JSONL of Chat Completions requests that
 * `compactor import --format openai-chat` reads: one line per `POST …/chat/completions`
 * interaction, in the cassette's order, each line the request body exactly as it was sent (the
 * SDK's compact JSON, which has no line break). Other interactions, and every response and header,
 * are left out.
 *
 *     tsx scripts/corpus/vcr-to-chat.ts CASSETTE.yaml OUT.jsonl
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

interface Interaction {
  request?: { method?: unknown; uri?: unknown; body?: unknown };
}

/**
 * The request bodies of a cassette's Chat Completions calls, in order.
 * @throws {Error} naming the interaction when a body is not a JSON object with a `messages` list
 *   on one line, or when the cassette has no such call.
 */
export function chatRequestsOf(cassette: string): string[] {
  const { interactions } = (parse(cassette) ?? {}) as { interactions?: Interaction[] };
  if (!Array.isArray(interactions)) throw new Error('interactions: expected a list');
  const bodies: string[] = [];
  interactions.forEach(({ request }, i) => {
    if (request?.method !== 'POST' || !/\/chat\/completions$/.test(String(request.uri))) return;
    const body = request.body;
    if (typeof body !== 'string' || body.includes('\n'))
      throw new Error(`interactions[${i}].request.body: expected the JSON text of one request`);
    const parsed = JSON.parse(body) as { messages?: unknown };
    if (!Array.isArray(parsed.messages))
      throw new Error(`interactions[${i}].request.body: expected a Chat Completions request with messages`);
    bodies.push(body);
  });
  if (bodies.length === 0) throw new Error('no POST …/chat/completions interaction');
  return bodies;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [source, out] = process.argv.slice(2);
  if (!source || !out) {
    console.error('usage: tsx scripts/corpus/vcr-to-chat.ts CASSETTE.yaml OUT.jsonl');
    process.exit(2);
  }
  writeFileSync(out, `${chatRequestsOf(readFileSync(source, 'utf8')).join('\n')}\n`);
}
