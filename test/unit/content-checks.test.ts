/**
 * The input rules' own edges, without a database: the nesting scan counts brackets outside strings
 * only and stops at exactly the limit; emoji (paired surrogates) and ordinary content pass; each
 * problem names its field.
 */
import { describe, expect, it } from 'vitest';
import {
  contentProblem,
  duplicateToolUseId,
  jsonDepthProblem,
  MAX_JSON_DEPTH,
  toolUseIdsAt,
} from '../../shared/contract/content-checks.ts';

const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('jsonDepthProblem', () => {
  it('accepts exactly the limit and refuses one level more, naming the position', () => {
    expect(jsonDepthProblem(arrays(MAX_JSON_DEPTH), 'body')).toBeNull();
    expect(jsonDepthProblem(arrays(MAX_JSON_DEPTH + 1), 'body')).toEqual({
      field: 'body',
      message: `nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays (the limit) at character ${MAX_JSON_DEPTH}`,
    });
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const inString = JSON.stringify({ text: `${'['.repeat(1_000)} \\" ${'{'.repeat(1_000)} "` });
    expect(jsonDepthProblem(inString, 'body')).toBeNull();
    expect(jsonDepthProblem(`["\\\\", ${arrays(MAX_JSON_DEPTH)}]`, 'body')?.field).toBe('body');
  });
});

describe('contentProblem', () => {
  it('passes ordinary content: emoji, signed thinking, tool calls, nested results', () => {
    const content = [
      { type: 'thinking', thinking: 'plan 🙂', signature: 'EuYB' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Reading 👩‍💻 now' },
      { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.ts', opts: [1, { deep: true }] } },
    ];
    expect(contentProblem(content, 'messages[0]')).toBeNull();
    expect(contentProblem('plain text', 'messages[0]')).toBeNull();
  });

  it('names the field of a NUL, a surrogate half, a key, and a nesting past the limit', () => {
    expect(
      contentProblem(
        [
          { type: 'text', text: 'ok' },
          { type: 'text', text: 'a\u0000' },
        ],
        'm',
      )?.field,
    ).toBe('m.content[1].text');
    expect(contentProblem([{ type: 'x', 'odd key': '\uDC00' }], 'm')?.field).toBe('m.content[0]["odd key"]');
    let deep: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) deep = [deep];
    expect(contentProblem([{ type: 'tool_use', id: 't', name: 'f', input: { a: deep } }], 'm')?.field).toBe(
      'm.content[0].input',
    );
  });
});

describe('duplicateToolUseId', () => {
  it('names the second use and where the first is', () => {
    const ids = [
      ...toolUseIdsAt([{ type: 'tool_use', id: 'a' }], 'messages[0]'),
      ...toolUseIdsAt([{ type: 'text' }, { type: 'tool_use', id: 'a' }], 'messages[1]'),
    ];
    expect(duplicateToolUseId(ids)).toEqual({
      field: 'messages[1].content[1].id',
      message: 'tool_use id "a" is already used by messages[0].content[0].id',
    });
    expect(duplicateToolUseId(ids.slice(0, 1))).toBeNull();
  });
});
