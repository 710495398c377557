/**
 * The contract as JSON Schema (draft 2020-12), generated from the zod schemas, for services that
 * do not use TypeScript: the checked-in files under `shared/contract/schemas/` are these, written by
 * `npm run contract`; a unit test fails when a file differs from what the schemas generate now.
 * The same conversion ({@link toJsonSchema}) builds the HTTP API's OpenAPI 3.1 document, whose
 * schema dialect is this draft.
 */
import { z } from 'zod';
import { apiMessageSchema, appendRequestSchema, createSessionRequestSchema } from './api.ts';
import { runCompletedEventSchema, sessionCompactedEventSchema } from './events.ts';

/** The JSON Schema draft of every generated schema. */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * A zod schema as JSON Schema. `io: 'input'` describes what a sender may send (defaults
 * optional), `'output'` what a reader gets (defaults filled in). Checks zod runs in code (a
 * `refine`) have no JSON Schema form and are left out; the rest is exact.
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
}

/** One checked-in file: its name under `shared/contract/schemas/` and its schema. */
export interface ContractSchemaFile {
  file: string;
  title: string;
  description: string;
  schema: z.ZodType;
  io: 'input' | 'output';
}

/** Every file `npm run contract` writes. */
export const CONTRACT_SCHEMA_FILES: readonly ContractSchemaFile[] = [
  {
    file: 'run-completed.schema.json',
    title: 'session.run.completed',
    description:
      'The event an agent service enqueues on the BullMQ queue "compaction" (job name session.run.completed) when a run finishes, or POSTs to /v1/events/run-completed.',
    schema: runCompletedEventSchema,
    io: 'input',
  },
  {
    file: 'message.schema.json',
    title: 'Message',
    description: 'One message of a session: an Anthropic MessageParam, optionally pinned.',
    schema: apiMessageSchema,
    io: 'input',
  },
  {
    file: 'append-request.schema.json',
    title: 'AppendRequest',
    description: 'The body of POST /v1/sessions/{id}/messages.',
    schema: appendRequestSchema,
    io: 'input',
  },
  {
    file: 'create-session-request.schema.json',
    title: 'CreateSessionRequest',
    description: 'The body of POST /v1/sessions.',
    schema: createSessionRequestSchema,
    io: 'input',
  },
  {
    file: 'session-compacted.schema.json',
    title: 'session.compacted',
    description:
      'The job compactor adds to the BullMQ queue "session-events" (job name session.compacted) after each applied compaction.',
    schema: sessionCompactedEventSchema,
    io: 'output',
  },
];

/** A file's JSON Schema document: the dialect, its title and description, then the schema. */
export function contractSchemaDocument(entry: ContractSchemaFile): Record<string, unknown> {
  const {
    $schema: _dialect,
    title: _title,
    description: _description,
    ...rest
  } = toJsonSchema(entry.schema, entry.io);
  return { $schema: JSON_SCHEMA_DIALECT, title: entry.title, description: entry.description, ...rest };
}

/** A file's text as `npm run contract` writes it: two-space JSON and a final newline. */
export function contractSchemaText(entry: ContractSchemaFile): string {
  return `${JSON.stringify(contractSchemaDocument(entry), null, 2)}\n`;
}
