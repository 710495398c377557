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
import { type CommandContext, flag, optionalText, type ParsedArgs, UsageError } from '../command.ts';
import { terminalText } from '../format.ts';
import { createProgress } from '../progress.ts';
import { FORMATS } from '../spec-values.ts';

/** Runs `compactor import` (its spec, flags and help: specs/import.ts); resolves with the exit code. */
export async function runImport(args: ParsedArgs, context: CommandContext): Promise<number> {
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
}

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
