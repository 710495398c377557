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
 *   them, but a gap fails, and so does a tampered or empty signature. The fake hashes the messages
 *   as a rolling state (one step per message), so that a `compaction` block can carry the state
 *   after the messages it summarizes and the kept turns' thinking still verifies after it.
 * - with `thinking.block_binding.prefix_mismatch_behavior: "drop_block"` (beta
 *   `thinking-binding-controls-2026-08-01`), a block whose prefix changed is dropped instead of
 *   failing the request, with every thinking block after it, and each drop is reported as an
 *   `input_transformations` entry `{ type: 'thinking_dropped', reason: 'prefix_binding_mismatch',
 *   path }`.
 * - on-demand compaction (beta `compact-2026-09-04`): a later request carries exactly one `compaction`
 *   block, first in `messages` (an `assistant` message of its own at `messages[0]`, or the first
 *   content block of `messages[0]`), sent exactly as returned; a compaction request may end with an
 *   assistant turn but not with an open tool call, and needs user or assistant content to summarize.
 *   "The checked prefix starts at the most recent compaction block": see {@link signCompaction}.
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
  /** The request asks for a compaction (top-level `compaction`): prefill allowed, open tool call refused. */
  compaction?: boolean;
  /** The request carries the `compact-2026-09-04` beta: a `compaction` block is a known block type. */
  compactionBeta?: boolean;
  /**
   * Take a signature that is not in the fake's format (one Anthropic made, in a real transcript)
   * as valid, since the fake cannot check it; a signature in the fake's format is still checked.
   */
  acceptForeignSignatures?: boolean;
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
  /**
   * @param code the API's `error.details.error_code`, when it gives one (`compaction_block_misplaced`, ...).
   */
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
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
  const block = checkCompactionBlock(messages, key, options.compactionBeta ?? false);
  if (options.compaction) checkSomethingToSummarize(messages);
  if (options.strict) checkStrict(messages);
  const last = messages[messages.length - 1];
  // A compaction request "summarizes every message in the request once, generates no reply".
  if (last?.role === 'assistant' && !options.compaction) {
    throw new ConversationError(
      'This model does not support assistant message prefill. The conversation must end with a user message.',
    );
  }
  const turns = combineTurns(messages);
  checkToolResults(turns);
  if (options.compaction) checkNoOpenToolCall(turns);
  const thinking = conversation.thinking?.type;
  if (thinking === 'enabled' || (options.strict && thinking !== undefined && thinking !== 'disabled')) {
    checkFinalTurnThinking(turns);
  }
  return checkSignatures(
    conversation,
    key,
    block,
    options.dropMismatchedThinking ?? false,
    options.acceptForeignSignatures ?? false,
  );
}

/** Where the block sits: alone in `messages[0]` (`own`), first of several blocks there (`lead`), or none. */
function compactionLead(messages: Turn[]): 'own' | 'lead' | null {
  const first = messages[0];
  if (!first || typeof first.content === 'string' || first.content[0]?.type !== 'compaction') return null;
  return first.content.length === 1 ? 'own' : 'lead';
}

/** The fields a `compaction` block may carry when sent back. */
const COMPACTION_FIELDS = new Set(['type', 'content', 'signature', 'cache_control']);

/**
 * The `compaction` block of a request, if any: known (the beta), alone, first, and exactly as returned.
 * @returns what its signature carries, or null when the request has no block.
 */
function checkCompactionBlock(messages: Turn[], key: string, beta: boolean): CompactionSigned | null {
  const found: Array<{ block: Block; at: string; first: boolean }> = [];
  messages.forEach((message, i) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((block, j) => {
      if (block?.type === 'compaction')
        found.push({ block, at: `messages.${i}.content.${j}`, first: i + j === 0 });
    });
  });
  const [lead] = found;
  if (!lead) return null;
  if (!beta) {
    throw new ConversationError(
      `${lead.at}.type: 'compaction' is not one of the expected content block types`,
    );
  }
  if (found.length > 1) {
    throw new ConversationError(
      `messages: a request carries exactly one \`compaction\` block; found ${found.length} ` +
        `(${found.map((f) => f.at).join(', ')}). Send only the newest block, first in messages.`,
    );
  }
  if (!lead.first) {
    throw new ConversationError(
      `${lead.at}: the \`compaction\` block must come first: as an assistant message of its own at ` +
        'messages.0, or as the first content block of messages.0. Remove the summarized messages in front of it.',
      'compaction_block_misplaced',
    );
  }
  for (const field of Object.keys(lead.block)) {
    if (!COMPACTION_FIELDS.has(field)) {
      throw new ConversationError(`${lead.at}.${field}: Extra inputs are not permitted`);
    }
  }
  const { content, signature } = lead.block;
  if (typeof content !== 'string' || content.trim() === '') {
    throw new ConversationError(`${lead.at}.content: Input should be a non-empty string`);
  }
  const signed = typeof signature === 'string' ? decodeCompaction(signature, key) : null;
  if (signed === null) {
    throw new ConversationError(
      `${lead.at}.signature: Invalid \`signature\` in \`compaction\` block. Send the block exactly as it was returned.`,
      'compaction_signature_invalid',
    );
  }
  if (signed.content !== sha256(content)) {
    throw new ConversationError(
      `${lead.at}.content: the \`compaction\` block's content does not match its signature. ` +
        'Send the block exactly as it was returned.',
      'compaction_content_mismatch',
    );
  }
  return signed;
}

/** A compaction request needs user or assistant content besides a previous block. */
function checkSomethingToSummarize(messages: Turn[]): void {
  const lead = compactionLead(messages);
  const content = messages.some((message, i) => {
    if (message.role === 'system') return false;
    if (typeof message.content === 'string') return message.content.trim() !== '';
    return message.content.some((block, j) => {
      if (i === 0 && j === 0 && lead) return false;
      if (THINKING.has(block.type)) return false;
      if (block.type === 'text') return typeof block.text === 'string' && block.text.trim() !== '';
      return true;
    });
  });
  if (!content) {
    throw new ConversationError(
      'messages: there is nothing to summarize: the request holds no user or assistant content',
      'compaction_nothing_to_summarize',
    );
  }
}

/** A compaction request whose last assistant turn "ends in a tool call with no result yet" is refused. */
function checkNoOpenToolCall(turns: CombinedTurn[]): void {
  const last = turns[turns.length - 1];
  if (last?.role !== 'assistant') return;
  const open = last.blocks.filter((b) => b.block.type === 'tool_use');
  if (open.length === 0) return;
  throw new ConversationError(
    `${open[0]?.at}: the last assistant turn ends in a tool call with no result yet ` +
      `(${open.map((b) => String(b.block.id)).join(', ')}). Send its \`tool_result\` first, or compact before that turn.`,
  );
}

/** The strict checks: first turn, alternation, empty content (see the file comment). */
function checkStrict(messages: Turn[]): void {
  const first = messages[0];
  // A `compaction` block comes first, in an assistant message of its own or leading messages[0].
  const lead = compactionLead(messages);
  if (first && first.role !== 'user' && lead === null) {
    throw new ConversationError(
      `messages.0.role: the first message must use the "user" role, got "${first.role}"`,
    );
  }
  messages.forEach((message, i) => {
    const before = messages[i - 1];
    // Two assistant messages in a row are fine right after the block's own message, "because the
    // block still comes first".
    const afterBlock = i === 1 && lead === 'own';
    if (before && before.role === message.role && message.role !== 'system' && !afterBlock) {
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
  const first = assistant.blocks.find((b) => b.block.type !== 'compaction');
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
  /** Hash of the conversation before the block (thinking blocks left out): see {@link prefixAt}. */
  prefix: string;
  /** Hash of the previous thinking block's signature, or null for the first of the chain. */
  previous: string | null;
  mac: string;
}

/**
 * What a `compaction` block's signature carries, MAC'd with the fake's key: enough to continue the
 * rolling prefix of the summarized messages on a later request, and to tell when the kept turns'
 * thinking must fail (the conditions of "Compaction and preserved thinking").
 */
interface CompactionSigned {
  kind: 'compaction';
  /** The rolling state (see {@link roll}) after the summarized messages. */
  state: string;
  /** Hash of the compaction request's `system` and `tools`. */
  context: string;
  /** Role of the last summarized message. */
  lastRole: string;
  /** Every compaction up to this one ran on a model with preserved thinking. */
  preserved: boolean;
  /** sha256 of the block's `content`. */
  content: string;
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
  const states = rollingStates(conversation, key);
  const prefix = prefixAt(
    contextHash(conversation),
    states[conversation.messages.length] ?? '',
    'assistant',
    blocksBefore,
  );
  const previous = previousSignature === null ? null : sha256(previousSignature);
  const signed: Signed = { prefix, previous, mac: mac(key, prefix, previous, thinking) };
  return Buffer.from(JSON.stringify(signed)).toString('base64');
}

/**
 * The signature of the `compaction` block that summarizes every message of `conversation` (a
 * compaction request; it may begin with the previous block, "compact again"). It carries the rolling
 * state after those messages, so that a later request [block, kept turns...] has the same prefix as
 * [summarized..., kept turns...] had, and the kept turns' thinking still verifies, while:
 * 1. the compaction (and every one before it) ran on a model with preserved thinking
 *    (`preservesThinking`);
 * 2. the first message after the block has a different role from the last summarized message and is
 *    not a `system` message (else the API merges it into the last summarized message);
 * 3. `system` and `tools` are the same on the compaction request and on the later request.
 * When one fails, nothing fails here: the later request's prefix is poisoned, so every thinking block
 * after the block fails as bound to a different conversation (a 400, or the drop with `drop_block`).
 * Thinking produced after the block is bound to it, poisoned or not.
 */
export function signCompaction(
  conversation: Omit<Conversation, 'thinking'>,
  content: string,
  preservesThinking: boolean,
  key: string,
): string {
  const { messages } = conversation;
  const previous = leadingBlock(messages, key);
  const states = rollingStates(conversation, key);
  const summarized = compactionLead(messages) === 'own' ? messages.slice(1) : messages;
  const fields: Omit<CompactionSigned, 'mac'> = {
    kind: 'compaction',
    state: states[messages.length] ?? '',
    context: contextHash(conversation),
    lastRole: summarized[summarized.length - 1]?.role ?? previous?.lastRole ?? 'user',
    preserved: preservesThinking && (previous?.preserved ?? true),
    content: sha256(content),
  };
  return Buffer.from(JSON.stringify({ ...fields, mac: compactionMac(key, fields) })).toString('base64');
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

function checkSignatures(
  conversation: Conversation,
  key: string,
  block: CompactionSigned | null,
  drop: boolean,
  acceptForeign: boolean,
): InputTransformation[] {
  const dropped: InputTransformation[] = [];
  const states = rollingStates(conversation, key, block);
  const context = contextHash(conversation);
  const skip = block ? 1 : 0;
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
      if (signed === null && acceptForeign && typeof signature === 'string' && signature !== '') {
        previousPresent = signature;
        return;
      }
      if (signed === null || !sameMac(signed.mac, mac(key, signed.prefix, signed.previous, text))) {
        throw new ConversationError(`${at}: Invalid \`signature\` in \`${block.type}\` block`);
      }
      const before = blocks.slice(i === 0 ? skip : 0, j);
      const bound = signed.prefix === prefixAt(context, states[i] ?? '', message.role, before);
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

/** The rolling state of a conversation with no compaction block before its first message. */
const INITIAL_STATE = sha256('conversation');

/** The rolling state after one more message: its role and its content, thinking left out, as values. */
function roll(state: string, role: string, content: Block[]): string {
  return sha256(`${state}\n${canonical({ role, content: withoutThinking(content) })}`);
}

/**
 * `states[i]`: the rolling state before `messages[i]` (`states[length]`: after the last message).
 * It starts at the leading `compaction` block's carried state (poisoned when the kept turns'
 * thinking cannot survive, see {@link signCompaction}), or at the initial state; the block's own
 * message does not roll, and the blocks of `messages[0]` after the block roll as a message.
 * @param block the leading block, already verified; looked up (and verified) when undefined.
 */
function rollingStates(
  conversation: Pick<Conversation, 'system' | 'tools' | 'messages'>,
  key: string,
  block: CompactionSigned | null = leadingBlock(conversation.messages, key),
): string[] {
  const { messages } = conversation;
  let start = INITIAL_STATE;
  if (block) {
    const rest = blocksOf(messages[0]?.content ?? []).slice(1);
    const first = rest.length > 0 ? messages[0] : messages[1];
    const merged = first !== undefined && (first.role === block.lastRole || first.role === 'system');
    const kept = block.preserved && block.context === contextHash(conversation) && !merged;
    start = kept ? block.state : sha256(`poisoned\n${block.state}`);
  }
  const states = [start];
  messages.forEach((message, i) => {
    const state = states[i] ?? start;
    let blocks = blocksOf(message.content);
    if (i === 0 && block) {
      blocks = blocks.slice(1);
      if (blocks.length === 0) {
        states.push(state);
        return;
      }
    }
    states.push(roll(state, message.role, blocks));
  });
  return states;
}

/** The verified `compaction` block leading `messages[0]`, or null (none, or one that does not verify). */
function leadingBlock(messages: Turn[], key: string): CompactionSigned | null {
  if (compactionLead(messages) === null) return null;
  const block = blocksOf(messages[0]?.content ?? [])[0];
  const signed = typeof block?.signature === 'string' ? decodeCompaction(block.signature, key) : null;
  return signed && typeof block?.content === 'string' && signed.content === sha256(block.content)
    ? signed
    : null;
}

/** `system` and `tools`, as values. */
function contextHash(conversation: Pick<Conversation, 'system' | 'tools'>): string {
  return sha256(
    canonical({
      system:
        typeof conversation.system === 'string'
          ? [{ type: 'text', text: conversation.system }]
          : (conversation.system ?? null),
      tools: conversation.tools ?? null,
    }),
  );
}

/**
 * The prefix a thinking block is bound to: `system` and `tools` (`context`), the rolling state of
 * the messages before its message, that message's role and the blocks before it there (thinking
 * left out: the chain covers it).
 */
function prefixAt(context: string, state: string, role: string, blocksBefore: Block[]): string {
  return sha256(canonical({ context, state, role, blocksBefore: withoutThinking(blocksBefore) }));
}

function withoutThinking(content: string | Block[]): Block[] {
  return blocksOf(content).filter((b) => !THINKING.has(b.type));
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

function compactionMac(key: string, fields: Omit<CompactionSigned, 'mac'>): string {
  return createHmac('sha256', key)
    .update(`compaction\n${canonical(fields)}`)
    .digest('hex');
}

/** A `compaction` signature's fields, or null when it is not one or its MAC does not verify. */
function decodeCompaction(signature: string, key: string): CompactionSigned | null {
  try {
    const parsed = JSON.parse(Buffer.from(signature, 'base64').toString('utf8')) as Partial<CompactionSigned>;
    const { kind, state, context, lastRole, preserved, content, mac: given } = parsed;
    if (kind !== 'compaction' || typeof given !== 'string' || typeof preserved !== 'boolean') return null;
    if (typeof state !== 'string' || typeof context !== 'string') return null;
    if (typeof lastRole !== 'string' || typeof content !== 'string') return null;
    const fields = { kind, state, context, lastRole, preserved, content } as const;
    return sameMac(given, compactionMac(key, fields)) ? { ...fields, mac: given } : null;
  } catch {
    return null;
  }
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
