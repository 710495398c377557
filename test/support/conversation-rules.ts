/**
 * The Messages API's rules for a conversation, as the fake Messages API enforces them, and the
 * thinking-block signatures it hands out and checks. Pure (node:crypto only).
 *
 * Read from Anthropic's documentation as of 2026-09 (API reference `messages/create`, "Working
 * with messages", "Handle tool calls", "Extended thinking", "Preserved thinking"):
 * - consecutive `user` or `assistant` turns are combined into one turn (not an error);
 * - a `system` message cannot be the first entry of `messages`; a final `assistant` message
 *   (prefill) is refused by current models;
 * - every `tool_use` of an assistant turn is answered by a `tool_result` in the user turn right
 *   after it, the `tool_result` blocks come first in that turn, and a `tool_result` answers a
 *   `tool_use` of the turn just before it;
 * - with manual extended thinking (`thinking.type: "enabled"`), the final assistant turn of a tool
 *   loop begins with a `thinking` or `redacted_thinking` block;
 * - a thinking block's signature is bound to the conversation before it (the `system` prompt, the
 *   `tools`, every message before the block; values, not JSON formatting or key order), and the
 *   thinking blocks form a chain: blocks may be removed from the start, from the end or all of
 *   them, but a gap fails, and so does a tampered or empty signature.
 * - with `thinking.block_binding.prefix_mismatch_behavior: "drop_block"` (beta
 *   `thinking-binding-controls-2026-08-01`), a block whose prefix changed is dropped instead of
 *   failing the request, with every thinking block after it, and each drop is reported as an
 *   `input_transformations` entry `{ type: 'thinking_dropped', reason: 'prefix_binding_mismatch',
 *   path }`.
 * The docs do not require the first message to be a `user` turn, nor document a rule on empty
 * content, so neither is enforced by default. The strict checks ({@link CheckOptions.strict}) add
 * what users of the API expect it to refuse: a first message that is not a `user` turn, two
 * adjacent `user` (or `assistant`) entries, empty content or an empty text block, and, with any
 * thinking on, an assistant tool-use turn answered last that does not begin with thinking.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** A content block as sent: `type` plus whatever fields its type has. */
export interface Block {
  type: string;
  [field: string]: unknown;
}

/** One entry of `messages`. */
export interface Turn {
  role: string;
  content: string | Block[];
}

/** The parts of a Messages API request the rules read. */
export interface Conversation {
  system?: unknown;
  tools?: unknown;
  messages: Turn[];
  thinking?:
    | { type?: string; block_binding?: { prefix_mismatch_behavior?: string | null } | null }
    | undefined;
}

/** How strictly to check, and what to do with a thinking block whose prefix changed. */
export interface CheckOptions {
  /** Also refuse what the docs leave open but users expect refused (see the file comment). */
  strict?: boolean;
  /** Drop a block whose prefix changed, and every thinking block after it, instead of failing. */
  dropMismatchedThinking?: boolean;
}

/** A change made to the request before the model saw it (the API's `input_transformations`). */
export interface InputTransformation {
  type: 'thinking_dropped';
  reason: 'prefix_binding_mismatch';
  /** `messages.{i}.content.{j}` in the request as sent. */
  path: string;
}

/** A rule the conversation breaks, with the API's error path (`messages.3.content.0`). */
export class ConversationError extends Error {
  override name = 'ConversationError';
}

const THINKING = new Set(['thinking', 'redacted_thinking']);

/** `content` as a list of blocks (a string is one text block). */
export function blocksOf(content: string | Block[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/**
 * Checks the conversation's structure and its thinking signatures.
 * @param key the fake's signing key (see {@link signThinking}).
 * @returns the thinking blocks dropped (only with `dropMismatchedThinking`).
 * @throws {ConversationError} naming the first rule broken, in the API's words where the docs give them.
 */
export function checkConversation(
  conversation: Conversation,
  key: string,
  options: CheckOptions = {},
): InputTransformation[] {
  const { messages } = conversation;
  if (messages[0]?.role === 'system') {
    throw new ConversationError('messages.0.role: a system message cannot be the first entry in messages');
  }
  if (options.strict) checkStrict(messages);
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant') {
    throw new ConversationError(
      'This model does not support assistant message prefill. The conversation must end with a user message.',
    );
  }
  const turns = combineTurns(messages);
  checkToolResults(turns);
  const thinking = conversation.thinking?.type;
  if (thinking === 'enabled' || (options.strict && thinking !== undefined && thinking !== 'disabled')) {
    checkFinalTurnThinking(turns);
  }
  return checkSignatures(conversation, key, options.dropMismatchedThinking ?? false);
}

/** The strict checks: first turn, alternation, empty content (see the file comment). */
function checkStrict(messages: Turn[]): void {
  const first = messages[0];
  if (first && first.role !== 'user') {
    throw new ConversationError(
      `messages.0.role: the first message must use the "user" role, got "${first.role}"`,
    );
  }
  messages.forEach((message, i) => {
    const before = messages[i - 1];
    if (before && before.role === message.role && message.role !== 'system') {
      throw new ConversationError(
        `messages.${i}.role: roles must alternate between "user" and "assistant"; messages ${i - 1} and ${i} ` +
          `are both "${message.role}"`,
      );
    }
    const { content } = message;
    if (typeof content === 'string' ? content.trim() === '' : content.length === 0) {
      throw new ConversationError(`messages.${i}: all messages must have non-empty content`);
    }
    if (typeof content === 'string') return;
    content.forEach((block, j) => {
      if (block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === '')) {
        throw new ConversationError(
          `messages.${i}.content.${j}.text: text content blocks must contain non-whitespace text`,
        );
      }
    });
  });
}

/** A turn after combining consecutive same-role entries, with where each block came from. */
interface CombinedTurn {
  role: string;
  blocks: Array<{ block: Block; at: string }>;
}

/** Consecutive `user` or `assistant` entries combined into one turn, as the API does. */
function combineTurns(messages: Turn[]): CombinedTurn[] {
  const turns: CombinedTurn[] = [];
  messages.forEach((message, i) => {
    const blocks = blocksOf(message.content).map((block, j) => ({ block, at: `messages.${i}.content.${j}` }));
    const previous = turns[turns.length - 1];
    if (previous && previous.role === message.role && message.role !== 'system')
      previous.blocks.push(...blocks);
    else turns.push({ role: message.role, blocks });
  });
  return turns;
}

function checkToolResults(turns: CombinedTurn[]): void {
  turns.forEach((turn, t) => {
    const before = turns[t - 1];
    const asked = new Set(
      before?.role === 'assistant'
        ? before.blocks.filter((b) => b.block.type === 'tool_use').map((b) => String(b.block.id))
        : [],
    );
    if (turn.role === 'assistant' && turn.blocks.some((b) => b.block.type === 'tool_use')) {
      const next = turns[t + 1];
      const answered = new Set(
        next?.role === 'user'
          ? next.blocks.filter((b) => b.block.type === 'tool_result').map((b) => String(b.block.tool_use_id))
          : [],
      );
      const missing = turn.blocks
        .filter((b) => b.block.type === 'tool_use' && !answered.has(String(b.block.id)))
        .map((b) => String(b.block.id));
      // The newest assistant turn of a request cannot ask anything: the request must end with a user turn.
      if (missing.length > 0 && next !== undefined) {
        throw new ConversationError(
          `messages: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        );
      }
    }
    let seenOther = false;
    for (const { block, at } of turn.blocks) {
      if (block.type !== 'tool_result') {
        seenOther = true;
        continue;
      }
      if (turn.role !== 'user')
        throw new ConversationError(`${at}: tool_result blocks belong in a user turn`);
      if (seenOther) {
        throw new ConversationError(
          `${at}: tool_result blocks must come first in the content array; any text must come after them`,
        );
      }
      if (!asked.has(String(block.tool_use_id))) {
        throw new ConversationError(
          `${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
        );
      }
    }
  });
}

/**
 * Manual extended thinking: the last assistant turn, when the request answers its tool calls, must
 * begin with a thinking block.
 */
function checkFinalTurnThinking(turns: CombinedTurn[]): void {
  const last = turns[turns.length - 1];
  const assistant = turns[turns.length - 2];
  if (last?.role !== 'user' || assistant?.role !== 'assistant') return;
  if (!last.blocks.some((b) => b.block.type === 'tool_result')) return;
  const first = assistant.blocks[0];
  if (first && !THINKING.has(first.block.type)) {
    throw new ConversationError(
      `${first.at}: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.block.type}\`. When ` +
        '`thinking` is enabled, a final `assistant` message must start with a thinking block (preceding the ' +
        'lastmost set of `tool_use` and `tool_result` blocks).',
    );
  }
}

/** What a signature carries: the prefix it is bound to, the block before it in the chain, a MAC. */
interface Signed {
  /** Hash of the conversation before the block (thinking blocks left out). */
  prefix: string;
  /** Hash of the previous thinking block's signature, or null for the first of the chain. */
  previous: string | null;
  mac: string;
}

/**
 * The signature of a thinking block the fake emits at the end of `conversation` (after its last
 * message, and after `blocksBefore` of the reply it is writing).
 * @param previousSignature the signature of the thinking block before it in the conversation, if any.
 */
export function signThinking(
  conversation: Omit<Conversation, 'thinking'>,
  blocksBefore: Block[],
  thinking: string,
  previousSignature: string | null,
  key: string,
): string {
  const prefix = prefixHash(conversation, conversation.messages.length, blocksBefore);
  const previous = previousSignature === null ? null : sha256(previousSignature);
  const signed: Signed = { prefix, previous, mac: mac(key, prefix, previous, thinking) };
  return Buffer.from(JSON.stringify(signed)).toString('base64');
}

/** The last thinking signature in the conversation (the chain's newest link), or null. */
export function lastSignature(messages: Turn[]): string | null {
  let last: string | null = null;
  for (const message of messages) {
    for (const block of blocksOf(message.content)) {
      if (THINKING.has(block.type) && typeof block.signature === 'string') last = block.signature;
      if (block.type === 'redacted_thinking' && typeof block.data === 'string') last = block.data;
    }
  }
  return last;
}

function checkSignatures(conversation: Conversation, key: string, drop: boolean): InputTransformation[] {
  const dropped: InputTransformation[] = [];
  let previousPresent: string | null = null;
  conversation.messages.forEach((message, i) => {
    const blocks = blocksOf(message.content);
    blocks.forEach((block, j) => {
      if (!THINKING.has(block.type)) return;
      const at = `messages.${i}.content.${j}`;
      // Once a block is dropped, every thinking block after it goes too (the chain has a gap).
      if (dropped.length > 0) {
        dropped.push({ type: 'thinking_dropped', reason: 'prefix_binding_mismatch', path: at });
        return;
      }
      const signature = block.type === 'thinking' ? block.signature : block.data;
      const signed = typeof signature === 'string' && signature !== '' ? decode(signature) : null;
      const text = block.type === 'thinking' ? String(block.thinking ?? '') : '';
      if (signed === null || !sameMac(signed.mac, mac(key, signed.prefix, signed.previous, text))) {
        throw new ConversationError(`${at}: Invalid \`signature\` in \`${block.type}\` block`);
      }
      const bound = signed.prefix === prefixHash(conversation, i, blocks.slice(0, j));
      // A gap: an earlier block of the chain is present, but not the one this block follows.
      const chained = previousPresent === null || signed.previous === sha256(previousPresent);
      if ((!bound || !chained) && drop) {
        dropped.push({ type: 'thinking_dropped', reason: 'prefix_binding_mismatch', path: at });
        return;
      }
      if (!bound || !chained) {
        throw new ConversationError(
          `${at}: Invalid \`signature\` in \`${block.type}\` block. The block is bound to a different conversation. ` +
            'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".',
        );
      }
      previousPresent = signature as string;
    });
  });
  return dropped;
}

/**
 * The conversation before a block: `system`, `tools`, the first `messageCount` messages and
 * `blocksBefore` of the next, with thinking blocks left out (the chain covers them) and as values
 * (key order and formatting do not count).
 */
function prefixHash(
  conversation: Pick<Conversation, 'system' | 'tools' | 'messages'>,
  messageCount: number,
  blocksBefore: Block[],
): string {
  const withoutThinking = (content: string | Block[]) =>
    blocksOf(content).filter((b) => !THINKING.has(b.type));
  const messages = conversation.messages
    .slice(0, messageCount)
    .map((m) => ({ role: m.role, content: withoutThinking(m.content) }));
  return sha256(
    canonical({
      system:
        typeof conversation.system === 'string'
          ? [{ type: 'text', text: conversation.system }]
          : (conversation.system ?? null),
      tools: conversation.tools ?? null,
      messages,
      blocksBefore: withoutThinking(blocksBefore),
    }),
  );
}

/** JSON with object keys sorted and `cache_control` markers left out: values only. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([k, v]) => k !== 'cache_control' && v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function mac(key: string, prefix: string, previous: string | null, thinking: string): string {
  return createHmac('sha256', key)
    .update(`${prefix}\n${previous ?? '-'}\n${thinking}`)
    .digest('hex');
}

function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function decode(signature: string): Signed | null {
  try {
    const parsed = JSON.parse(Buffer.from(signature, 'base64').toString('utf8')) as Partial<Signed>;
    if (typeof parsed.prefix !== 'string' || typeof parsed.mac !== 'string') return null;
    if (parsed.previous !== null && typeof parsed.previous !== 'string') return null;
    return { prefix: parsed.prefix, previous: parsed.previous, mac: parsed.mac };
  } catch {
    return null;
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
