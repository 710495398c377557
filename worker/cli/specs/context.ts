/**
 * What the parser and the help know of `compactor context`: flags, help text, examples. Its run
 * (commands/context.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { type Command, SESSION_OPTION, TENANT_OPTION } from '../command.ts';

export const contextCommand: Command = {
  name: 'context',
  summary: "print a session's next request (system, messages, tokens, notices) as JSON",
  options: {
    tenant: TENANT_OPTION,
    session: SESSION_OPTION,
    thinking: {
      type: 'string',
      value: 'keep|strip',
      description: 'keep thinking blocks where their signature still holds (default), or strip them all',
    },
    'compaction-block': {
      type: 'string',
      value: 'native|text',
      description:
        "send an anthropic-compaction summary as Anthropic's block (default; send the betas) or as the readable checkpoint",
    },
  },
  notes: [
    'One JSON object: system and messages to pass to the Messages API as they are, the estimated',
    'tokens, the live session read (a newSession compaction continues a session in a child) and',
    'notices to act on, such as an open tool loop whose thinking needs "drop_block" to be sent,',
    'and betas: the anthropic-beta values the request needs (compact-2026-09-04 with a compaction block).',
    'A session of format openai-chat prints { format: "openai-chat", messages, tokens, sessionId, version,',
    'notices }: messages to pass to Chat Completions (client.chat.completions.create) as they are;',
    'one of format openai-responses prints { format: "openai-responses", input, tokens, sessionId,',
    'version, notices }: input to pass to client.responses.create({ model, input, store: false });',
    'one of format ai-sdk prints { format: "ai-sdk", prompt, tokens, sessionId, version, notices }: the',
    "provider-level prompt, its file data encoded as JSON (decode it with the package's ai-sdk encoding).",
  ],
  examples: [
    'compactor context --tenant acme --session run-42',
    'compactor context --tenant acme --session run-42 --thinking strip | jq .messages',
  ],
  async run(args, context) {
    const { runContext } = await import('../commands/context.ts');
    return runContext(args, context);
  },
};
