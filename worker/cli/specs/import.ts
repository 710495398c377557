/**
 * What the parser and the help know of `compactor import`: flags, help text, examples. Its run
 * (commands/import.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import type { Command } from '../command.ts';
import { FORMATS } from '../spec-values.ts';

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
    const { runImport } = await import('../commands/import.ts');
    return runImport(args, context);
  },
};
