/** `compactor import`: loads JSONL transcripts as sessions. */
import { importTranscript, transcriptFiles } from '../../../producer/import.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { TranscriptError } from '../../../shared/contract/transcript.ts';
import { openDatabase } from '../../../shared/postgres/db.ts';
import { type Command, optionalText, UsageError } from '../command.ts';
import { createProgress } from '../progress.ts';

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
  },
  notes: [
    'One message per line: seq, role, kind, content, toolCallId, toolName, createdAt, optional pinned.',
    'A malformed file is refused with its line and field named, and an existing session is refused,',
    'never duplicated; the other files are still imported (exit code 1 if any was refused).',
  ],
  examples: ['compactor import corpus/sessions --tenant acme'],
  async run(args, context) {
    if (args.positionals.length === 0) throw new UsageError('give at least one transcript file or directory');
    const files = await transcriptFiles(args.positionals);
    const sessionId = optionalText(args, 'session');
    if (sessionId !== undefined && files.length !== 1)
      throw new UsageError('--session needs exactly one transcript file');
    const tenantId = optionalText(args, 'tenant') ?? 'default';
    const database = openDatabase(context.config().databaseUrl, { max: 2 });
    const progress = createProgress(context.stderr);
    let failed = 0;
    try {
      progress.start('importing', files.length, 'files');
      for (const file of files) {
        try {
          const r = await importTranscript(database.db, file, { tenantId, sessionId });
          progress.print(
            context.stdout,
            `imported ${r.sessionId}: ${r.messageCount} messages, ${r.tokenCount} tokens (${r.ms.toFixed(0)} ms)`,
          );
        } catch (error) {
          if (!(error instanceof InvalidInputError || error instanceof TranscriptError)) throw error;
          failed++;
          progress.print(context.stderr, `not imported: ${error.message}`);
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
