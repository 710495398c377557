/**
 * The Responses input items of a compacted context (`loadContext`, format `openai-responses`) as
 * the OpenAI Agents SDK's items (`AgentInputItem`, `@openai/agents` 0.20.0), by the rules the SDK's
 * Responses model reads a response's output with (`convertToOutputItem` of
 * `@openai/agents-openai`): an item the SDK's Responses model produced, stored by to-responses.ts,
 * comes back exactly as the SDK gave it; to-responses.ts says what is kept of the others. Pure.
 */
import type { AgentInputItem } from '@openai/agents';
import type { ResponsesItem } from '../../../shared/formats/openai-responses/item.ts';
import { field, isObj, type Obj, without } from './objects.ts';
import type { CallTool } from './to-responses.ts';

/** The SDK's `fromOpenAIToolCaller`. */
function callerIn(caller: unknown): Obj {
  if (!isObj(caller)) return {};
  if (caller.type === 'direct') return { caller: { type: 'direct' } };
  if (caller.type === 'program' && typeof caller.caller_id === 'string')
    return { caller: { type: 'program', callerId: caller.caller_id } };
  return {};
}

/**
 * The SDK items of a compacted context's Responses `input` (loadContext), in order, one each, by the
 * rules the SDK's Responses model reads a response's output with: a result's `name` and `namespace`
 * are its call's (the `call_id` itself when the call is not in `input`, as the SDK's own sessions
 * fall back); a `developer` message (compactor restates archived system text so) is a `system`
 * message, the SDK's items having no developer role.
 */
export function toAgentItems(input: readonly ResponsesItem[]): AgentInputItem[] {
  const calls = callsOf(input);
  return input.map((item) => toAgentItem(item, calls));
}

/** The tools of the function calls among Responses items, by `call_id`. */
export function callsOf(input: readonly ResponsesItem[]): Map<string, CallTool> {
  const calls = new Map<string, CallTool>();
  for (const item of input) {
    if (item.type === 'function_call' && typeof item.call_id === 'string' && typeof item.name === 'string') {
      calls.set(item.call_id, {
        name: item.name,
        namespace: typeof item.namespace === 'string' ? item.namespace : undefined,
      });
    }
  }
  return calls;
}

/** One Responses item as the SDK item; see {@link toAgentItems}. */
export function toAgentItem(item: ResponsesItem, calls: ReadonlyMap<string, CallTool>): AgentInputItem {
  const s = item as Obj;
  const type = typeof s.type === 'string' ? s.type : 'message';
  let out: Obj;
  switch (type) {
    case 'message':
      out = messageIn(s);
      break;
    case 'function_call':
      out = {
        type: 'function_call',
        ...field('id', s.id),
        callId: s.call_id,
        name: s.name,
        ...(typeof s.namespace === 'string' ? { namespace: s.namespace } : {}),
        ...field('status', s.status),
        arguments: s.arguments,
        ...callerIn(s.caller),
        providerData: without(s, ['call_id', 'name', 'namespace', 'caller', 'status', 'arguments']),
      };
      break;
    case 'function_call_output': {
      const call = calls.get(String(s.call_id));
      const more = without(s, ['type', 'id', 'call_id', 'output', 'status', 'caller', 'name', 'namespace']);
      out = {
        type: 'function_call_result',
        ...field('id', s.id),
        name: call?.name ?? s.call_id,
        ...field('namespace', call?.namespace),
        callId: s.call_id,
        status: s.status ?? 'completed',
        output: toolOutputIn(s.output),
        ...callerIn(s.caller),
        ...(Object.keys(more).length > 0 ? { providerData: more } : {}),
      };
      break;
    }
    case 'reasoning':
      out = {
        type: 'reasoning',
        ...field('id', s.id),
        content: (Array.isArray(s.summary) ? (s.summary as Obj[]) : []).map((part) => ({
          type: 'input_text',
          text: part.text,
          providerData: without(part, ['text']),
        })),
        providerData: without(s, ['summary']),
      };
      break;
    case 'compaction':
      out = {
        type: 'compaction',
        ...field('id', s.id),
        encrypted_content: s.encrypted_content,
        providerData: without(s, ['encrypted_content', 'created_by']),
      };
      break;
    default:
      // The SDK's catch-all: the provider's item whole, sent back as it is.
      out = { type: 'unknown', ...field('id', s.id), providerData: { ...s } };
  }
  return out as unknown as AgentInputItem;
}

function messageIn(s: Obj): Obj {
  if (s.role === 'assistant') {
    const more = without(s, ['type', 'id', 'role', 'content', 'status', 'phase']);
    const phase = s.phase === 'commentary' || s.phase === 'final_answer' ? s.phase : undefined;
    const parts = typeof s.content === 'string' ? [{ type: 'output_text', text: s.content }] : s.content;
    return {
      ...field('id', s.id),
      type: 'message',
      role: 'assistant',
      content: (Array.isArray(parts) ? (parts as Obj[]) : []).map(outputPartIn),
      ...field('status', s.status),
      ...field('phase', phase),
      providerData: { ...more, ...field('phase', phase) },
    };
  }
  const role = s.role === 'user' ? 'user' : 'system';
  const content =
    typeof s.content === 'string'
      ? s.content
      : role === 'user'
        ? (Array.isArray(s.content) ? (s.content as Obj[]) : []).map(inputPartIn)
        : (Array.isArray(s.content) ? (s.content as Obj[]) : []).map((p) => String(p.text ?? '')).join('\n');
  const more = without(s, ['type', 'id', 'role', 'content']);
  return {
    ...field('type', s.type),
    ...field('id', s.id),
    role,
    content,
    ...(Object.keys(more).length > 0 ? { providerData: more } : {}),
  };
}

/** A user message's part as the SDK holds it. */
function inputPartIn(part: Obj): Obj {
  const cache = field('promptCacheBreakpoint', part.prompt_cache_breakpoint);
  const pd = (keys: string[]) => {
    const more = without(part, [...keys, 'prompt_cache_breakpoint']);
    return Object.keys(more).length > 0 ? { providerData: more } : {};
  };
  switch (part.type) {
    case 'input_text':
      return { type: 'input_text', text: part.text, ...cache, ...pd(['type', 'text']) };
    case 'input_image':
      return {
        type: 'input_image',
        ...imageIn(part),
        ...field('detail', part.detail),
        ...cache,
        ...pd(['type', 'detail', 'image_url', 'file_id']),
      };
    case 'input_file':
      return {
        type: 'input_file',
        ...fileIn(part),
        ...field('filename', part.filename),
        ...cache,
        ...pd(['type', 'file_data', 'file_url', 'file_id', 'filename']),
      };
    default:
      return { ...part };
  }
}

const imageIn = (part: Obj): Obj =>
  typeof part.image_url === 'string' && part.image_url !== ''
    ? { image: part.image_url }
    : typeof part.file_id === 'string'
      ? { image: { id: part.file_id } }
      : {};

const fileIn = (part: Obj): Obj =>
  typeof part.file_id === 'string' && part.file_id !== ''
    ? { file: { id: part.file_id } }
    : typeof part.file_url === 'string' && part.file_url !== ''
      ? { file: part.file_url }
      : typeof part.file_data === 'string'
        ? { file: part.file_data }
        : {};

/** An assistant message's part as the SDK's `convertToMessageContentItem` gives it. */
function outputPartIn(part: Obj): Obj {
  const key = part.type === 'refusal' ? 'refusal' : 'text';
  const more = without(part, ['type', key]);
  return {
    type: part.type,
    [key]: part[key],
    ...(Object.keys(more).length > 0 ? { providerData: more } : {}),
  };
}

/** A call output as the SDK holds a tool's output: its text as `{ type: 'text', text }`, parts as structured items. */
function toolOutputIn(output: unknown): unknown {
  if (typeof output === 'string') return { type: 'text', text: output };
  if (!Array.isArray(output)) return { type: 'text', text: '' };
  return (output as Obj[]).map((part) => {
    if (part.type === 'input_image')
      return { type: 'input_image', ...imageIn(part), ...field('detail', part.detail) };
    if (part.type === 'input_file')
      return { type: 'input_file', ...fileIn(part), ...field('filename', part.filename) };
    return { type: 'input_text', text: part.text };
  });
}
