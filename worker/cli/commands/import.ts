/** `compactor import`: loads JSONL transcripts as sessions. */
import {
  type ImportedSession,
  importTranscript,
  SYSTEM_PINS,
  type SystemPin,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
  transcriptFiles,
} from '../../../producer/import.ts';
import { assertSchema, openDatabase } from '../../../producer/postgres/db.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { TranscriptError } from '../../../shared/contract/transcript.ts';
import { type Command, flag, optionalText, type ParsedArgs, UsageError } from '../command.ts';
import { terminalText } from '../format.ts';
import { createProgress } from '../progress.ts';

const FORMATS = `${TRANSCRIPT_FORMATS.slice(0, -1).join(', ')} or ${TRANSCRIPT_FORMATS.at(-1)}`;

export const importCommand: Command = {
  name: 'import',
  summary: 'load JSONL transcripts (files, or directories of *.jsonl) as sessions',
  positionals: '<file-or-dir>...',
  options: {
    tenant: { type: 'string', value: 'T', description: 'tenant the sessions belong to (default "default")' },
    session: {
      type: 'string',
      value: 'S',
      description: 'session id, for exactly one file (default: the file name without .jsonl)',
    },
    format: {
      type: 'string',
      value: 'F',
      description: `${FORMATS}: the files' format (default: detected from each file's first line)`,
    },
    sidechains: {
      type: 'boolean',
      description: 'claude-code: also import the subagent (sidechain) lines of a main session file',
    },
    'pin-system': {
      type: 'string',
      value: 'P',
      description:
        'leading (default) or none: pin the system messages a native transcript begins with, so compactions keep them in place',
    },
  },
  notes: [
    'Formats: corpus, one message per line (seq, role, kind, content, toolCallId, toolName, createdAt,',
    'optional pinned); anthropic, one Messages API MessageParam per line ({role, content}); claude-code,',
    'a session file as Claude Code writes it (~/.claude/projects/<project>/<session>.jsonl): its live',
    'branch, one message per streamed reply, subagent lines left out unless --sidechains (a',
    "subagent's own file is read whole). anthropic and claude-code messages get seqs 0, 1, ... and",
    'keep their content blocks exactly (thinking signatures and images included); openai-chat, one',
    'Chat Completions request per line ({model, messages}), as an agent or proxy logs them: the last',
    "line's messages become a session of format openai-chat, each message stored exactly;",
    "openai-responses, one Responses request per line ({model, input}: the last line's input becomes",
    'the session; a request chained with previous_response_id is refused, its history being on',
    "OpenAI's side), or a session's Responses items as the Agents SDK for Python's get_items() returns",
    'them (a JSON array, or one item per line); each item stored exactly.',
    'The system (or developer) messages a native transcript begins with are stored pinned unless',
    '--pin-system none: no compaction archives them, so the context keeps them where they are instead',
    'of restating them after every compaction (corpus lines say pinned themselves).',
    'Each file gets one line: imported, with its format ("detected" when not named), or refused.',
    'A malformed file is refused with its line and field named, and an existing session is refused,',
    'never duplicated; nothing of a refused file is written. The other files are still imported',
    '(exit code 1 if any was refused).',
  ],
  examples: [
    'compactor import corpus/sessions --tenant acme',
    'compactor import corpus/claude-code --tenant acme --sidechains',
    'compactor import messages.jsonl --format anthropic --session chat-7',
    'compactor import requests.jsonl --format openai-chat --session gpt-run-3',
    'compactor import responses.jsonl --format openai-responses --session codex-run-9',
  ],
  async run(args, context) {
    if (args.positionals.length === 0) throw new UsageError('give at least one transcript file or directory');
    const format = formatOption(args);
    const sidechains = flag(args, 'sidechains');
    if (sidechains && format !== undefined && format !== 'claude-code')
      throw new UsageError(`--sidechains applies to --format claude-code, not ${format}`);
    const pinSystem = pinSystemOption(args);
    const files = await transcriptFiles(args.positionals);
    const sessionId = optionalText(args, 'session');
    if (sessionId !== undefined && files.length !== 1)
      throw new UsageError('--session needs exactly one transcript file');
    const tenantId = optionalText(args, 'tenant') ?? 'default';
    const database = openDatabase(context.config().databaseUrl, {
      max: 2,
      schema: context.config().databaseSchema,
    });
    const progress = createProgress(context.stderr);
    let failed = 0;
    try {
      await assertSchema(database);
      progress.start('importing', files.length, 'files');
      for (const file of files) {
        try {
          const r = await importTranscript(database.db, file, {
            tenantId,
            sessionId,
            format,
            sidechains,
            pinSystem,
          });
          progress.print(context.stdout, importedLine(r));
        } catch (error) {
          if (!(error instanceof InvalidInputError || error instanceof TranscriptError)) throw error;
          failed++;
          progress.print(context.stderr, `not imported: ${terminalText(error.message)}`);
        }
        progress.increment();
      }
    } finally {
      progress.stop();
      await database.close();
    }
    return failed > 0 ? 1 : 0;
  },
};

/** `imported S: 30 messages, 12345 tokens (claude-code, detected; 15 ms)`. */
export function importedLine(r: ImportedSession): string {
  const how = r.detected ? `${r.format}, detected` : r.format;
  return `imported ${terminalText(r.sessionId)}: ${r.messageCount} messages, ${r.tokenCount} tokens (${how}; ${r.ms.toFixed(0)} ms)`;
}

/** `--pin-system`, or undefined when absent (the import's default). */
function pinSystemOption(args: ParsedArgs): SystemPin | undefined {
  const value = optionalText(args, 'pin-system');
  if (value === undefined) return undefined;
  const known = SYSTEM_PINS.find((p) => p === value);
  if (!known) throw new UsageError(`--pin-system must be ${SYSTEM_PINS.join(' or ')}, got "${value}"`);
  return known;
}

/** `--format`, or undefined when absent (detect each file's). */
function formatOption(args: ParsedArgs): TranscriptFormat | undefined {
  const value = optionalText(args, 'format');
  if (value === undefined) return undefined;
  const known = TRANSCRIPT_FORMATS.find((f) => f === value);
  if (!known) {
    throw new UsageError(`--format must be ${FORMATS}, got "${value}"`);
  }
  return known;
}
