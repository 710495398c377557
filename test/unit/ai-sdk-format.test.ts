/**
 * The pure rules of the `ai-sdk` format: the JSON encoding of a prompt's file data (a `Uint8Array`
 * as `{ $bytes }`, a `URL` as `{ $url }`) and its exact inverse for every spec version
 * (`LanguageModelV2/V3/V4Prompt` of `@ai-sdk/provider`, typed by the real package), over random
 * bytes too; what a message must be (errors name the field); what is read off it; how the registry
 * tells it from the other formats' messages both ways without changing their errors; the clearing of
 * results, inputs and reasoning; and the context (system messages first, every client call answered
 * next, no result without its call, reasoning in place with its providerOptions, the summary a user
 * message).
 */
import type {
  LanguageModelV2Message,
  LanguageModelV2Prompt,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
} from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { type ContextRow, LEAD_IN, NO_RESULT, SUMMARY_INTRO } from '../../shared/context/render.ts';
import type { StoredContent } from '../../shared/contract/blocks.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import type { MessageMeta } from '../../shared/contract/message.ts';
import {
  type AiSdkStoredMessage,
  base64ToBytes,
  bytesToBase64,
  decodeAiSdkMessage,
  decodeAiSdkPrompt,
  encodeAiSdkMessage,
  encodeAiSdkPrompt,
  isCanonicalBase64,
} from '../../shared/formats/ai-sdk/encoding.ts';
import { aiSdkFacts } from '../../shared/formats/ai-sdk/facts.ts';
import { AI_SDK_PART_TYPES, AI_SDK_ROLES, type AiSdkMessage } from '../../shared/formats/ai-sdk/message.ts';
import { foreignWord, likelyFormat, readsAs, SESSION_FORMAT_RULES } from '../../shared/formats/registry.ts';
import { apiMessageSchema } from '../../shared/protocol/api.ts';

const format = SESSION_FORMAT_RULES['ai-sdk'];

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBytes(next: () => number, length: number): Uint8Array {
  return Uint8Array.from({ length }, () => Math.floor(next() * 256));
}

/** A PNG's first bytes: its signature and IHDR chunk, declaring `width` × `height`. */
function pngHeader(width: number, height: number): Uint8Array {
  const bytes = new Uint8Array(33);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(bytes.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  bytes.set([8, 6, 0, 0, 0], 24);
  return bytes;
}

/**
 * Deep equality that sees what `toStrictEqual` does not: a `Uint8Array` equal byte for byte and of
 * that class, a `URL` of the same `href` (two URLs have no own properties to compare).
 */
function same(a: unknown, b: unknown, at = 'value'): void {
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    expect(a, at).toBeInstanceOf(Uint8Array);
    expect(b, at).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(a as Uint8Array).equals(Buffer.from(b as Uint8Array)), `${at}: bytes`).toBe(true);
    return;
  }
  if (a instanceof URL || b instanceof URL) {
    expect(a, at).toBeInstanceOf(URL);
    expect(b, at).toBeInstanceOf(URL);
    expect((a as URL).href, at).toBe((b as URL).href);
    return;
  }
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) {
    expect(a, at).toStrictEqual(b);
    return;
  }
  expect(Array.isArray(a), at).toBe(Array.isArray(b));
  expect(Object.keys(a), at).toEqual(Object.keys(b));
  for (const key of Object.keys(a)) {
    same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`);
  }
}

/** The prompt encoded, through JSON (as Postgres and the HTTP API carry it), and decoded. */
function throughJson<P extends readonly object[]>(prompt: P): unknown[] {
  const stored = JSON.parse(JSON.stringify(encodeAiSdkPrompt(prompt as never))) as AiSdkStoredMessage[];
  return decodeAiSdkPrompt(stored);
}

const png = pngHeader(800, 600);
const pdf = new TextEncoder().encode(
  '%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n2 0 obj << /Type /Page >> endobj\n',
);

const v2: LanguageModelV2Prompt = [
  { role: 'system', content: 'You are careful.' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Look at these.' },
      { type: 'file', data: png, mediaType: 'image/png', filename: 'screen.png' },
      {
        type: 'file',
        data: new URL('https://example.com/a b/report.pdf?x=1#y'),
        mediaType: 'application/pdf',
      },
      { type: 'file', data: bytesToBase64(pdf), mediaType: 'application/pdf' },
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'reasoning',
        text: 'The image first.',
        providerOptions: { anthropic: { signature: 'sig-v2' } },
      },
      { type: 'tool-call', toolCallId: 'call_v2', toolName: 'read_file', input: { path: 'a.ts' } },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_v2',
        toolName: 'read_file',
        output: {
          type: 'content',
          value: [{ type: 'media', data: bytesToBase64(png), mediaType: 'image/png' }],
        },
      },
    ],
  },
];

const v3: LanguageModelV3Prompt = [
  {
    role: 'user',
    content: [{ type: 'file', data: new Uint8Array([0, 255, 128, 7]), mediaType: 'audio/wav' }],
    providerOptions: { openai: { note: 'kept' } },
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'reasoning',
        text: '',
        providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'enc' } },
      },
      { type: 'file', data: new URL('https://example.com/out.png'), mediaType: 'image/png' },
      {
        type: 'tool-call',
        toolCallId: 'ws_1',
        toolName: 'web_search',
        input: { q: 'x' },
        providerExecuted: true,
      },
      {
        type: 'tool-result',
        toolCallId: 'ws_1',
        toolName: 'web_search',
        output: { type: 'json', value: [] },
      },
      { type: 'tool-call', toolCallId: 'call_v3', toolName: 'bash', input: { cmd: 'ls' } },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_v3',
        toolName: 'bash',
        output: {
          type: 'content',
          value: [
            { type: 'text', text: 'done' },
            { type: 'file-data', data: bytesToBase64(pdf), mediaType: 'application/pdf', filename: 'x.pdf' },
            { type: 'image-url', url: 'https://example.com/i.png' },
          ],
        },
      },
      { type: 'tool-approval-response', approvalId: 'ap_1', approved: false, reason: 'no' },
    ],
  },
];

const v4: LanguageModelV4Prompt = [
  {
    role: 'user',
    content: [
      { type: 'file', data: { type: 'data', data: png }, mediaType: 'image/png' },
      { type: 'file', data: { type: 'data', data: bytesToBase64(pdf) }, mediaType: 'application/pdf' },
      {
        type: 'file',
        data: { type: 'url', url: new URL('https://example.com/z.pdf') },
        mediaType: 'application/pdf',
      },
      {
        type: 'file',
        data: { type: 'url', url: new URL('s3://bucket/key'), originalUrl: 's3://bucket/key' },
        mediaType: 'image',
      },
      {
        type: 'file',
        data: { type: 'reference', reference: { openai: 'file-123' } },
        mediaType: 'application/pdf',
      },
      { type: 'file', data: { type: 'text', text: 'plain notes' }, mediaType: 'text/plain' },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'Thinking.', providerOptions: { anthropic: { signature: 'sig-v4' } } },
      {
        type: 'reasoning-file',
        data: { type: 'data', data: new Uint8Array([1, 2, 3]) },
        mediaType: 'image/png',
      },
      {
        type: 'custom',
        kind: 'openai.compaction',
        providerOptions: { openai: { encryptedContent: 'blob' } },
      },
      { type: 'tool-call', toolCallId: 'call_v4', toolName: 'look', input: {} },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_v4',
        toolName: 'look',
        output: {
          type: 'content',
          value: [
            { type: 'file', data: { type: 'data', data: png }, mediaType: 'image/png' },
            {
              type: 'file',
              data: { type: 'url', url: new URL('https://example.com/q.png') },
              mediaType: 'image/png',
            },
            { type: 'custom', providerOptions: { anthropic: { type: 'tool-reference', toolName: 'x' } } },
          ],
        },
      },
    ],
  },
];

describe('the encoding', () => {
  it.each([
    ['V2', v2],
    ['V3', v3],
    ['V4', v4],
  ] as const)('%s: encoded, through JSON and decoded, the prompt comes back exactly', (_, prompt) => {
    const decoded = throughJson(prompt);
    same(decoded, prompt);
    // The stored form is JSON, and every file's bytes and URLs are tagged.
    const stored = encodeAiSdkPrompt(prompt);
    expect(JSON.parse(JSON.stringify(stored))).toStrictEqual(stored);
    expect(JSON.stringify(stored)).not.toMatch(/"data":\{\}|"url":\{\}/);
  });

  it('tags only file data, and passes every other value on as the same object', () => {
    const [system, user] = v2;
    expect(encodeAiSdkMessage(system as LanguageModelV2Message)).toBe(system);
    const stored = encodeAiSdkMessage(user as LanguageModelV2Message);
    const parts = stored.content as Array<Record<string, unknown>>;
    const original = (user as { content: unknown[] }).content;
    expect(parts[0]).toBe(original[0]);
    expect(parts[1]).toStrictEqual({
      type: 'file',
      data: { $bytes: Buffer.from(png).toString('base64') },
      mediaType: 'image/png',
      filename: 'screen.png',
    });
    expect(parts[2]).toMatchObject({ data: { $url: 'https://example.com/a%20b/report.pdf?x=1#y' } });
    expect(parts[3]).toBe(original[3]);
    const v4User = encodeAiSdkMessage(v4[0] as LanguageModelV4Message).content as Array<
      Record<string, unknown>
    >;
    expect(v4User[0]?.data).toStrictEqual({
      type: 'data',
      data: { $bytes: Buffer.from(png).toString('base64') },
    });
    expect(v4User[3]?.data).toStrictEqual({
      type: 'url',
      url: { $url: 's3://bucket/key' },
      originalUrl: 's3://bucket/key',
    });
    expect(v4User[4]).toBe((v4[0] as { content: unknown[] }).content[4]);
    // A tag-shaped object where a file's data is not (a tool's input) is user data: untouched both ways.
    const call = {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: { $bytes: 'AAAA', $url: 'x' } }],
    } as const;
    expect(encodeAiSdkMessage(call)).toBe(call);
    expect(decodeAiSdkMessage(call)).toBe(call);
  });

  it('writes the base64 Node writes, for random bytes of every length, and reads it back byte for byte', () => {
    const next = random(20_240_611);
    for (let n = 0; n < 600; n++) {
      const bytes = randomBytes(next, n < 40 ? n : Math.floor(next() * 5000));
      const text = bytesToBase64(bytes);
      expect(text).toBe(Buffer.from(bytes).toString('base64'));
      expect(isCanonicalBase64(text)).toBe(true);
      same(base64ToBytes(text), bytes, `${bytes.length} bytes`);
      const message = {
        role: 'user',
        content: [{ type: 'file', data: bytes, mediaType: 'application/octet-stream' }],
      };
      same(throughJson([message]), [message], `message of ${bytes.length} bytes`);
      const tagged = {
        role: 'user',
        content: [{ type: 'file', data: { type: 'data', data: bytes }, mediaType: 'image' }],
      };
      same(throughJson([tagged]), [tagged], `V4 message of ${bytes.length} bytes`);
    }
    // A Buffer (a Uint8Array) comes back as a plain Uint8Array of the same bytes.
    const buffer = Buffer.from('hello');
    const [back] = throughJson([
      { role: 'user', content: [{ type: 'file', data: buffer, mediaType: 'text/plain' }] },
    ]);
    const data = ((back as AiSdkMessage).content[0] as unknown as { data: Uint8Array }).data;
    expect(Object.getPrototypeOf(data)).toBe(Uint8Array.prototype);
    expect(Buffer.from(data).toString()).toBe('hello');
  });

  it('refuses base64 it did not write, so decoding and encoding again gives the stored text back', () => {
    for (const bad of ['A', 'AB=', 'AB==A===', 'AB=C', 'AB\nCD==', 'AB+/-_==', 'AR==', 'AAB=']) {
      expect(isCanonicalBase64(bad), bad).toBe(false);
      expect(() => base64ToBytes(bad)).toThrow(TypeError);
    }
    const next = random(7);
    for (let n = 0; n < 300; n++) {
      const text = bytesToBase64(randomBytes(next, Math.floor(next() * 64)));
      expect(bytesToBase64(base64ToBytes(text))).toBe(text);
    }
  });

  it('keeps a URL as its href, which reads back as the same URL', () => {
    const urls = [
      'https://example.com',
      'https://EXAMPLE.com:443/a/../b/./c?q=a b#f',
      'https://münchen.de/straße',
      'http://[::1]:8080/x',
      'data:image/png;base64,iVBORw0KGgo=',
      'file:///tmp/a%20b.pdf',
      's3://bucket/a//b',
      'web+demo:/.//not-a-host/',
      'gs://bucket/key?generation=1',
    ];
    for (const text of urls) {
      const url = new URL(text);
      const [back] = throughJson([
        { role: 'user', content: [{ type: 'file', data: url, mediaType: 'image/png' }] },
      ]);
      same(((back as AiSdkMessage).content[0] as unknown as { data: URL }).data, url, text);
      expect(new URL(url.href).href).toBe(url.href);
    }
  });

  it('throws on a tag it could not have written', () => {
    const bytes = { role: 'user', content: [{ type: 'file', data: { $bytes: 'A' }, mediaType: 'x/y' }] };
    expect(() => decodeAiSdkMessage(bytes)).toThrow(/canonical base64/);
    const url = { role: 'user', content: [{ type: 'file', data: { $url: 'not a url' }, mediaType: 'x/y' }] };
    expect(() => decodeAiSdkMessage(url)).toThrow(/is not a URL/);
  });
});

/** Every value of a union, as a record the type checker holds complete (a missing or extra key fails). */
type Every<T extends string> = Record<T, true>;
type Parts<M> = M extends { content: infer C } ? (C extends ReadonlyArray<infer P> ? P : never) : never;
type PartType =
  Parts<LanguageModelV2Message | LanguageModelV3Message | LanguageModelV4Message> extends {
    type: infer T extends string;
  }
    ? T
    : never;
type Outputs<M> =
  Parts<M> extends infer P ? (P extends { type: 'tool-result'; output: infer O } ? O : never) : never;
type Output = Outputs<LanguageModelV2Message | LanguageModelV3Message | LanguageModelV4Message>;
type ContentItemType = Output extends infer O
  ? O extends { type: 'content'; value: ReadonlyArray<infer I> }
    ? I extends { type: infer T extends string }
      ? T
      : never
    : never
  : never;

describe("the format's words are the AI SDK's", () => {
  it('has every role and part type of the three versions, and no other', () => {
    const roles: Every<(LanguageModelV2Message | LanguageModelV3Message | LanguageModelV4Message)['role']> = {
      system: true,
      user: true,
      assistant: true,
      tool: true,
    };
    const parts: Every<PartType> = {
      text: true,
      file: true,
      reasoning: true,
      'reasoning-file': true,
      custom: true,
      'tool-call': true,
      'tool-result': true,
      'tool-approval-response': true,
    };
    const outputs: Every<Output['type']> = {
      text: true,
      json: true,
      'execution-denied': true,
      'error-text': true,
      'error-json': true,
      content: true,
    };
    const items: Every<ContentItemType> = {
      text: true,
      media: true,
      'file-data': true,
      'file-url': true,
      'file-id': true,
      'image-data': true,
      'image-url': true,
      'image-file-id': true,
      file: true,
      custom: true,
    };
    expect([...AI_SDK_ROLES].sort()).toEqual(Object.keys(roles).sort());
    expect([...AI_SDK_PART_TYPES].sort()).toEqual(Object.keys(parts).sort());
    // Each output and content item type is taken (and one the types lack refused, below).
    for (const type of Object.keys(outputs)) {
      const output =
        type === 'content'
          ? { type, value: [] }
          : type === 'execution-denied'
            ? { type }
            : { type, value: type.endsWith('json') ? null : '' };
      expect(() =>
        format.rowOf(
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output }] },
          'm',
          {},
        ),
      ).not.toThrow();
    }
    for (const type of Object.keys(items)) {
      const item = {
        type,
        text: '',
        data: '',
        url: '',
        fileId: 'f',
        mediaType: 'image/png',
        ...(type === 'file' ? { data: { type: 'text', text: '' } } : {}),
      };
      const message = {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'content', value: [item] } },
        ],
      };
      expect(() => format.rowOf(message, 'm', {}), type).not.toThrow();
    }
  });
});

/** rowOf of a message, or the text of its refusal. */
function refusal(message: unknown): string {
  try {
    format.rowOf(message, 'm', {});
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('a message of the format', () => {
  it('takes every message of the three spec versions, encoded, stored as the same object', () => {
    for (const message of [...v2, ...v3, ...v4].map((m) => encodeAiSdkMessage(m as never))) {
      const row = format.rowOf(message, 'm', {});
      expect(row.contentBlocks).toBe(message);
    }
  });

  it.each<[string, unknown, string | RegExp]>([
    ['no object', 'hi', 'm: expected an AI SDK prompt message object ({ role, content })'],
    [
      'a role it has not',
      { role: 'developer', content: 'x' },
      'm.role: expected one of "system", "user", "assistant", "tool", got "developer"',
    ],
    [
      'system parts',
      { role: 'system', content: [{ type: 'text', text: 'x' }] },
      /^m\.content: expected a string \(a system message's content is its text\)/,
    ],
    [
      'user text as a string',
      { role: 'user', content: 'hi' },
      /^m\.content: expected a list of content parts .*got "hi"/,
    ],
    [
      'a call from the user',
      { role: 'user', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} }] },
      'm.content[0].type: a "tool-call" part belongs in an assistant message, not in a user message',
    ],
    [
      'text in a tool message',
      { role: 'tool', content: [{ type: 'text', text: 'x' }] },
      /^m\.content\[0\]\.type: a "text" part belongs in a user message or an assistant message/,
    ],
    [
      'an unknown part',
      { role: 'user', content: [{ type: 'image', image: 'x' }] },
      'm.content[0].type: expected one of "text", "file" in a user message, got "image"',
    ],
    [
      'text not a string',
      { role: 'user', content: [{ type: 'text', text: 5 }] },
      'm.content[0].text: expected a string, got 5',
    ],
    [
      'a file without media type',
      { role: 'user', content: [{ type: 'file', data: 'AAAA' }] },
      /^m\.content\[0\]\.mediaType: expected an IANA media type/,
    ],
    [
      'raw bytes',
      { role: 'user', content: [{ type: 'file', data: new Uint8Array([1]), mediaType: 'image/png' }] },
      /^m\.content\[0\]\.data: a Uint8Array is not JSON: encode the message with encodeAiSdkMessage/,
    ],
    [
      'a raw URL',
      {
        role: 'user',
        content: [
          { type: 'file', data: { type: 'url', url: new URL('https://x.dev') }, mediaType: 'image/png' },
        ],
      },
      /^m\.content\[0\]\.data\.url: a URL object is not JSON/,
    ],
    [
      'bytes in a tool input',
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: { blob: new Uint8Array(2) } }],
      },
      /^m\.content\[0\]\.input\.blob: a Uint8Array is not JSON/,
    ],
    [
      'a Date',
      { role: 'user', content: [{ type: 'text', text: 'x', providerOptions: { a: { at: new Date(0) } } }] },
      /^m\.content\[0\]\.providerOptions\.a\.at: a Date is not JSON/,
    ],
    [
      'bad base64',
      { role: 'user', content: [{ type: 'file', data: { $bytes: 'AB=C' }, mediaType: 'image/png' }] },
      /^m\.content\[0\]\.data\.\$bytes: expected canonical base64/,
    ],
    [
      'an extra key by the tag',
      { role: 'user', content: [{ type: 'file', data: { $bytes: 'AAAA', x: 1 }, mediaType: 'image/png' }] },
      /^m\.content\[0\]\.data: expected base64 text or \{ \$bytes/,
    ],
    [
      'a URL not as href writes it',
      {
        role: 'user',
        content: [{ type: 'file', data: { $url: 'https://Example.com' }, mediaType: 'image/png' }],
      },
      'm.content[0].data.$url: expected the URL as URL.href writes it ("https://example.com/"), as encodeAiSdkMessage stores it',
    ],
    [
      'a V4 url as a string',
      {
        role: 'user',
        content: [{ type: 'file', data: { type: 'url', url: 'https://x.dev/' }, mediaType: 'image/png' }],
      },
      /^m\.content\[0\]\.data\.url: expected \{ \$url: <href> \}/,
    ],
    [
      'a V4 data kind it has not',
      { role: 'user', content: [{ type: 'file', data: { type: 'blob' }, mediaType: 'image/png' }] },
      /^m\.content\[0\]\.data\.type: expected "data", "url", "reference" or "text", got "blob"/,
    ],
    [
      'a reasoning file by reference',
      {
        role: 'assistant',
        content: [
          {
            type: 'reasoning-file',
            data: { type: 'reference', reference: { a: 'b' } },
            mediaType: 'image/png',
          },
        ],
      },
      /^m\.content\[0\]\.data\.type: expected "data" or "url"/,
    ],
    [
      'a custom kind without provider',
      { role: 'assistant', content: [{ type: 'custom', kind: 'compaction' }] },
      /^m\.content\[0\]\.kind: expected the kind of custom content/,
    ],
    [
      'a call without id',
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: '', toolName: 't', input: {} }] },
      'm.content[0].toolCallId: expected a non-empty string, got ""',
    ],
    [
      'a call without input',
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't' }] },
      /^m\.content\[0\]\.input: expected the call's input/,
    ],
    [
      'providerExecuted not a boolean',
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {}, providerExecuted: 'yes' }],
      },
      'm.content[0].providerExecuted: expected true or false, got "yes"',
    ],
    [
      'an output of no type',
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'blob' } }],
      },
      /^m\.content\[0\]\.output\.type: expected a tool result output of type/,
    ],
    [
      'a text output not text',
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'text', value: { a: 1 } } },
        ],
      },
      'm.content[0].output.value: expected a string, got an object',
    ],
    [
      'a json output without value',
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'json' } }],
      },
      /^m\.content\[0\]\.output\.value: expected a JSON value/,
    ],
    [
      'a content item of no known type',
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c',
            toolName: 't',
            output: { type: 'content', value: [{ type: 'video' }] },
          },
        ],
      },
      /^m\.content\[0\]\.output\.value\[0\]\.type: expected one of "text", "media"/,
    ],
    [
      'an approval without approved',
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a' }] },
      /^m\.content\[0\]\.approved: expected true or false/,
    ],
    [
      'providerOptions not per provider',
      { role: 'user', content: [], providerOptions: { anthropic: 'x' } },
      'm.providerOptions.anthropic: expected an object (the provider\'s options), got "x"',
    ],
    ['a NUL', { role: 'system', content: 'a\u0000b' }, /^m\.content: contains a NUL/],
  ])('refuses %s, naming the field', (_, message, error) => {
    const said = refusal(message);
    if (typeof error === 'string') expect(said).toBe(error);
    else expect(said).toMatch(error);
  });

  it('gives each client call its own place, so an id given twice is named where it repeats', () => {
    const twice = format.rowOf(
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} },
          { type: 'text', text: 'and again' },
          { type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} },
        ],
      },
      'messages[4]',
      {},
    );
    expect(twice.toolUseIdsAt).toEqual([
      { id: 'c', field: 'messages[4].content[0].toolCallId' },
      { id: 'c', field: 'messages[4].content[2].toolCallId' },
    ]);
  });

  it('takes pinned beside its fields, and stores the message without it', () => {
    const row = format.rowOf({ role: 'system', content: 'rules', pinned: true }, 'm', {});
    expect(row).toMatchObject({ pinned: true, contentBlocks: { role: 'system', content: 'rules' } });
    expect(row.contentBlocks).not.toHaveProperty('pinned');
  });
});

describe('what is read off a message', () => {
  const stored = (m: object) => encodeAiSdkMessage(m as never) as unknown as AiSdkMessage;

  it("client calls open their ids; tool results answer theirs; provider-executed pairs are the provider's", () => {
    const assistant = format.rowOf(stored(v3[1] as LanguageModelV3Message), 'messages[1]', {});
    expect(assistant).toMatchObject({
      role: 'assistant',
      kind: 'tool_call',
      toolUseIds: ['call_v3'],
      toolResultIds: [],
      toolName: 'bash',
      toolCallId: 'call_v3',
      hasThinking: true,
      toolUseIdsAt: [{ id: 'call_v3', field: 'messages[1].content[4].toolCallId' }],
    });
    const tool = format.rowOf(stored(v3[2] as LanguageModelV3Message), 'm', {});
    expect(tool).toMatchObject({
      role: 'tool',
      kind: 'tool_result',
      toolResultIds: ['call_v3'],
      toolName: 'bash',
    });
    expect(tool.content).toContain('done\n[document: application/pdf, 2 pages');
    expect(tool.content).toContain('[tool approval: denied ap_1] no');
    const system = format.rowOf(v2[0], 'm', {});
    expect(system).toMatchObject({
      role: 'system',
      kind: 'message',
      content: 'You are careful.',
      hasThinking: false,
    });
  });

  it('renders files as markers, never base64, and counts them by their size and pages', () => {
    const user = format.rowOf(stored(v2[1] as LanguageModelV2Message), 'm', {});
    expect(user.content).toBe(
      [
        'Look at these.',
        '[image: image/png, 800x600, 33 B, screen.png]',
        '[document: url https://example.com/a%20b/report.pdf?x=1#y]',
        `[document: application/pdf, 2 pages, ${pdf.length} B]`,
      ].join('\n'),
    );
    expect(user.content).not.toContain(bytesToBase64(png));
    const facts = aiSdkFacts(stored(v2[1] as LanguageModelV2Message));
    // An 800x600 image is 29 × 22 patches of 28 px; a PDF a page image and its text per page.
    expect(facts.tokenCount).toBe(Math.ceil(user.content.length / 4) + 29 * 22 + 3818 + 2 * 3818 + 4);
    const v4User = format.rowOf(stored(v4[0] as LanguageModelV4Message), 'm', {});
    expect(v4User.content.split('\n')).toEqual([
      '[image: image/png, 800x600, 33 B]',
      `[document: application/pdf, 2 pages, ${pdf.length} B]`,
      '[document: url https://example.com/z.pdf]',
      '[image: url s3://bucket/key]',
      '[document: file openai]',
      '[document: text/plain, 11 chars]',
    ]);
    const audio = format.rowOf(stored(v3[0] as LanguageModelV3Message), 'm', {});
    expect(audio.content).toBe('[file: audio/wav, 4 B]');
  });

  it('reads reasoning, custom parts and each output type', () => {
    const assistant = format.rowOf(stored(v4[1] as LanguageModelV4Message), 'm', {});
    expect(assistant.content.split('\n')).toEqual([
      '[reasoning] Thinking.',
      '[reasoning file: image/png, 3 B]',
      '[custom: openai.compaction]',
      '{"name":"look","arguments":{}}',
    ]);
    expect(assistant.hasThinking).toBe(true);
    const result = (output: object) =>
      format.rowOf(
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output }] },
        'm',
        {},
      ).content;
    expect(result({ type: 'text', value: 'ok' })).toBe('ok');
    expect(result({ type: 'error-text', value: 'boom' })).toBe('[error] boom');
    expect(result({ type: 'json', value: { a: [1] } })).toBe('{"a":[1]}');
    expect(result({ type: 'error-json', value: null })).toBe('[error] null');
    expect(result({ type: 'execution-denied', reason: 'not now' })).toBe('[execution denied] not now');
  });
});

describe('what tells an AI SDK message from the other formats', () => {
  const toolMessage = {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'text', value: 'ok' } }],
  };
  const withOptions = {
    role: 'assistant',
    content: [{ type: 'text', text: 'hi' }],
    providerOptions: { a: {} },
  };

  it('refuses an AI SDK message in another session, naming the word', () => {
    for (const other of ['anthropic', 'openai-chat', 'openai-responses'] as const) {
      expect(foreignWord(other, toolMessage, 'm')).toBe(
        'm.content[0].type: "tool-result" is an AI SDK content part',
      );
      expect(foreignWord(other, withOptions, 'm')).toBe(
        'm.providerOptions: providerOptions is an AI SDK field',
      );
    }
    const reasoning = { role: 'assistant', content: [{ type: 'reasoning', text: 'x' }] };
    expect(foreignWord('anthropic', reasoning, 'm')).toBe(
      'm.content[0].type: "reasoning" is an AI SDK content part',
    );
    const call = {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} }],
    };
    expect(foreignWord('openai-responses', call, 'm')).toBe(
      'm.content[0].type: "tool-call" is an AI SDK content part',
    );
  });

  it("refuses another format's message in an AI SDK session, naming the word", () => {
    expect(foreignWord('ai-sdk', { role: 'tool', tool_call_id: 'c', content: 'ok' }, 'm')).toBe(
      'm.role: "tool" is a Chat Completions role',
    );
    expect(
      foreignWord('ai-sdk', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x' }] }, 'm'),
    ).toBe('m.content[0].type: "tool_result" is an Anthropic Messages API content block');
    expect(
      foreignWord('ai-sdk', { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }, 'm'),
    ).toBe('m.type: "function_call" is an OpenAI Responses input item');
    expect(foreignWord('ai-sdk', { role: 'assistant', content: null, tool_calls: [] }, 'm')).toBe(
      'm.tool_calls: tool_calls is a Chat Completions field',
    );
    expect(foreignWord('ai-sdk', { role: 'user', content: [{ type: 'input_text', text: 'x' }] }, 'm')).toBe(
      'm.content[0].type: "input_text" is an OpenAI Responses content part',
    );
  });

  it("keeps the other formats' errors as they were", () => {
    expect(foreignWord('anthropic', { role: 'tool', content: 'no such role' }, 'm')).toBe(
      'm.role: "tool" is a Chat Completions role',
    );
    expect(foreignWord('openai-responses', { role: 'tool', tool_call_id: 'c', content: 'ok' }, 'm')).toBe(
      'm.role: "tool" is a Chat Completions role',
    );
    expect(
      foreignWord('openai-chat', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] }, 'm'),
    ).toBe('m.content[0].type: "tool_result" is an Anthropic Messages API content block');
    expect(
      foreignWord(
        'anthropic',
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'x' }] },
        'm',
      ),
    ).toBe('m.role: "developer" is a Chat Completions role or an OpenAI Responses role');
  });

  it('reads its own messages as its own, and lets the HTTP API take them', () => {
    expect(foreignWord('ai-sdk', toolMessage, 'm')).toBeNull();
    expect(readsAs('ai-sdk', toolMessage)).toBe(true);
    expect(readsAs('ai-sdk', withOptions)).toBe(true);
    expect(likelyFormat([toolMessage])).toBe('ai-sdk');
    // A message of text alone is every format's: the session's format decides.
    expect(readsAs('ai-sdk', { role: 'user', content: [{ type: 'text', text: 'hi' }] })).toBe(false);
    for (const message of [...v2, ...v3, ...v4].map((m) => encodeAiSdkMessage(m as never))) {
      expect(apiMessageSchema.safeParse(message).success, JSON.stringify(message).slice(0, 80)).toBe(true);
    }
  });
});

/** A row of a stored message, as the context read gives it. */
function rowOf(seq: number, message: object, extra: Partial<ContextRow> = {}): ContextRow {
  const facts = aiSdkFacts(message as AiSdkMessage);
  return {
    seq,
    role: facts.role,
    kind: facts.kind,
    content: message as StoredContent,
    pinned: false,
    ...extra,
  };
}

const rowsOf = (messages: object[]) => messages.map((m, seq) => rowOf(seq, m));

const say = (role: 'user' | 'assistant', text: string) => ({ role, content: [{ type: 'text', text }] });
const ask = (ids: string[], reasoning?: string) => ({
  role: 'assistant',
  content: [
    ...(reasoning
      ? [
          {
            type: 'reasoning',
            text: reasoning,
            providerOptions: { anthropic: { signature: `sig-${reasoning}` } },
          },
        ]
      : []),
    ...ids.map((id) => ({ type: 'tool-call', toolCallId: id, toolName: 'bash', input: { cmd: id } })),
  ],
});
const answer = (...ids: string[]) => ({
  role: 'tool',
  content: ids.map((id) => ({
    type: 'tool-result',
    toolCallId: id,
    toolName: 'bash',
    output: { type: 'text', value: `out ${id}` },
  })),
});

const render = (rows: ContextRow[], extra: Partial<Parameters<typeof format.renderContext>[0]> = {}) =>
  format.renderContext({
    rows,
    checkpoint: null,
    compactedThroughSeq: null,
    archivedSystem: [],
    ...extra,
  }) as {
    format: string;
    prompt: AiSdkMessage[];
    tokens: number;
    notices: Array<{ type: string; seq: number; message: string }>;
  };

describe('the context', () => {
  it('is the stored messages themselves when they keep the rules', () => {
    const messages = [
      { role: 'system', content: 'rules' },
      say('user', 'go'),
      ask(['a'], 'r1'),
      answer('a'),
      say('assistant', 'done'),
    ];
    const rows = rowsOf(messages);
    const context = render(rows);
    expect(context.format).toBe('ai-sdk');
    expect(context.prompt).toStrictEqual(messages);
    context.prompt.forEach((m, i) => {
      expect(m).toBe(rows[i]?.content);
    });
    expect(context.tokens).toBe(
      messages.reduce((sum, m) => sum + aiSdkFacts(m as AiSdkMessage).tokenCount, 0),
    );
    expect(context.notices).toEqual([]);
  });

  it('sends every system message first: the leading ones, the archived ones restated, then later ones', () => {
    const rows = rowsOf([
      { role: 'system', content: 'rules' },
      say('user', 'go'),
      { role: 'system', content: 'later' },
      say('assistant', 'ok'),
    ]);
    const { prompt } = render(rows, { archivedSystem: ['old', 'rules', 'old'] });
    expect(prompt).toStrictEqual([
      { role: 'system', content: 'rules' },
      { role: 'system', content: 'old' },
      { role: 'system', content: 'later' },
      say('user', 'go'),
      say('assistant', 'ok'),
    ]);
  });

  it('answers a client call the session moved on from, leaves the newest calls open, and orphans a stray result', () => {
    const messages = [say('user', 'go'), ask(['a', 'b']), answer('b', 'z'), say('user', 'next'), ask(['c'])];
    const { prompt } = render(rowsOf(messages));
    expect(prompt).toStrictEqual([
      say('user', 'go'),
      ask(['a', 'b']),
      answer('b'),
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'bash',
            output: { type: 'error-text', value: NO_RESULT },
          },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: '[A tool result whose tool call is not in this conversation (toolCallId z)]\nout z',
          },
        ],
      },
      say('user', 'next'),
      ask(['c']),
    ]);
    // A result with no call before it at all, and an approval that stays a tool message.
    const approval = { type: 'tool-approval-response', approvalId: 'ap', approved: true };
    const stray = { role: 'tool', content: [...answer('q').content, approval] };
    expect(render(rowsOf([say('user', 'go'), stray])).prompt).toStrictEqual([
      say('user', 'go'),
      { role: 'tool', content: [approval] },
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: '[A tool result whose tool call is not in this conversation (toolCallId q)]\nout q',
          },
        ],
      },
    ]);
  });

  it("never makes up a provider-executed call's result, nor clears it", () => {
    const hosted = {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'ws', toolName: 'web_search', input: {}, providerExecuted: true },
      ],
    };
    const { prompt } = render(rowsOf([say('user', 'go'), hosted, say('user', 'more')]));
    expect(prompt).toStrictEqual([say('user', 'go'), hosted, say('user', 'more')]);
    expect(format.toolNames(hosted as StoredContent)).toEqual([]);
    expect(aiSdkFacts(hosted as AiSdkMessage)).toMatchObject({ kind: 'message', toolUseIds: [] });
  });

  it('keeps reasoning in place with its providerOptions, and leaves out what a compaction made stale', () => {
    const messages = [
      say('user', 'go'),
      ask(['a'], 'r1'),
      answer('a'),
      say('assistant', 'done'),
      say('user', 'again'),
      ask(['b'], 'r2'),
      answer('b'),
      say('assistant', 'done too'),
    ];
    const rows = rowsOf(messages);
    expect(render(rows).prompt).toStrictEqual(messages);
    // Signed before a compaction that changed what came before it (seq ≤ 2): left out, not altered.
    const after = render(rows, { compactedThroughSeq: 2 }).prompt;
    expect(after[1]).toStrictEqual(ask(['a']));
    expect(after[5]).toBe(rows[5]?.content);
    // A reply made from an older context version is stale too; one made from the current one is not.
    const versioned = rows.map((r) => (r.seq === 5 ? { ...r, contextVersion: 1 } : r));
    expect(render(versioned, { version: 2, thinkingSinceVersion: 2 }).prompt[5]).toStrictEqual(ask(['b']));
    expect(render(versioned, { version: 1, thinkingSinceVersion: 1 }).prompt[5]).toBe(rows[5]?.content);
    // strip: none at all; a message of nothing but reasoning goes.
    const only = { role: 'assistant', content: [{ type: 'reasoning', text: 'hmm' }] };
    const stripped = render(rowsOf([say('user', 'go'), only, say('assistant', 'ok')]), {
      thinking: 'strip',
    }).prompt;
    expect(stripped).toStrictEqual([say('user', 'go'), say('assistant', 'ok')]);
  });

  it('keeps an open tool loop intact across a compaction, saying so', () => {
    const rows = rowsOf([say('user', 'go'), ask(['a'], 'r1'), answer('a')]);
    const context = render(rows, { compactedThroughSeq: 2 });
    expect(context.prompt[1]).toBe(rows[1]?.content);
    expect(context.notices).toEqual([
      { type: 'thinking_prefix_changed', seq: 1, message: expect.stringContaining('open tool loop') },
    ]);
  });

  it('puts the summary where the archived messages were, as a user message, and a user turn first', () => {
    const summary: ContextRow = {
      seq: 4,
      role: 'user',
      kind: 'summary',
      content: 'what happened',
      pinned: false,
    };
    const pinned = rowOf(1, say('user', 'pinned note'), { pinned: true });
    const { prompt } = render([
      rowOf(0, { role: 'system', content: 'rules' }),
      pinned,
      summary,
      rowOf(5, say('assistant', 'next')),
    ]);
    expect(prompt[0]).toStrictEqual({ role: 'system', content: 'rules' });
    expect(prompt[1]).toStrictEqual({
      role: 'user',
      content: [
        { type: 'text', text: expect.stringMatching(/<session-record>\nwhat happened\n<\/session-record>$/) },
      ],
    });
    expect(
      String((prompt[1]?.content[0] as unknown as { text: string } | undefined)?.text).startsWith(
        `${SUMMARY_INTRO} Its originals up to seq 4`,
      ),
    ).toBe(true);
    expect(prompt.slice(2)).toStrictEqual([say('user', 'pinned note'), say('assistant', 'next')]);
    // After a window cut, an assistant message first gets the lead-in before it.
    expect(render(rowsOf([say('assistant', 'mid-way')])).prompt).toStrictEqual([
      { role: 'user', content: [{ type: 'text', text: LEAD_IN }] },
      say('assistant', 'mid-way'),
    ]);
    const tokens = format.summaryTokens({ rows: [summary], checkpoint: null });
    expect(tokens).toBe(render([summary]).tokens);
  });
});

describe('the row rules of the strategies', () => {
  const clearing = {
    clearable: new Set(['a', 'b']),
    placeholder: (id: string, tokens: number) => `[tool result cleared: ${id}, ${tokens} tokens]`,
    clearedPrefix: '[tool result cleared: ',
  };

  it('clears a result to a text output, keeping the part and everything else', () => {
    const tool = {
      role: 'tool',
      providerOptions: { x: { y: 1 } },
      content: [
        {
          ...answer('a').content[0],
          providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
        },
        answer('c').content[0],
      ],
    };
    const result = format.clearToolResults(tool as StoredContent, clearing);
    expect(result).toEqual({
      answered: ['a'],
      cleared: ['a'],
      content: {
        role: 'tool',
        providerOptions: { x: { y: 1 } },
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'bash',
            output: { type: 'text', value: '[tool result cleared: a, 2 tokens]' },
            providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
          },
          answer('c').content[0],
        ],
      },
    });
    // Cleared already: answered, nothing to rewrite.
    expect(format.clearToolResults(result.content as StoredContent, clearing)).toEqual({
      content: null,
      answered: ['a'],
      cleared: [],
    });
    // A provider-executed result in an assistant message is never touched.
    expect(
      format.clearToolResults(encodeAiSdkMessage(v3[1] as never) as StoredContent, clearing).content,
    ).toBeNull();
  });

  it('empties a client call’s input, and drops reasoning but never a message’s last part', () => {
    const cleared = format.clearToolInputs(ask(['a', 'c'], 'r') as StoredContent, new Set(['a']));
    expect(cleared?.cleared).toEqual(['a']);
    expect((cleared?.content as AiSdkMessage | undefined)?.content[1]).toStrictEqual({
      type: 'tool-call',
      toolCallId: 'a',
      toolName: 'bash',
      input: {},
    });
    expect(format.clearToolInputs(cleared?.content as StoredContent, new Set(['a']))).toBeNull();
    const v4Assistant = encodeAiSdkMessage(v4[1] as never) as StoredContent;
    const dropped = format.clearThinking(v4Assistant);
    expect(dropped).toMatchObject({ dropped: 2 });
    expect(
      ((dropped as unknown as { content: AiSdkMessage }).content.content as Array<{ type: string }>).map(
        (p) => p.type,
      ),
    ).toEqual(['custom', 'tool-call']);
    expect(
      format.clearThinking({
        role: 'assistant',
        content: [{ type: 'reasoning', text: 'x' }],
      } as StoredContent),
    ).toBe('thinking only');
    expect(format.clearThinking(say('assistant', 'x') as StoredContent)).toBeNull();
    const meta: MessageMeta = {
      seq: 3,
      role: 'assistant',
      kind: 'tool_call',
      toolCallId: 'call_v4',
      toolName: 'look',
      toolUseIds: ['call_v4'],
      toolResultIds: [],
      thinking: true,
      tokenCount: 900,
      pinned: false,
    };
    const rewrite = format.rewriteOf(meta, (dropped as { content: StoredContent }).content);
    expect(rewrite).toMatchObject({
      seq: 3,
      thinking: false,
      tokensBefore: 900,
      text: '[custom: openai.compaction]\n{"name":"look","arguments":{}}',
    });
    expect(() => format.rewriteOf(meta, 'text')).toThrow(/holds no AI SDK message/);
  });
});
