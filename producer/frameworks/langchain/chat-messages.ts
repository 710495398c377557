/**
 * LangChain messages ↔ Chat Completions messages, the `openai-chat` session format. Pure: no I/O.
 *
 * Stored, one message each (the fields the Chat Completions API reads; what `ChatOpenAI` puts on the
 * wire for them, in `@langchain/openai`'s `convertMessagesToCompletionsMessageParams`):
 * - `HumanMessage` → `{ role: 'user', content, name? }`, content a string or Chat Completions
 *   parts (`text`, `image_url`, `input_audio`, `file`) as they are;
 * - `SystemMessage` → `{ role: 'system', content, name? }` (`developer` when its
 *   `additional_kwargs.__openai_role__` says so, as `@langchain/openai` marks it), text only;
 * - `AIMessage` → `{ role: 'assistant', content, name?, tool_calls? }`: its `text` and `refusal`
 *   parts, and each of `tool_calls` as `{ id, type: 'function', function: { name, arguments } }`
 *   with `arguments` the JSON text of `args` (`JSON.stringify`, as `ChatOpenAI` sends it). A content
 *   with no part left and calls is `null`, the API's own form;
 * - `ToolMessage` → `{ role: 'tool', tool_call_id, content }`, text only (the API's tool message).
 *
 * Refused, naming the message and the block, nothing stored: what Chat Completions cannot carry
 * back to the model (a `thinking` or `reasoning` block, an Anthropic `tool_use` that is not one of
 * the message's `tool_calls`, an image in a tool message, LangChain's own standard blocks such as
 * `{ type: 'image', url }`, which `ChatOpenAI` rewrites before sending), a tool call without an id,
 * `invalid_tool_calls` (arguments that were not JSON: the API takes no such call back), the legacy
 * `function_call` and audio replies, and message types the format has no role for.
 *
 * Not stored: LangChain's bookkeeping, which the API does not read (`id`, `response_metadata`,
 * `usage_metadata`, `additional_kwargs`, a tool message's `status` and `artifact`), and a tool
 * message's `name` (the API's tool message has none). The graph's own state keeps the messages whole.
 *
 * Back ({@link fromChatMessage}): each role to its message class, `arguments` parsed back into
 * `args`, so that `toChatMessage(fromChatMessage(m))` is `m`, byte for byte, for every message this
 * module stores; compactor's own messages (the summary, a user message; the `no result was
 * recorded` answer, a tool message) map the same way.
 */
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import type { ChatCompletionsMessage } from '../../index.ts';
import { type Block, contentOf, isLangChainBlock, unstorable } from './blocks.ts';

const FORMAT = 'openai-chat';
const USER_PARTS = new Set(['text', 'image_url', 'input_audio', 'file']);
const ASSISTANT_PARTS = new Set(['text', 'refusal']);
/** The key `@langchain/openai` sets on a `SystemMessage` sent as a `developer` message. */
const OPENAI_ROLE = '__openai_role__';

/**
 * The Chat Completions message storing `message` (see the file comment for each type).
 * @param where the message's place, for errors (`messages[3] (ai)`).
 * @throws {InvalidInputError} naming `where` and the field, for what the format cannot hold.
 */
export function toChatMessage(message: BaseMessage, where: string): ChatCompletionsMessage {
  if (HumanMessage.isInstance(message)) {
    const content = partsOf(
      message,
      where,
      USER_PARTS,
      'Chat Completions user messages take text, image_url, input_audio and file parts',
    );
    return { role: 'user', content, ...nameOf(message) };
  }
  if (SystemMessage.isInstance(message)) {
    const role = message.additional_kwargs?.[OPENAI_ROLE] === 'developer' ? 'developer' : 'system';
    const content = partsOf(message, where, new Set(['text']), `a ${role} message holds text only`);
    return { role, content, ...nameOf(message) };
  }
  if (AIMessage.isInstance(message)) return assistantOf(message, where);
  if (ToolMessage.isInstance(message)) {
    if (!message.tool_call_id)
      throw new InvalidInputError(`${where}.tool_call_id: required (the call it answers)`);
    const content = partsOf(
      message,
      where,
      new Set(['text']),
      'a Chat Completions tool message holds text only',
    );
    return { role: 'tool', tool_call_id: message.tool_call_id, content };
  }
  throw new InvalidInputError(
    `${where}: the ${FORMAT} session format has no role for a ${JSON.stringify(message.getType())} message (it stores human, ai, system and tool messages); nothing was stored`,
  );
}

/** An `AIMessage` as an assistant message. */
function assistantOf(message: AIMessage, where: string): ChatCompletionsMessage {
  const invalid = message.invalid_tool_calls ?? [];
  if (invalid.length > 0) {
    throw new InvalidInputError(
      `${where}.invalid_tool_calls: ${invalid.length} tool call(s) whose arguments are not JSON (${invalid.map((c) => c.name ?? '?').join(', ')}); the API takes no such call back, so the reply is not stored`,
    );
  }
  for (const key of ['function_call', 'audio'] as const) {
    if (message.additional_kwargs?.[key] != null) {
      throw new InvalidInputError(
        `${where}.additional_kwargs.${key}: the ${FORMAT} session format stores tool_calls and text, not a legacy ${key}; nothing was stored`,
      );
    }
  }
  const calls = (message.tool_calls ?? []).map((call, i) => {
    if (!call.id) throw new InvalidInputError(`${where}.tool_calls[${i}].id: required (its answer names it)`);
    return {
      id: call.id,
      type: 'function' as const,
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    };
  });
  const ids = new Set(calls.map((c) => c.id));
  const content = contentOf(message, where);
  let text: string | Block[] | null;
  if (typeof content === 'string') text = content;
  else {
    const parts = content.filter((block, i) => {
      if (ASSISTANT_PARTS.has(block.type) && !isLangChainBlock(block)) return true;
      // A call written in the content too (a `tool_call` block of LangChain's v1 output, an
      // Anthropic `tool_use`) is the one `tool_calls` holds: it is stored there.
      if ((block.type === 'tool_call' || block.type === 'tool_use') && ids.has(String(block.id)))
        return false;
      throw unstorable(
        `${where}.content[${i}]`,
        block,
        FORMAT,
        'an assistant message sends back text, refusal and tool_calls only; store this agent in the anthropic format to keep such blocks',
      );
    });
    text = parts.length > 0 ? parts : calls.length > 0 ? null : '';
  }
  return {
    role: 'assistant',
    content: text,
    ...nameOf(message),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

/**
 * The content as a string or the parts the role takes, each kept as it is; an empty list is the
 * empty string (the API takes no empty list).
 */
function partsOf(message: BaseMessage, where: string, types: Set<string>, why: string): string | Block[] {
  const content = contentOf(message, where);
  if (typeof content === 'string') return content;
  content.forEach((block, i) => {
    if (!types.has(block.type) || isLangChainBlock(block)) {
      throw unstorable(`${where}.content[${i}]`, block, FORMAT, why);
    }
  });
  return content.length > 0 ? content : '';
}

function nameOf(message: BaseMessage): { name?: string } {
  return typeof message.name === 'string' && message.name !== '' ? { name: message.name } : {};
}

/**
 * The LangChain message of a stored (or compactor-rendered) Chat Completions message: `user` a
 * `HumanMessage`, `system` and `developer` a `SystemMessage` (`developer` marked as
 * `@langchain/openai` marks it), `assistant` an `AIMessage` with `tool_calls` parsed from their
 * `arguments` (a null content is the empty string), `tool` a `ToolMessage`.
 * @throws {InvalidInputError} naming `where`, for a message this adapter never stores (a custom tool
 *   call, arguments that are not a JSON object, an unknown role).
 */
export function fromChatMessage(stored: unknown, where: string): BaseMessage {
  const m = stored as Record<string, unknown> & { role?: unknown; content?: unknown; name?: unknown };
  const name = typeof m.name === 'string' ? { name: m.name } : {};
  const content = m.content as string | Block[];
  switch (m.role) {
    case 'user':
      return new HumanMessage({ content, ...name });
    case 'system':
      return new SystemMessage({ content, ...name });
    case 'developer':
      return new SystemMessage({ content, ...name, additional_kwargs: { [OPENAI_ROLE]: 'developer' } });
    case 'tool':
      return new ToolMessage({ content, tool_call_id: String(m.tool_call_id) });
    case 'assistant': {
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      const toolCalls = calls.map((raw, i) => {
        const call = raw as {
          id?: unknown;
          type?: unknown;
          function?: { name?: unknown; arguments?: unknown };
        };
        if (call.type !== 'function' || typeof call.function?.arguments !== 'string') {
          throw new InvalidInputError(`${where}.tool_calls[${i}]: not a function call with JSON arguments`);
        }
        let args: unknown;
        try {
          args = JSON.parse(call.function.arguments);
        } catch {
          args = undefined;
        }
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw new InvalidInputError(`${where}.tool_calls[${i}].function.arguments: not a JSON object`);
        }
        return {
          id: String(call.id),
          name: String(call.function.name),
          args: args as Record<string, unknown>,
          type: 'tool_call' as const,
        };
      });
      return new AIMessage({ content: content ?? '', ...name, tool_calls: toolCalls });
    }
    default:
      throw new InvalidInputError(`${where}.role: ${JSON.stringify(m.role)} is not a Chat Completions role`);
  }
}
