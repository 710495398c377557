/**
 * The checked-in JSON Schemas of the contract (shared/contract/schemas/) are what the zod schemas
 * generate now: a service validating with them validates what compactor validates. After changing a
 * schema, `npm run contract` rewrites them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { appendRequestSchema, describeIssue } from '../../shared/protocol/api.ts';
import { CONTRACT_SCHEMA_FILES, contractSchemaText } from '../../shared/protocol/json-schemas.ts';

const DIR = new URL('../../shared/contract/schemas/', import.meta.url);

describe('contract JSON Schemas', () => {
  it.each(CONTRACT_SCHEMA_FILES.map((entry) => [entry.file, entry] as const))(
    '%s is what the zod schema generates (else run npm run contract)',
    (file, entry) => {
      const checkedIn = readFileSync(new URL(file, DIR), 'utf8');
      expect(checkedIn, `${file} is stale: run npm run contract`).toBe(contractSchemaText(entry));
    },
  );

  it('has no file that no schema generates', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
    expect(files.sort()).toEqual(CONTRACT_SCHEMA_FILES.map((e) => e.file).sort());
  });

  it('describes the event as a closed object with its required ids', () => {
    const event = JSON.parse(readFileSync(new URL('run-completed.schema.json', DIR), 'utf8'));
    expect(event.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(event.required).toEqual(['eventId', 'tenantId', 'sessionId']);
    expect(event.additionalProperties).toBe(false);
  });
});

describe('describeIssue', () => {
  const field = (input: unknown) => {
    const parsed = appendRequestSchema.safeParse(input);
    if (parsed.success) throw new Error('expected a refusal');
    return describeIssue(parsed.error.issues[0] as never);
  };

  it('names the field inside a list of blocks, not the union around it', () => {
    const bad = {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'user', content: [{ text: 'x' }] },
      ],
    };
    expect(field(bad).field).toBe('messages[1].content[0].type');
    const result = {
      messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'done' }] }],
    };
    expect(field(result)).toEqual({
      field: 'messages[0].content[0].tool_use_id',
      message: 'a tool_result block needs a string "tool_use_id"',
    });
  });

  it('names the content itself when it is neither a string nor a list', () => {
    expect(field({ messages: [{ role: 'user', content: 5 }] })).toEqual({
      field: 'messages[0].content',
      message: 'expected a string or a list of content blocks',
    });
  });
});
