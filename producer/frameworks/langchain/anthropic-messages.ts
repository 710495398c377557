/**
 * LangChain messages ↔ Anthropic `MessageParam`s, the `anthropic` session format. Pure: no I/O.
 *
 * An `AIMessage` from `ChatAnthropic` holds the Messages API's own content blocks (thinking with its
 * signature, redacted thinking, text with citations, `tool_use`, server tool blocks); they are
 * stored exactly as the model returned them, so a signed thinking block goes back byte for byte.
 * Stored, one message each, the way `@langchain/anthropic` puts them on the wire
 * (`_convertMessagesToAnthropicPayload`):
 * - `HumanMessage` → `{ role: 'user', content }`, a string or the blocks as they are;
 * - `SystemMessage` → `{ role: 'system', content }`;
 * - `AIMessage` → `{ role: 'assistant', content }`: a string (with calls: a text block, if any
 *   text, then one `tool_use` per call), or its blocks as they are, with two traces of streaming
 *   undone as `ChatAnthropic` undoes them before sending: the `index` key (the block's place in the
 *   stream) is dropped, and a `tool_use` whose `input` is still the streamed JSON text gets the
 *   parsed `args` of its call; a call of `tool_calls` that no `tool_use` block holds is appended as
 *   one;
 * - `ToolMessage` → `{ role: 'user', content: [{ type: 'tool_result', tool_use_id, content,
 *   is_error? }] }`, `is_error: true` when its `status` is `error`; adjacent results become one
 *   user turn in the context (compactor merges adjacent turns of one role).
 *
 * An `image_url` block (what `@langchain/mcp-adapters` makes of an MCP image) in a user message or a
 * tool result is stored as the Anthropic `image` block `ChatAnthropic` would send for it (a data
 * URL as base64, an http(s) URL as a URL source). Refused, naming the message and the block, nothing
 * stored: LangChain's own standard blocks (`reasoning`, `tool_call`, `{ type: 'image', url }`,
 * `file`, …: the v1 output format, which `ChatAnthropic` rewrites before sending), a tool call
 * without an id, `invalid_tool_calls`, and message types the format has no role for.
 *
 * Back ({@link fromAnthropicContext}): a user turn is a `HumanMessage` holding its blocks as they
 * are (tool results included: `ChatAnthropic` sends a `tool_result` block of a human message as it
 * is, and a `ToolMessage` could not say `is_error`), an assistant turn an `AIMessage` with its
 * blocks and `tool_calls` read from its `tool_use` blocks, the context's `system` a `SystemMessage`.
 * `toAnthropicMessage(fromAnthropicMessage(m))` is `m`, byte for byte, for every message this
 * module stores.
 */
import type { MessageParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { type Block, contentOf, isLangChainBlock, unstorable } from './blocks.ts';

const FORMAT = 'anthropic';
const STANDARD =
  "LangChain's own block, which ChatAnthropic rewrites before sending: write the Messages API's block instead";

/**
 * The `MessageParam` storing `message` (see the file comment for each type).
 * @param where the message's place, for errors (`messages[3] (ai)`).
 * @throws {InvalidInputError} naming `where` and the field, for what the format cannot hold.
 */
export function toAnthropicMessage(message: BaseMessage, where: string): MessageParam {
  if (HumanMessage.isInstance(message)) {
    const content = contentOf(message, where);
    return {
      role: 'user',
      content: typeof content === 'string' ? content : (inputBlocks(content, where) as never),
    };
  }
  if (SystemMessage.isInstance(message)) {
    const content = contentOf(message, where);
    const system = typeof content === 'string' ? content : inputBlocks(content, where);
    return { role: 'system', content: system } as unknown as MessageParam;
  }
  if (AIMessage.isInstance(message)) return assistantOf(message, where);
  if (ToolMessage.isInstance(message)) {
    if (!message.tool_call_id)
      throw new InvalidInputError(`${where}.tool_call_id: required (the call it answers)`);
    const content = contentOf(message, where);
    return {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: message.tool_call_id,
          content: typeof content === 'string' ? content : (inputBlocks(content, where) as never),
          ...(message.status === 'error' ? { is_error: true } : {}),
        },
      ],
    };
  }
  throw new InvalidInputError(
    `${where}: the ${FORMAT} session format has no role for a ${JSON.stringify(message.getType())} message (it stores human, ai, system and tool messages); nothing was stored`,
  );
}

/** An `AIMessage` as an assistant turn. */
function assistantOf(message: AIMessage, where: string): MessageParam {
  const invalid = message.invalid_tool_calls ?? [];
  if (invalid.length > 0) {
    throw new InvalidInputError(
      `${where}.invalid_tool_calls: ${invalid.length} tool call(s) whose input is not JSON (${invalid.map((c) => c.name ?? '?').join(', ')}); the API takes no such call back, so the reply is not stored`,
    );
  }
  const calls = (message.tool_calls ?? []).map((call, i) => {
    if (!call.id) throw new InvalidInputError(`${where}.tool_calls[${i}].id: required (its result names it)`);
    return { id: call.id, name: call.name, args: call.args };
  });
  const toolUse = (call: (typeof calls)[number]): Block => ({
    type: 'tool_use',
    id: call.id,
    name: call.name,
    input: call.args,
  });
  const content = contentOf(message, where);
  if (typeof content === 'string') {
    if (calls.length === 0) return { role: 'assistant', content };
    const text: Block[] = content === '' ? [] : [{ type: 'text', text: content }];
    return { role: 'assistant', content: [...text, ...calls.map(toolUse)] as never };
  }
  const blocks = content.map((raw, i) => {
    const at = `${where}.content[${i}]`;
    if (isLangChainBlock(raw) || raw.type === 'image_url') throw unstorable(at, raw, FORMAT, STANDARD);
    const { index: _streamed, ...block } = raw;
    if ((block.type === 'tool_use' || block.type === 'server_tool_use') && typeof block.input === 'string') {
      block.input = streamedInput(block, calls, at);
    }
    return block as Block;
  });
  const held = new Set(
    blocks.flatMap((b) => (b.type === 'tool_use' || b.type === 'server_tool_use' ? [String(b.id)] : [])),
  );
  const all = [...blocks, ...calls.filter((c) => !held.has(c.id)).map(toolUse)];
  return { role: 'assistant', content: all.length > 0 ? (all as never) : '' };
}

/** A streamed `tool_use`'s input: its call's `args`, else its JSON text parsed (`''` is `{}`). */
function streamedInput(block: Block, calls: Array<{ id: string; args: unknown }>, at: string): unknown {
  const call = calls.find((c) => c.id === block.id);
  if (call) return call.args;
  const text = String(block.input);
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidInputError(
      `${at}.input: streamed JSON text that does not parse, and no tool call holds it`,
    );
  }
}

/** A user or tool result's blocks, as they are but for `image_url`, written as an `image` block. */
function inputBlocks(content: Block[], where: string): Block[] {
  return content.map((block, i) => {
    const at = `${where}.content[${i}]`;
    if (block.type === 'image_url') return imageOf(block, at);
    if (isLangChainBlock(block)) throw unstorable(at, block, FORMAT, STANDARD);
    return block;
  });
}

/** The Anthropic `image` block of an `image_url` block, as `ChatAnthropic` writes it. */
function imageOf(block: Block, at: string): Block {
  const ref = block.image_url as unknown;
  const url = typeof ref === 'string' ? ref : (ref as { url?: unknown } | null)?.url;
  if (typeof url !== 'string') throw new InvalidInputError(`${at}.image_url: expected a URL`);
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  const cache = 'cache_control' in block ? { cache_control: block.cache_control } : {};
  if (data) {
    return { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] }, ...cache };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url }, ...cache };
  throw new InvalidInputError(`${at}.image_url.url: expected a base64 data URL or an http(s) URL`);
}

/**
 * The LangChain messages of a loaded `anthropic` context: `system` (when there is any) a leading
 * `SystemMessage` of its text blocks, then each turn by {@link fromAnthropicMessage}.
 */
export function fromAnthropicContext(
  system: TextBlockParam[] | undefined,
  messages: readonly MessageParam[],
): BaseMessage[] {
  const lead = system && system.length > 0 ? [new SystemMessage({ content: system as never })] : [];
  return [...lead, ...messages.map((m) => fromAnthropicMessage(m))];
}

/**
 * One turn as a LangChain message: `user` a `HumanMessage`, `assistant` an `AIMessage` whose
 * `tool_calls` are its `tool_use` blocks (`input` as `args`), `system` a `SystemMessage`; the
 * content as it is.
 */
export function fromAnthropicMessage(message: MessageParam): BaseMessage {
  const content = message.content as string | Block[];
  const role = (message as { role: string }).role;
  if (role === 'system') return new SystemMessage({ content });
  if (role === 'user') return new HumanMessage({ content });
  const toolCalls =
    typeof content === 'string'
      ? []
      : content.flatMap((b) =>
          b.type === 'tool_use'
            ? [
                {
                  id: String(b.id),
                  name: String(b.name),
                  args: b.input as Record<string, unknown>,
                  type: 'tool_call' as const,
                },
              ]
            : [],
        );
  return new AIMessage({ content, tool_calls: toolCalls });
}
