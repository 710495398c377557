/**
 * Passes a model's stream through unchanged, chunk by chunk, while collecting what must be stored:
 * the answer's content parts (as `doGenerate` would have returned them), its usage and its finish
 * reason. Nothing is buffered but that content: text and reasoning deltas are joined per part id,
 * as the AI SDK joins them (ai 7.0 `upsertTextContentPart`: a part is placed where its first chunk
 * came, its text grows with each delta, and the latest non-null `providerMetadata` of its chunks
 * wins, which is where Anthropic's thinking signature arrives); a tool call, a provider-executed
 * tool result, a file or a custom part is taken whole from its one chunk. The stream parts of v2,
 * v3 and v4 share these names and fields.
 */
import type {
  LanguageModelV2StreamPart,
  LanguageModelV3StreamPart,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import type { AnyContent } from './reply.ts';
import type { AnyFinishReason, AnyUsage } from './versions.ts';

/** A stream part of any specification version. */
export type AnyStreamPart = LanguageModelV2StreamPart | LanguageModelV3StreamPart | LanguageModelV4StreamPart;

/** What a finished stream carried, for storing. */
export interface CollectedAnswer {
  content: AnyContent[];
  usage: AnyUsage | undefined;
  finishReason: AnyFinishReason | undefined;
}

/**
 * A pass-through transform: every chunk is enqueued as it came, before anything else is done with
 * it. When the stream ends after a `finish` part, `onFinish` is awaited with the collected answer
 * before the stream closes (so the AI SDK's next step starts after the answer is stored); a
 * rejection of `onFinish` errors the stream. A stream that ends without `finish` (a provider error,
 * an abort) stores nothing: the AI SDK does not send such an answer back either.
 */
export function collectingStream<P extends AnyStreamPart>(
  onFinish: (answer: CollectedAnswer) => Promise<void>,
): TransformStream<P, P> {
  const content: Array<AnyContent & { text?: string; providerMetadata?: unknown }> = [];
  const open = new Map<string, number>();
  let finish: { usage: AnyUsage; finishReason: AnyFinishReason } | undefined;

  /** The text or reasoning part of `id`, created where its first chunk came. */
  const upsert = (type: 'text' | 'reasoning', id: string, delta: string | undefined, metadata: unknown) => {
    const key = `${type}:${id}`;
    let index = open.get(key);
    if (index === undefined) {
      index =
        content.push({
          type,
          text: '',
          ...(metadata != null ? { providerMetadata: metadata } : {}),
        } as never) - 1;
      open.set(key, index);
    }
    const part = content[index] as { text: string; providerMetadata?: unknown };
    if (delta != null) part.text += delta;
    if (metadata != null) part.providerMetadata = metadata;
  };

  return new TransformStream<P, P>({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      const part = chunk as AnyStreamPart & { id?: string; delta?: string; providerMetadata?: unknown };
      switch (part.type) {
        case 'text-start':
        case 'text-delta':
        case 'text-end':
          upsert(
            'text',
            part.id ?? '',
            part.type === 'text-delta' ? part.delta : undefined,
            part.providerMetadata,
          );
          if (part.type === 'text-end') open.delete(`text:${part.id}`);
          break;
        case 'reasoning-start':
        case 'reasoning-delta':
        case 'reasoning-end':
          upsert(
            'reasoning',
            part.id ?? '',
            part.type === 'reasoning-delta' ? part.delta : undefined,
            part.providerMetadata,
          );
          if (part.type === 'reasoning-end') open.delete(`reasoning:${part.id}`);
          break;
        case 'tool-call':
        case 'tool-result':
        case 'file':
        case 'custom':
        case 'reasoning-file':
          content.push(part as AnyContent);
          break;
        case 'finish':
          finish = { usage: part.usage, finishReason: part.finishReason };
          break;
        default:
          // stream-start, response-metadata, tool-input-*, source, raw, error, ...: not stored.
          break;
      }
    },
    async flush() {
      if (!finish) return;
      await onFinish({ content, usage: finish.usage, finishReason: finish.finishReason });
    },
  });
}
