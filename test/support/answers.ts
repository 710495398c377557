/**
 * Sending a hand-built request to a test server and reading its answer, for the files that send
 * malformed or hostile requests over real HTTP.
 */

/** A status and the answer's JSON: null for an empty body, `{ unparsed }` for text that is not JSON. */
export interface RawAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
  body: any;
}

/**
 * Sends `request` and reads its answer. After a 413 the server closes the connection without
 * reading the rest of the body; a request sent on that kept-alive connection meanwhile never
 * reached it, and is sent again (once).
 */
export async function answerOf(request: () => Promise<Response>): Promise<RawAnswer> {
  const response = await request().catch((error: Error & { cause?: { code?: string } }) => {
    if (error.cause?.code === 'UND_ERR_SOCKET') return request();
    throw error;
  });
  const raw = await response.text();
  let parsed: unknown = null;
  try {
    parsed = raw === '' ? null : JSON.parse(raw);
  } catch {
    parsed = { unparsed: raw.slice(0, 200) };
  }
  return { status: response.status, body: parsed };
}

/**
 * A POST of `body` (as JSON) to `path` of the API at `base`, with bearer `key`: its status and JSON
 * answer.
 */
export async function postJson(base: string, key: string, path: string, body: unknown): Promise<RawAnswer> {
  const response = await fetch(new URL(path, base), {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}
