/**
 * The pure parts of the API's body reader: where a body stops being UTF-8 (checked against the
 * platform's own decoder on crafted and random bytes), what a body's bytes read as, and the
 * JSON-RPC shape `/v1/mcp` requires before the MCP SDK sees a body.
 */
import { describe, expect, it } from 'vitest';
import { readJsonBytes } from '../../worker/http/body/json-text.ts';
import { firstInvalidUtf8 } from '../../worker/http/body/utf8.ts';
import { ApiError } from '../../worker/http/errors.ts';
import { assertJsonRpcMessages, JSON_RPC_CODES, jsonRpcError } from '../../worker/http/mcp/json-rpc.ts';

const lenient = new TextDecoder('utf-8');

/**
 * Where the platform's decoder (WHATWG UTF-8, replacing) puts its first U+FFFD, as a byte offset of
 * `bytes`, null when it puts none: what comes before it was decoded exactly, so its UTF-8 length is
 * the offset. (The inputs here hold no U+FFFD of their own.)
 */
function platformErrorOffset(bytes: Uint8Array): number | null {
  const text = lenient.decode(bytes);
  const at = text.indexOf('\uFFFD');
  return at === -1 ? null : new TextEncoder().encode(text.slice(0, at)).length;
}

describe('firstInvalidUtf8', () => {
  const cases: Array<[string, number[], number | null]> = [
    ['ASCII', [0x7b, 0x7d], null],
    ['every length', [...new TextEncoder().encode('é € 𝄞')], null],
    ['a lone continuation byte', [0x61, 0x80, 0x62], 1],
    ['0xFF', [0x61, 0x62, 0xff], 2],
    ['an overlong slash (C0 AF)', [0x61, 0xc0, 0xaf], 1],
    ['an overlong three-byte form (E0 80 AF)', [0xe0, 0x80, 0xaf], 0],
    ['an encoded surrogate (ED A0 80)', [0x61, 0xed, 0xa0, 0x80], 1],
    ['past U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80], 0],
    ['F5', [0xf5, 0x80, 0x80, 0x80], 0],
    ['a sequence cut short at the end', [0x61, 0xe2, 0x82], 1],
    ['a sequence cut short by ASCII', [0xe2, 0x82, 0x61], 0],
  ];
  it.each(cases)('%s', (_name, bytes, offset) => {
    const input = Uint8Array.from(bytes);
    expect(firstInvalidUtf8(input)?.offset ?? null).toBe(offset);
    expect(platformErrorOffset(input)).toBe(offset);
  });

  it('agrees with the platform decoder on 3,000 random byte strings', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    // Mostly valid text with a few bytes drawn from the ranges where the rules are.
    const tricky = [
      0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
    ];
    for (let n = 0; n < 3000; n++) {
      const text = new TextEncoder().encode('a é € 𝄞 z'.slice(0, 1 + Math.floor(random() * 10)));
      const bytes = Array.from(text);
      for (let k = 0; k < 1 + Math.floor(random() * 3); k++) {
        bytes.splice(
          Math.floor(random() * (bytes.length + 1)),
          0,
          tricky[Math.floor(random() * tricky.length)] as number,
        );
      }
      const input = Uint8Array.from(bytes);
      // The oracle reads U+FFFD as the decoder's; skip the rare input that spells one itself.
      if (Buffer.from(input).includes(Buffer.from([0xef, 0xbf, 0xbd]))) continue;
      expect(firstInvalidUtf8(input)?.offset ?? null, `bytes ${bytes.map((b) => b.toString(16))}`).toBe(
        platformErrorOffset(input),
      );
    }
  });
});

describe('readJsonBytes', () => {
  const bytesOf = (...parts: Array<string | number[]>) =>
    Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...new TextEncoder().encode(p)] : p)));

  it('reads UTF-8 JSON, every length of character, and drops a byte order mark', () => {
    expect(readJsonBytes(bytesOf('{"t":"é € 𝄞"}'))).toEqual({ kind: 'value', value: { t: 'é € 𝄞' } });
    expect(readJsonBytes(bytesOf([0xef, 0xbb, 0xbf], '[1]'))).toEqual({ kind: 'value', value: [1] });
    expect(readJsonBytes(bytesOf(' \n'))).toEqual({ kind: 'empty' });
  });

  it('refuses a malformed byte, naming its offset and value, rather than replacing it', () => {
    expect(readJsonBytes(bytesOf('{"t":"ab', [0xff], '"}'))).toEqual({
      kind: 'problem',
      problem: 'body: not valid UTF-8 at byte offset 8 (0xff); send JSON as UTF-8',
    });
    // An encoded surrogate is not UTF-8 either (the escape \ud800 is JSON's, and content checks refuse it).
    const surrogate = readJsonBytes(bytesOf('{"t":"', [0xed, 0xa0, 0x80], '"}'));
    expect(surrogate).toMatchObject({ problem: expect.stringContaining('at byte offset 6 (0xed)') });
  });

  it('counts nesting before parsing, and names bad JSON', () => {
    expect(readJsonBytes(bytesOf(`${'['.repeat(129)}${']'.repeat(129)}`))).toMatchObject({
      problem: expect.stringMatching(/^body: nests deeper than 128/),
    });
    expect(readJsonBytes(bytesOf('{"a":'))).toEqual({ kind: 'problem', problem: 'body: not valid JSON' });
  });
});

describe('the JSON-RPC shape of an MCP body', () => {
  const refusal = (value: unknown) => {
    try {
      assertJsonRpcMessages(value);
      return null;
    } catch (error) {
      return error instanceof ApiError ? { message: error.message, field: error.field } : error;
    }
  };

  it('takes requests, notifications, responses and batches of them', () => {
    expect(refusal({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBeNull();
    expect(refusal({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'x' } })).toBeNull();
    expect(refusal({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeNull();
    expect(refusal({ jsonrpc: '2.0', id: 3, result: {} })).toBeNull();
    expect(refusal({ jsonrpc: '2.0', id: 3, error: { code: -1, message: 'no' } })).toBeNull();
    expect(
      refusal([
        { jsonrpc: '2.0', method: 'a' },
        { jsonrpc: '2.0', id: 2, method: 'b' },
      ]),
    ).toBeNull();
  });

  it('names the field that is wrong, in one short sentence', () => {
    const cases: Array<[unknown, string]> = [
      ['tools/list', 'body: must be a JSON-RPC message (an object)'],
      [{ id: 1, method: 'tools/list' }, 'jsonrpc: must be "2.0"'],
      [{ jsonrpc: '1.0', id: 1, method: 'tools/list' }, 'jsonrpc: must be "2.0"'],
      [
        { jsonrpc: '2.0', id: 1 },
        'body: needs "method" (a request or notification), or "result" or "error" (a response)',
      ],
      [{ jsonrpc: '2.0', id: 1, method: 7 }, 'method: must be a string'],
      [{ jsonrpc: '2.0', id: 1.5, method: 'a' }, 'id: must be a string or an integer'],
      [{ jsonrpc: '2.0', id: null, method: 'a' }, 'id: must be a string or an integer'],
      [{ jsonrpc: '2.0', id: 1, method: 'a', params: [1] }, 'params: must be an object'],
      [{ jsonrpc: '2.0', id: 1, method: 'a', extra: 1 }, 'extra: not a field of a request (JSON-RPC 2.0)'],
      [{ jsonrpc: '2.0', result: {} }, 'id: required in a response'],
      [{ jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'm' } }, 'error.code: must be an integer'],
      [[], 'body: an empty batch'],
      [Array(101).fill({ jsonrpc: '2.0', method: 'a' }), 'body: a batch of at most 100 messages'],
      [
        [
          { jsonrpc: '2.0', method: 'a' },
          { jsonrpc: '2.0', method: 'b', id: {} },
        ],
        '[1].id: must be a string or an integer',
      ],
    ];
    for (const [value, message] of cases) expect(refusal(value)).toMatchObject({ message });
  });

  it('tells an API error as a JSON-RPC error: a parse error for an unreadable body, an invalid request otherwise', () => {
    const unreadable = new ApiError('invalid_request_error', 'body: not valid JSON', 'body');
    expect(jsonRpcError(unreadable, true)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: JSON_RPC_CODES.parseError,
        message: 'body: not valid JSON',
        data: { type: 'invalid_request_error', field: 'body' },
      },
    });
    const large = new ApiError('request_too_large', 'request body larger than 10 bytes');
    expect(jsonRpcError(large, true).error.code).toBe(JSON_RPC_CODES.invalidRequest);
    expect(jsonRpcError(unreadable, false).error.code).toBe(JSON_RPC_CODES.invalidRequest);
    expect(jsonRpcError(new ApiError('authentication_error', 'no'), false).error.code).toBe(
      JSON_RPC_CODES.serverError,
    );
  });
});
