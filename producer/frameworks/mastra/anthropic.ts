/**
 * The `anthropic` codec: a Mastra agent's prompt messages stored as the Messages API `MessageParam`s
 * that carry them (the blocks `@ai-sdk/anthropic`'s `convertToAnthropicPrompt` writes into a
 * request), for Claude models: their thinking goes back signed, as the API requires. Read back,
 * they are prompt messages `@ai-sdk/anthropic` writes into a request as compactor rendered them, so
 * what the model receives is what compactor stored (compactor's rules for the context apply:
 * thinking a compaction made stale is left out, tool results come first in their turn). Pure: no I/O.
 *
 * | prompt                                   | `MessageParam` (content blocks)                                  |
 * | ---------------------------------------- | ---------------------------------------------------------------- |
 * | user: text, images, PDFs                 | user: `text`, `image` and `document` blocks (base64 or URL)      |
 * | assistant: text, reasoning, tool calls   | assistant: `text`, `thinking` (`signature`), `redacted_thinking` |
 * |                                          | (`data`), `tool_use` blocks                                      |
 * | tool: results                            | user: `tool_result` blocks (`is_error` for an error output)      |
 * | system (inside the conversation)         | `{role: 'system', content}`                                      |
 *
 * `providerOptions.anthropic.cacheControl` becomes the block's `cache_control` (a message's, its
 * last block's, as `@ai-sdk/anthropic` places it) and comes back as the part's. A tool result's
 * content is the text the model reads (JSON for a JSON output, the reason of a denied execution) or,
 * for a content output, its text and image blocks; it comes back as a text output, or an error
 * text when `is_error`, or a content output.
 *
 * Refused, naming the part: reasoning without a signature or redacted data (the API refuses
 * thinking it did not sign); provider-executed tools (web search, code execution) and their
 * results; citations and other Anthropic options than `cacheControl`; other providers' options;
 * files other than images and PDFs, and file references; tool approval responses; a tool input
 * that is not a JSON object.
 */
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import type { AnyLoadedContext, SessionCodec } from './codec.ts';
import {
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

type Block = Record<string, unknown> & { type: string };
type MessageParam = { role: 'user' | 'assistant' | 'system'; content: string | Block[] };

/** The text `@ai-sdk/anthropic` sends for a denied tool execution without a reason. */
const DENIED = 'Tool call execution denied.';

/** The codec of `anthropic` sessions (see the file comment). */
export const anthropicCodec: SessionCodec = {
  format: 'anthropic',
  encode(messages, where) {
    const match = /^(.*)\[(\d+)\]$/.exec(where);
    const prefix = match?.[1] ?? where;
    const start = match ? Number(match[2]) : 0;
    return messages.map((m, i) => encodeMessage(m, `${prefix}[${start + i}]`));
  },
  decode(context, version) {
    if ('format' in context)
      throw new Error('the anthropic codec reads a context loaded in the anthropic format');
    return decodeContext(context, version);
  },
};

function refuse(field: string, message: string): never {
  throw new InvalidInputError(`${field}: ${message}`);
}

/**
 * The part's `cache_control` (its `providerOptions.anthropic.cacheControl`), refusing every other
 * provider option but Mastra's and those `allowed` of Anthropic's.
 */
function cacheControlOf(
  options: ProviderOptions | undefined,
  at: string,
  allowed: readonly string[] = [],
): Record<string, unknown> | undefined {
  const foreign = foreignOptions(options);
  if (!foreign) return undefined;
  for (const [provider, values] of Object.entries(foreign)) {
    for (const key of Object.keys(values ?? {})) {
      if (provider !== 'anthropic' || (key !== 'cacheControl' && !allowed.includes(key))) {
        refuse(
          `${at}.providerOptions.${provider}.${key}`,
          'an anthropic session cannot hold this provider option (a Messages API block has no place for it)',
        );
      }
    }
  }
  return foreign.anthropic?.cacheControl as Record<string, unknown> | undefined;
}

/** `block` with `cache_control` when there is one (the key left out otherwise, as the SDK sends it). */
function cached(block: Block, cacheControl: Record<string, unknown> | undefined): Block {
  return cacheControl === undefined ? block : { ...block, cache_control: cacheControl };
}

function encodeMessage(m: PromptMessage, at: string): MessageParam {
  const messageCache = cacheControlOf(m.providerOptions, at);
  if (m.role === 'system') return { role: 'system', content: m.content };
  const blocks = m.content.map((part, i) => {
    const where = `${at}.content[${i}]`;
    if (m.role === 'user') return encodeUserPart(part, where);
    if (m.role === 'assistant') return encodeAssistantPart(part, where);
    if (m.role === 'tool') return encodeToolResult(part, where);
    return refuse(`${at}.role`, `expected system, user, assistant or tool, got ${JSON.stringify(m.role)}`);
  });
  // A message's cache control goes on its last block, where `@ai-sdk/anthropic` puts it.
  const last = blocks.at(-1);
  if (messageCache && last && last.cache_control === undefined)
    blocks[blocks.length - 1] = cached(last, messageCache);
  return { role: m.role === 'assistant' ? 'assistant' : 'user', content: blocks };
}

function encodeUserPart(part: PromptPart, at: string): Block {
  if (part.type === 'text') {
    return cached(
      { type: 'text', text: (part as { text: string }).text },
      cacheControlOf(part.providerOptions, at),
    );
  }
  if (part.type !== 'file')
    return refuse(`${at}.type`, `a user message holds text and files, not "${part.type}"`);
  return encodeFile(part as FilePart, at);
}

function encodeFile(file: FilePart, at: string): Block {
  const cacheControl = cacheControlOf(file.providerOptions, at);
  const data = fileData(file, at);
  if (file.mediaType.split('/')[0] === 'image') {
    if (file.filename !== undefined)
      refuse(`${at}.filename`, 'an image block has no file name: an anthropic session cannot hold it');
    const source = data.url
      ? { type: 'url', url: data.url }
      : { type: 'base64', media_type: fullMediaType(file, at), data: data.base64 };
    return cached({ type: 'image', source }, cacheControl);
  }
  if (file.mediaType !== 'application/pdf') {
    return refuse(`${at}.mediaType`, `an anthropic session holds images and PDFs, not ${file.mediaType}`);
  }
  const source = data.url
    ? { type: 'url', url: data.url }
    : { type: 'base64', media_type: 'application/pdf', data: data.base64 };
  return cached(
    { type: 'document', source, ...(file.filename !== undefined ? { title: file.filename } : {}) },
    cacheControl,
  );
}

/** A file part's data ({@link fileDataOf}), refused when it is neither base64 nor a URL. */
function fileData(file: FilePart, at: string): FileData {
  return (
    fileDataOf(file) ??
    refuse(
      `${at}.data`,
      `an anthropic session holds a file's base64 data or its URL, not ${fileDataKind(file)}`,
    )
  );
}

function fullMediaType(file: FilePart, at: string): string {
  if (/^[\w.+-]+\/[\w.+-]+$/.test(file.mediaType)) return file.mediaType;
  return refuse(
    `${at}.mediaType`,
    `base64 data needs the image's full media type (image/png), not "${file.mediaType}"`,
  );
}

function encodeAssistantPart(part: PromptPart, at: string): Block {
  switch (part.type) {
    case 'text':
      return cached(
        { type: 'text', text: (part as { text: string }).text },
        cacheControlOf(part.providerOptions, at),
      );
    case 'reasoning': {
      cacheControlOf(part.providerOptions, at, ['signature', 'redactedData']);
      const meta = part.providerOptions?.anthropic as
        | { signature?: unknown; redactedData?: unknown }
        | undefined;
      if (typeof meta?.signature === 'string') {
        return { type: 'thinking', thinking: (part as { text: string }).text, signature: meta.signature };
      }
      if (typeof meta?.redactedData === 'string')
        return { type: 'redacted_thinking', data: meta.redactedData };
      return refuse(
        at,
        'reasoning without an Anthropic signature or redacted data: the Messages API refuses thinking it did not sign, so an anthropic session cannot hold it',
      );
    }
    case 'tool-call': {
      const call = part as {
        toolCallId: string;
        toolName: string;
        input: unknown;
        providerExecuted?: boolean;
      };
      const cacheControl = cacheControlOf(part.providerOptions, at);
      if (call.providerExecuted) {
        refuse(
          `${at}.providerExecuted`,
          'a tool the provider ran (web search, code execution) is not stored by this adapter',
        );
      }
      return cached(
        {
          type: 'tool_use',
          id: call.toolCallId,
          name: call.toolName,
          input: inputOf(call.input, `${at}.input`),
        },
        cacheControl,
      );
    }
    default:
      return refuse(
        `${at}.type`,
        `an anthropic assistant message holds text, reasoning and tool calls, not "${part.type}"`,
      );
  }
}

/** A tool call's input as a JSON object (a string holding one is parsed). */
function inputOf(input: unknown, at: string): Record<string, unknown> {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      return refuse(at, 'a tool call input given as text must be a JSON object');
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return value as Record<string, unknown>;
  return refuse(
    at,
    `a tool_use input is a JSON object, not ${Array.isArray(value) ? 'an array' : typeof value}`,
  );
}

function encodeToolResult(part: PromptPart, at: string): Block {
  if (part.type !== 'tool-result') {
    return refuse(
      `${at}.type`,
      part.type === 'tool-approval-response'
        ? 'a tool approval response has no Messages API block: an anthropic session cannot hold it'
        : `a tool message holds tool results, not "${part.type}"`,
    );
  }
  const result = part as { toolCallId: string; output: ToolResultOutput };
  const cacheControl =
    cacheControlOf(part.providerOptions, at) ?? cacheControlOf(result.output.providerOptions, `${at}.output`);
  const { output } = result;
  const error = output.type === 'error-text' || output.type === 'error-json';
  return cached(
    {
      type: 'tool_result',
      tool_use_id: result.toolCallId,
      content: outputContent(output, `${at}.output`),
      ...(error ? { is_error: true } : {}),
    },
    cacheControl,
  );
}

/** A tool output as the content of a `tool_result` block. */
function outputContent(output: ToolResultOutput, at: string): string | Block[] {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return output.reason ?? DENIED;
    case 'content':
      return output.value.map((p, i) => {
        const part = p as PromptPart;
        const where = `${at}.value[${i}]`;
        if (part.type === 'text') {
          cacheControlOf(part.providerOptions, where);
          return { type: 'text', text: (part as { text: string }).text };
        }
        if (part.type === 'file') return encodeFile(part as FilePart, where);
        return refuse(`${where}.type`, `a tool result holds text, images and PDFs, not "${part.type}"`);
      });
    default:
      return refuse(`${at}.type`, `unknown tool output type "${(output as { type?: unknown }).type}"`);
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding

function decodeContext(
  context: Exclude<AnyLoadedContext, { format: string }>,
  version: PromptVersion,
): PromptMessage[] {
  const out: PromptMessage[] = (context.system ?? []).map((block) => ({
    role: 'system' as const,
    content: block.text,
  }));
  /** The names of the tool calls made so far, by id: a tool result names its tool. */
  const names = new Map<string, string>();
  (context.messages as unknown as MessageParam[]).forEach((m, i) => {
    const at = `context.messages[${i}]`;
    const blocks: Block[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'system') {
      out.push({ role: 'system', content: blocks.map((b) => String(b.text ?? '')).join('') });
    } else if (m.role === 'assistant') {
      out.push({
        role: 'assistant',
        content: blocks.map((b, j) => decodeAssistantBlock(b, names, `${at}.content[${j}]`)),
      });
    } else {
      // A user turn: its tool results (first, as compactor renders them) are a tool message.
      const results = blocks.filter((b) => b.type === 'tool_result');
      const rest = blocks.filter((b) => b.type !== 'tool_result');
      if (results.length > 0) {
        out.push({
          role: 'tool',
          content: results.map((b, j) => decodeToolResult(b, names, version, `${at}.content[${j}]`)),
        });
      }
      if (rest.length > 0) {
        out.push({
          role: 'user',
          content: rest.map((b, j) => decodeUserBlock(b, version, `${at}.content[${j}]`)),
        });
      }
    }
  });
  return out;
}

/** The part's provider options for a block's `cache_control`, if it has one. */
function optionsOf(block: Block): { providerOptions?: ProviderOptions } {
  return block.cache_control === undefined
    ? {}
    : { providerOptions: { anthropic: { cacheControl: block.cache_control } } };
}

function decodeUserBlock(block: Block, version: PromptVersion, at: string): PromptPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: String(block.text), ...optionsOf(block) };
    case 'image':
    case 'document':
      return decodeFile(block, version, at);
    default:
      throw new Error(`${at}.type: "${block.type}" is no block this adapter stores`);
  }
}

function decodeFile(block: Block, version: PromptVersion, at: string): FilePart {
  const source = block.source as { type: string; media_type?: string; data?: string; url?: string };
  const image = block.type === 'image';
  const mediaType = image ? (source.media_type ?? 'image/*') : 'application/pdf';
  let data: unknown;
  if (source.type === 'base64') data = version === 'v4' ? { type: 'data', data: source.data } : source.data;
  else if (source.type === 'url') {
    const url = new URL(String(source.url));
    data = version === 'v4' ? { type: 'url', url } : url;
  } else throw new Error(`${at}.source: a "${source.type}" source is no source this adapter stores`);
  return {
    type: 'file',
    mediaType,
    ...(typeof block.title === 'string' ? { filename: block.title } : {}),
    data,
    ...optionsOf(block),
  };
}

function decodeAssistantBlock(block: Block, names: Map<string, string>, at: string): PromptPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: String(block.text), ...optionsOf(block) };
    case 'thinking':
      return {
        type: 'reasoning',
        text: String(block.thinking),
        providerOptions: { anthropic: { signature: block.signature } },
      };
    case 'redacted_thinking':
      return { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: block.data } } };
    case 'tool_use':
      names.set(String(block.id), String(block.name));
      return {
        type: 'tool-call',
        toolCallId: String(block.id),
        toolName: String(block.name),
        input: block.input,
        ...optionsOf(block),
      };
    default:
      throw new Error(`${at}.type: "${block.type}" is no block this adapter stores`);
  }
}

function decodeToolResult(
  block: Block,
  names: Map<string, string>,
  version: PromptVersion,
  at: string,
): PromptPart {
  const id = String(block.tool_use_id);
  const toolName = names.get(id);
  if (toolName === undefined) throw new Error(`${at}: a tool result answering no call before it`);
  const content = block.content ?? '';
  let output: ToolResultOutput;
  if (typeof content === 'string') {
    output =
      block.is_error === true ? { type: 'error-text', value: content } : { type: 'text', value: content };
  } else if (block.is_error === true) {
    throw new Error(`${at}.content: an error result is stored as text`);
  } else {
    output = {
      type: 'content',
      value: (content as Block[]).map((b, j) =>
        b.type === 'text'
          ? { type: 'text', text: String(b.text) }
          : decodeFile(b, version, `${at}.content[${j}]`),
      ),
    };
  }
  return { type: 'tool-result', toolCallId: id, toolName, output, ...optionsOf(block) };
}
