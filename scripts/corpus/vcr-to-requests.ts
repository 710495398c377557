/**
 * A VCR cassette (YAML: `interactions: [{ request: { method, uri, body | parsed_body }, response }]`)
 * of an agent's calls to OpenAI as a JSONL of requests, one line per `POST` to the endpoint named
 * (`chat`: `…/chat/completions`, which `compactor import --format openai-chat` reads; `responses`:
 * `…/v1/responses`), in the cassette's order. A body vcrpy stored as JSON text (crewAI's cassettes)
 * is written exactly as it was sent (the SDK's compact JSON has no line break); a body stored parsed
 * (pydantic-ai's `parsed_body`, or `body: { type: json, content }`) is written as compact JSON, its
 * keys in the cassette's order. Other interactions, and every response and header, are left out.
 *
 *     tsx scripts/corpus/vcr-to-requests.ts chat|responses CASSETTE.yaml OUT.jsonl
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { corpusValue } from './pi-to-corpus.ts';

/** The endpoints a cassette's requests are taken from, by the name the command line gives. */
const ENDPOINTS = { chat: /\/chat\/completions$/, responses: /\/v1\/responses$/ } as const;
export type Endpoint = keyof typeof ENDPOINTS;

/** The list each endpoint's request must carry. */
const LIST_OF: Record<Endpoint, string> = { chat: 'messages', responses: 'input' };

interface Interaction {
  request?: { method?: unknown; uri?: unknown; body?: unknown; parsed_body?: unknown };
}

/** A request's body as one line of JSON text, or null when the cassette holds none. */
function bodyLine(request: NonNullable<Interaction['request']>): string | null {
  if (typeof request.body === 'string') return request.body.includes('\n') ? null : request.body;
  const body = request.body as { type?: unknown; content?: unknown } | undefined;
  const parsed = request.parsed_body ?? (body?.type === 'json' ? body.content : undefined);
  return parsed === undefined ? null : JSON.stringify(parsed);
}

/**
 * The request bodies of a cassette's calls to `endpoint`, in order, each one line of JSON.
 * @throws {Error} naming the interaction when a body is missing, spans lines, or is not a JSON
 *   object with the endpoint's list (`messages`, `input`), or when the cassette has no such call.
 */
export function requestsOf(cassette: string, endpoint: Endpoint): string[] {
  const { interactions } = (parse(cassette) ?? {}) as { interactions?: Interaction[] };
  if (!Array.isArray(interactions)) throw new Error('interactions: expected a list');
  const lines: string[] = [];
  interactions.forEach(({ request }, i) => {
    if (request?.method !== 'POST' || !ENDPOINTS[endpoint].test(String(request.uri))) return;
    const line = bodyLine(request);
    if (line === null) throw new Error(`interactions[${i}].request.body: expected the JSON of one request`);
    const parsed = JSON.parse(line) as Record<string, unknown>;
    if (!Array.isArray(parsed[LIST_OF[endpoint]]))
      throw new Error(`interactions[${i}].request.body: expected a request with ${LIST_OF[endpoint]}`);
    // Verbatim unless a string in it is written as the corpus stores it (home folders, `../` runs).
    const stored = corpusValue(parsed);
    lines.push(JSON.stringify(stored) === JSON.stringify(parsed) ? line : JSON.stringify(stored));
  });
  if (lines.length === 0) throw new Error(`no POST to the ${endpoint} endpoint`);
  return lines;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [endpoint, source, out] = process.argv.slice(2);
  if (!(endpoint === 'chat' || endpoint === 'responses') || !source || !out) {
    console.error('usage: tsx scripts/corpus/vcr-to-requests.ts chat|responses CASSETTE.yaml OUT.jsonl');
    process.exit(2);
  }
  writeFileSync(out, `${requestsOf(readFileSync(source, 'utf8'), endpoint).join('\n')}\n`);
}
