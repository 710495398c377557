/**
 * compactor's compaction written as Claude Code writes its own (`/compact`, auto-compact): a
 * `compact_boundary` system line whose `parentUuid` is null (Claude Code resumes from the newest
 * boundary on, and keeps the lines before it in the file), then the compacted history, one line per
 * message, each the child of the one before. Claude Code resumes a session from the last line's
 * chain, so after these lines its next request is compactor's context: the summary first, then the
 * messages the compaction kept. Pure.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';

/** What {@link compactionChain} writes. */
export interface ChainInput {
  /** The context's messages (`loadContext(...).messages`), as they are. */
  messages: readonly MessageParam[];
  /** The SDK's session id (`sessionId` of every line). */
  sessionId: string;
  /** The compaction version the context was rendered at (in each assistant line's `message.id`). */
  version: number;
  /** The uuid of the transcript's newest line, the boundary's `logicalParentUuid`; null when none. */
  leafUuid: string | null;
  /** The model of the session's newest reply, for the assistant lines; absent when unknown. */
  model?: string | undefined;
  /** Fields every line of the transcript repeats (`cwd`, `version`, `gitBranch`, …), copied onto each. */
  common?: Record<string, unknown>;
  now: Date;
  /** A new line uuid per call (`crypto.randomUUID`). */
  newUuid: () => string;
}

/** The `content` of the boundary line, as Claude Code words its own. */
export const BOUNDARY_TEXT = 'Conversation compacted';

/**
 * The lines of one compaction: the boundary, then a `user` or `assistant` line per message.
 * @throws {Error} when the context holds a `system` message: a Claude Code transcript has no such
 *   line, and the store never appends one, so it would mean the session was written by something else.
 */
export function compactionChain(input: ChainInput): Array<Record<string, unknown>> {
  const timestamp = input.now.toISOString();
  const base = { ...input.common, isSidechain: false, sessionId: input.sessionId, timestamp };
  const boundary = {
    ...base,
    parentUuid: null,
    logicalParentUuid: input.leafUuid,
    type: 'system',
    subtype: 'compact_boundary',
    content: BOUNDARY_TEXT,
    isMeta: false,
    level: 'info',
    uuid: input.newUuid(),
    compactMetadata: { trigger: 'auto', compactor: { version: input.version } },
  };
  const lines: Array<Record<string, unknown>> = [boundary];
  let parent = boundary.uuid;
  input.messages.forEach((m, i) => {
    const role = m.role as string;
    if (role !== 'user' && role !== 'assistant') {
      throw new Error(
        `context.messages[${i}]: a "${role}" message has no Claude Code transcript line; the session holds messages the store did not write`,
      );
    }
    const uuid = input.newUuid();
    const message =
      role === 'user'
        ? { role, content: m.content }
        : {
            id: `msg_compactor_${input.version}_${i}`,
            type: 'message',
            role,
            ...(input.model ? { model: input.model } : {}),
            content: m.content,
            stop_reason: callsTools(m) ? 'tool_use' : 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 0, output_tokens: 0 },
          };
    lines.push({ ...base, parentUuid: parent, type: role, message, uuid });
    parent = uuid;
  });
  return lines;
}

/** Whether an assistant message calls a tool (its line then says `stop_reason: "tool_use"`). */
function callsTools(message: MessageParam): boolean {
  return Array.isArray(message.content) && message.content.some((b) => b.type === 'tool_use');
}
