/**
 * A model's answer (the `content` of `doGenerate`, or the parts a stream carried) as the assistant
 * message the AI SDK itself puts in the next step's prompt. The rule is the AI SDK's own (ai 7.0
 * `toResponseMessages` then `convertToLanguageModelPrompt`; AI SDK 5 and 6 do the same), so what
 * compactor stores is what the model would have been sent without it:
 * - `text` → `{ type: 'text', text, providerOptions }`, left out when empty and without metadata;
 * - `reasoning` → `{ type: 'reasoning', text, providerOptions }`: the provider's metadata becomes
 *   the part's `providerOptions`, so Anthropic's thinking `signature` (or `redactedData`) goes back
 *   with it;
 * - `tool-call` → `{ type: 'tool-call', toolCallId, toolName, input, providerExecuted?,
 *   providerOptions }`, `input` parsed from the JSON text the model wrote (blank text is `{}`;
 *   text that is not JSON is `{}` too, as the AI SDK sends it);
 * - a provider-executed `tool-result` → a `tool-result` part whose `output` is `text` (a string
 *   result) or `json`, `error-text`/`error-json` when `isError`;
 * - `file`, `reasoning-file` (v4) and `custom` (v4) parts keep their data and metadata;
 * - `source` and `tool-approval-request` parts are not part of a prompt: the AI SDK never sends
 *   them back, so they are not stored.
 * Pure.
 */
import type {
  LanguageModelV2Content,
  LanguageModelV2Message,
  LanguageModelV3Content,
  LanguageModelV3Message,
  LanguageModelV4Content,
  LanguageModelV4Message,
} from '@ai-sdk/provider';

/** A content part of a model's answer, of any specification version. */
export type AnyContent = LanguageModelV2Content | LanguageModelV3Content | LanguageModelV4Content;

/** A prompt message of any specification version. */
export type AnyMessage = LanguageModelV2Message | LanguageModelV3Message | LanguageModelV4Message;

/** A part of an assistant prompt message, as a plain record (the versions' unions overlap). */
type Part = Record<string, unknown> & { type: string };

/** `{ providerOptions }` when the metadata is set, else nothing (no `undefined`-valued keys). */
function options(metadata: unknown): { providerOptions?: unknown } {
  return metadata == null ? {} : { providerOptions: metadata };
}

/** A tool call's input as the AI SDK sends it back: the parsed JSON, `{}` when blank or not JSON. */
export function parseToolInput(input: unknown): unknown {
  if (typeof input !== 'string') return input ?? {};
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input);
  } catch {
    return {};
  }
}

/** One content part as a prompt part, or null when the AI SDK leaves it out of the prompt. */
function partOf(content: AnyContent): Part | null {
  const part = content as Part & { providerMetadata?: unknown };
  switch (part.type) {
    case 'text':
      if (part.text === '' && part.providerMetadata == null) return null;
      return { type: 'text', text: part.text, ...options(part.providerMetadata) };
    case 'reasoning':
      return { type: 'reasoning', text: part.text, ...options(part.providerMetadata) };
    case 'custom':
      return { type: 'custom', kind: part.kind, ...options(part.providerMetadata) };
    case 'file':
    case 'reasoning-file':
      return {
        type: part.type,
        data: part.data,
        mediaType: part.mediaType,
        ...options(part.providerMetadata),
      };
    case 'tool-call':
      return {
        type: 'tool-call',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: parseToolInput(part.input),
        ...(part.providerExecuted === undefined ? {} : { providerExecuted: part.providerExecuted }),
        ...options(part.providerMetadata),
      };
    case 'tool-result': {
      const result = part.result;
      const error = part.isError === true;
      const output =
        typeof result === 'string'
          ? { type: error ? 'error-text' : 'text', value: result }
          : { type: error ? 'error-json' : 'json', value: result ?? null };
      return {
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        output,
        ...options(part.providerMetadata),
      };
    }
    default:
      // `source`, `tool-approval-request`: never sent back in a prompt.
      return null;
  }
}

/**
 * The assistant message of a model's answer, or null when nothing of it goes back into a prompt
 * (an empty answer). The message is typed as the caller's version's.
 */
export function replyMessage<M extends AnyMessage = LanguageModelV4Message>(
  content: readonly AnyContent[],
): M | null {
  const parts = content.map(partOf).filter((p): p is Part => p !== null);
  if (parts.length === 0) return null;
  return { role: 'assistant', content: parts } as unknown as M;
}

/** Whether an answer calls a tool the application runs (a tool call not executed by the provider). */
export function callsClientTools(content: readonly AnyContent[]): boolean {
  return content.some(
    (c) => c.type === 'tool-call' && (c as { providerExecuted?: boolean }).providerExecuted !== true,
  );
}
