/**
 * The `openai-chat` codec: a Mastra agent's prompt messages stored as the Chat Completions messages
 * that carry them (the shapes `@ai-sdk/openai`'s `convertToOpenAIChatMessages` writes into a
 * request), and read back into prompt messages that it writes into a request as they were stored.
 * The model reads the session at every step (the processor replaces the prompt from the first
 * request on), so what compactor stores is, byte for byte, what the model receives, before a
 * compaction and after it. Pure: no I/O.
 *
 * | prompt                                        | Chat Completions message                                   |
 * | --------------------------------------------- | ---------------------------------------------------------- |
 * | user, one text part                           | `{role: 'user', content: text}`                            |
 * | user, other parts                             | `content` parts: `text`, `image_url` (an image: its URL or |
 * |                                               | a data URL; `detail` from `providerOptions.openai.imageDetail`), |
 * |                                               | `file` (a PDF, base64, its `filename`), `input_audio` (wav, mp3) |
 * | assistant: text and tool calls                | `content` (the texts joined; null beside calls when empty), |
 * |                                               | `tool_calls` (`arguments`: the input as JSON text)          |
 * | tool: one result per call                     | one `{role: 'tool', tool_call_id, content}` each            |
 * | system (inside the conversation)              | `{role: 'system', content}`                                |
 *
 * A tool result's `content` is the text the model reads: a text output as it is, JSON and content
 * outputs as JSON text, an error as `{"error": …}` JSON text (as `@ai-sdk/openai` 4.0.118 writes it, whatever the provider version;
 * 4.0.72 sent an error's text bare, which does not tell the model it failed), a denied execution
 * as its reason. It comes back as a text output of that same text, which `@ai-sdk/openai` sends
 * unchanged: what a Chat Completions request carries of a tool result is its text, and the kind
 * of the output (JSON, error) is written into that text rather than kept beside it.
 *
 * Refused, with an error naming the message and part (the request cannot carry them, and dropping
 * them would change the conversation without a word): reasoning (store a reasoning model's
 * session in the `anthropic` format, or one that keeps the AI SDK prompt whole); files other than
 * images, PDFs and wav/mp3 audio, a PDF or audio by URL, file references and inline text files;
 * an image's file name; provider-executed tool calls and results; tool approval responses; a tool
 * call whose input is not a JSON object; provider options other than Mastra's own bookkeeping
 * (`mastra`, never sent) and `openai.imageDetail` on an image.
 */
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import type { AnyLoadedContext, SessionCodec } from './codec.ts';
import {
  type ConversationMessage,
  type FileData,
  type FilePart,
  fileDataKind,
  fileDataOf,
  foreignOptions,
  type PromptMessage,
  type PromptPart,
  type PromptVersion,
  type ProviderOptions,
  type ToolResultOutput,
} from './prompt.ts';

/** A Chat Completions message as this codec writes it. */
type ChatMessage = Record<string, unknown> & { role: string };

/** The text `@ai-sdk/openai` sends for a denied tool execution without a reason. */
const DENIED = 'Tool call execution denied.';

/** The codec of `openai-chat` sessions (see the file comment). */
export const openaiChatCodec: SessionCodec = {
  format: 'openai-chat',
  encode(messages, where) {
    const base = indexOf(where);
    return messages.flatMap((m, i) => encodeMessage(m, base.name(i)));
  },
  decode(context, version) {
    return decodeMessages(chatMessagesOf(context), version);
  },
};

/** `conversation[4]` → a namer of `conversation[4 + i]`. */
function indexOf(where: string): { name: (i: number) => string } {
  const match = /^(.*)\[(\d+)\]$/.exec(where);
  const prefix = match?.[1] ?? where;
  const start = match ? Number(match[2]) : 0;
  return { name: (i) => `${prefix}[${start + i}]` };
}

function refuse(field: string, message: string): never {
  throw new InvalidInputError(`${field}: ${message}`);
}

/** Refuses provider options but Mastra's own and those `allowed` (by provider, then key). */
function checkOptions(
  options: ProviderOptions | undefined,
  at: string,
  allowed: Record<string, readonly string[]> = {},
): void {
  const foreign = foreignOptions(options);
  if (!foreign) return;
  for (const [provider, values] of Object.entries(foreign)) {
    for (const key of Object.keys(values ?? {})) {
      if (!allowed[provider]?.includes(key)) {
        refuse(
          `${at}.providerOptions.${provider}.${key}`,
          'an openai-chat session cannot hold this provider option (a Chat Completions message has no place for it)',
        );
      }
    }
  }
}

function encodeMessage(m: PromptMessage, at: string): ChatMessage[] {
  checkOptions(m.providerOptions, at);
  switch (m.role) {
    case 'system':
      return [{ role: 'system', content: m.content }];
    case 'user':
      return [encodeUser(m.content, at)];
    case 'assistant':
      return [encodeAssistant(m.content, at)];
    case 'tool':
      return m.content.map((part, i) => encodeToolResult(part, `${at}.content[${i}]`));
    default:
      return refuse(
        `${at}.role`,
        `expected system, user, assistant or tool, got ${JSON.stringify((m as { role?: unknown }).role)}`,
      );
  }
}

function encodeUser(parts: PromptPart[], at: string): ChatMessage {
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.type === 'text') {
    checkOptions(only.providerOptions, `${at}.content[0]`);
    return { role: 'user', content: (only as { text: string }).text };
  }
  return { role: 'user', content: parts.map((part, i) => encodeUserPart(part, i, `${at}.content[${i}]`)) };
}

function encodeUserPart(part: PromptPart, index: number, at: string): Record<string, unknown> {
  if (part.type === 'text') {
    checkOptions(part.providerOptions, at);
    return { type: 'text', text: (part as { text: string }).text };
  }
  if (part.type !== 'file')
    return refuse(`${at}.type`, `a user message holds text and files, not "${part.type}"`);
  const file = part as FilePart;
  const top = file.mediaType.split('/')[0];
  if (top === 'image') {
    checkOptions(file.providerOptions, at, { openai: ['imageDetail'] });
    if (file.filename !== undefined)
      refuse(`${at}.filename`, 'an image_url part has no file name: an openai-chat session cannot hold it');
    const data = fileData(file, at);
    const url = data.url ?? `data:${fullMediaType(file, at)};base64,${data.base64}`;
    const detail = file.providerOptions?.openai?.imageDetail;
    return { type: 'image_url', image_url: detail === undefined ? { url } : { url, detail } };
  }
  checkOptions(file.providerOptions, at);
  if (top === 'audio') {
    const format = { 'audio/wav': 'wav', 'audio/mp3': 'mp3', 'audio/mpeg': 'mp3' }[file.mediaType];
    if (!format)
      return refuse(`${at}.mediaType`, `Chat Completions takes wav or mp3 audio, not ${file.mediaType}`);
    const data = fileData(file, at);
    if (data.url) return refuse(`${at}.data`, 'Chat Completions takes audio as base64 data, not by URL');
    return { type: 'input_audio', input_audio: { data: data.base64, format } };
  }
  if (file.mediaType === 'application/pdf') {
    const data = fileData(file, at);
    if (data.url) return refuse(`${at}.data`, 'Chat Completions takes a PDF as base64 data, not by URL');
    return {
      type: 'file',
      file: {
        filename: file.filename ?? `part-${index}.pdf`,
        file_data: `data:application/pdf;base64,${data.base64}`,
      },
    };
  }
  return refuse(
    `${at}.mediaType`,
    `Chat Completions takes images, PDFs and wav/mp3 audio, not ${file.mediaType}`,
  );
}

/** A file part's data ({@link fileDataOf}), refused when it is neither base64 nor a URL. */
function fileData(file: FilePart, at: string): FileData {
  return (
    fileDataOf(file) ??
    refuse(
      `${at}.data`,
      `an openai-chat session holds a file's base64 data or its URL, not ${fileDataKind(file)}`,
    )
  );
}

function fullMediaType(file: FilePart, at: string): string {
  if (/^[\w.+-]+\/[\w.+-]+$/.test(file.mediaType)) return file.mediaType;
  return refuse(
    `${at}.mediaType`,
    `a data URL needs the image's full media type (image/png), not "${file.mediaType}"`,
  );
}

function encodeAssistant(parts: PromptPart[], at: string): ChatMessage {
  let text = '';
  const calls: Array<Record<string, unknown>> = [];
  parts.forEach((part, i) => {
    const where = `${at}.content[${i}]`;
    if (part.type === 'text') {
      checkOptions(part.providerOptions, where);
      text += (part as { text: string }).text;
    } else if (part.type === 'tool-call') {
      checkOptions(part.providerOptions, where);
      const call = part as {
        toolCallId: string;
        toolName: string;
        input: unknown;
        providerExecuted?: boolean;
      };
      if (call.providerExecuted)
        refuse(`${where}.providerExecuted`, 'a tool the provider ran has no Chat Completions message');
      calls.push({
        id: call.toolCallId,
        type: 'function',
        function: { name: call.toolName, arguments: argumentsOf(call.input, `${where}.input`) },
      });
    } else if (part.type === 'reasoning' && isEmptyReasoning(part)) {
      // An empty, unsigned reasoning part holds nothing to keep.
    } else if (part.type === 'reasoning') {
      refuse(
        where,
        'an openai-chat session cannot hold reasoning: store this agent in the anthropic format (signed thinking), or leave reasoning out of what it sends back',
      );
    } else {
      refuse(
        `${where}.type`,
        `an openai-chat assistant message holds text and tool calls, not "${part.type}"`,
      );
    }
  });
  return calls.length > 0
    ? { role: 'assistant', content: text === '' ? null : text, tool_calls: calls }
    : { role: 'assistant', content: text };
}

function isEmptyReasoning(part: PromptPart): boolean {
  return (part as { text?: unknown }).text === '' && foreignOptions(part.providerOptions) === undefined;
}

/**
 * A call's input as the JSON text of `arguments`: an object's JSON; a string holding a JSON object
 * (a model's raw arguments) as the JSON of that object, the text every provider version sends for
 * it (`@ai-sdk/openai` 4.0.72 would send `{}` for the string itself).
 */
function argumentsOf(input: unknown, at: string): string {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      return refuse(at, 'a tool call input given as text must be a JSON object');
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return JSON.stringify(value);
  return refuse(
    at,
    `a Chat Completions tool call takes a JSON object as input, not ${Array.isArray(value) ? 'an array' : typeof value}`,
  );
}

function encodeToolResult(part: PromptPart, at: string): ChatMessage {
  if (part.type !== 'tool-result') {
    return refuse(
      `${at}.type`,
      part.type === 'tool-approval-response'
        ? 'a tool approval response has no Chat Completions message: an openai-chat session cannot hold it'
        : `a tool message holds tool results, not "${part.type}"`,
    );
  }
  const result = part as { toolCallId: string; output: ToolResultOutput };
  checkOptions(part.providerOptions, at);
  checkOptions(result.output.providerOptions, `${at}.output`);
  return {
    role: 'tool',
    tool_call_id: result.toolCallId,
    content: outputText(result.output, `${at}.output`),
  };
}

/** The text `@ai-sdk/openai` sends for a tool output. */
function outputText(output: ToolResultOutput, at: string): string {
  switch (output.type) {
    case 'text':
      return output.value;
    case 'json':
    case 'content':
      return JSON.stringify(output.value);
    case 'error-text':
    case 'error-json':
      return JSON.stringify({ error: output.value });
    case 'execution-denied':
      return output.reason ?? DENIED;
    default:
      return refuse(`${at}.type`, `unknown tool output type "${(output as { type?: unknown }).type}"`);
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding

function chatMessagesOf(context: AnyLoadedContext): ChatMessage[] {
  if (!('format' in context) || context.format !== 'openai-chat') {
    throw new Error('the openai-chat codec reads a context loaded with format "openai-chat"');
  }
  return context.messages;
}

function decodeMessages(messages: readonly ChatMessage[], version: PromptVersion): PromptMessage[] {
  const out: PromptMessage[] = [];
  /** The names of the calls of the latest assistant message, by id: a tool result names its tool. */
  let names = new Map<string, string>();
  messages.forEach((m, i) => {
    const at = `context.messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer':
        out.push({ role: 'system', content: textOf(m.content, at) });
        break;
      case 'user':
        out.push({ role: 'user', content: decodeUser(m.content, version, at) });
        break;
      case 'assistant': {
        const { message, calls } = decodeAssistant(m, at);
        names = calls;
        out.push(message);
        break;
      }
      case 'tool': {
        const id = String(m.tool_call_id);
        const toolName = names.get(id);
        if (toolName === undefined) throw new Error(`${at}: a tool message answering no call before it`);
        const part = {
          type: 'tool-result' as const,
          toolCallId: id,
          toolName,
          output: { type: 'text' as const, value: textOf(m.content, at) },
        };
        const last = out.at(-1);
        if (last?.role === 'tool') last.content.push(part);
        else out.push({ role: 'tool', content: [part] });
        break;
      }
      default:
        throw new Error(`${at}.role: "${m.role}" is no role of an openai-chat session`);
    }
  });
  return out;
}

/** A string content, or the text of text parts. */
function textOf(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.every((p) => (p as { type?: unknown })?.type === 'text')) {
    return content.map((p) => (p as { text: string }).text).join('');
  }
  throw new Error(`${at}.content: expected text`);
}

function decodeUser(content: unknown, version: PromptVersion, at: string): ConversationMessage['content'] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new Error(`${at}.content: expected a string or parts`);
  return content.map((p: Record<string, unknown>, i) => {
    const where = `${at}.content[${i}]`;
    switch (p.type) {
      case 'text':
        return { type: 'text', text: String(p.text) };
      case 'image_url': {
        const image = p.image_url as { url: string; detail?: string };
        const dataUrl = /^data:([^;,]+);base64,(.*)$/s.exec(image.url);
        const part: FilePart = dataUrl
          ? { type: 'file', mediaType: dataUrl[1] as string, data: dataOf(dataUrl[2] as string, version) }
          : { type: 'file', mediaType: 'image/*', data: urlOf(image.url, version) };
        if (image.detail !== undefined) part.providerOptions = { openai: { imageDetail: image.detail } };
        return part;
      }
      case 'input_audio': {
        const audio = p.input_audio as { data: string; format: string };
        return {
          type: 'file',
          mediaType: audio.format === 'wav' ? 'audio/wav' : 'audio/mpeg',
          data: dataOf(audio.data, version),
        };
      }
      case 'file': {
        const file = p.file as { filename?: string; file_data?: string };
        const data = /^data:application\/pdf;base64,(.*)$/s.exec(file.file_data ?? '');
        if (!data) throw new Error(`${where}.file: expected a PDF's base64 data`);
        return {
          type: 'file',
          mediaType: 'application/pdf',
          ...(file.filename !== undefined ? { filename: file.filename } : {}),
          data: dataOf(data[1] as string, version),
        };
      }
      default:
        throw new Error(`${where}.type: "${String(p.type)}" is no part this adapter stores`);
    }
  });
}

/** Base64 data in the shape of the prompt version. */
function dataOf(base64: string, version: PromptVersion): unknown {
  return version === 'v4' ? { type: 'data', data: base64 } : base64;
}

/** A URL in the shape of the prompt version. */
function urlOf(url: string, version: PromptVersion): unknown {
  return version === 'v4' ? { type: 'url', url: new URL(url) } : new URL(url);
}

function decodeAssistant(m: ChatMessage, at: string): { message: PromptMessage; calls: Map<string, string> } {
  const parts: PromptPart[] = [];
  if (m.content !== null && m.content !== undefined)
    parts.push({ type: 'text', text: textOf(m.content, at) });
  const calls = new Map<string, string>();
  const toolCalls = (m.tool_calls ?? []) as Array<{
    id: string;
    type: string;
    function?: { name: string; arguments: string };
  }>;
  toolCalls.forEach((call, j) => {
    if (call.type !== 'function' || !call.function)
      throw new Error(`${at}.tool_calls[${j}]: a "${call.type}" call is no call this adapter stores`);
    calls.set(call.id, call.function.name);
    parts.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.function.name,
      input: inputOf(call.function.arguments, `${at}.tool_calls[${j}]`),
    });
  });
  return { message: { role: 'assistant', content: parts }, calls };
}

/** A call's input from its `arguments`: the JSON object they hold. */
function inputOf(args: string, at: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
    return parsed as Record<string, unknown>;
  throw new Error(`${at}.function.arguments: expected a JSON object`);
}
