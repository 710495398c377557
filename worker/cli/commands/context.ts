/** `compactor context`: the request an agent sends next for a session, as JSON. */
import { loadContext } from '../../../producer/context.ts';
import { assertSchema, openDatabase } from '../../../producer/postgres/db.ts';
import { type Command, optionalText, SESSION_OPTION, TENANT_OPTION, text, UsageError } from '../command.ts';
import { jsonLine } from '../format.ts';

/** What `--thinking` takes. */
const THINKING_MODES = ['keep', 'strip'] as const;

/** What `--compaction-block` takes. */
const BLOCK_MODES = ['native', 'text'] as const;

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
    const tenantId = text(args, 'tenant');
    const sessionId = text(args, 'session');
    const thinking = optionalText(args, 'thinking') ?? 'keep';
    if (!(THINKING_MODES as readonly string[]).includes(thinking)) {
      throw new UsageError(`--thinking must be keep or strip, got "${thinking}"`);
    }
    const block = optionalText(args, 'compaction-block') ?? 'native';
    if (!(BLOCK_MODES as readonly string[]).includes(block)) {
      throw new UsageError(`--compaction-block must be native or text, got "${block}"`);
    }
    const database = openDatabase(context.config().databaseUrl, {
      max: 1,
      schema: context.config().databaseSchema,
    });
    try {
      await assertSchema(database);
      const loaded = await loadContext(database.db, {
        tenantId,
        sessionId,
        thinking: thinking as (typeof THINKING_MODES)[number],
        compactionBlock: block as (typeof BLOCK_MODES)[number],
        format: 'any',
      });
      context.stdout.write(`${jsonLine(loaded)}\n`);
      return 0;
    } finally {
      await database.close();
    }
  },
};
