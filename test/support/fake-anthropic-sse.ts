/**
 * A complete Messages API answer as the API streams it (`"stream": true`; Anthropic's "Streaming
 * Messages" docs): `message_start` with the message, its content empty and its usage so far; for
 * each content block `content_block_start` (the block empty), its deltas (`text_delta`,
 * `thinking_delta` then `signature_delta`, `input_json_delta` for a tool call's input, in pieces) and
 * `content_block_stop`; `message_delta` with the stop reason and the final usage; `message_stop`.
 * A block of another type (a `compaction` block, a server tool's) starts whole and has no delta.
 * Pure: what the fake writes to the socket, and the parser the tests read it back with.
 */

/** One server-sent event. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Characters of a text or a tool input per delta, so a client must join several. */
const CHUNK = 40;

/**
 * The events of `message` (a Messages API answer, `content` complete), in the API's order. The
 * usage of `message_start` counts the input and one output token; `message_delta` carries the
 * answer's own usage, as the API's does.
 */
export function messageEvents(message: Record<string, unknown>): SseEvent[] {
  const content = (message.content as Array<Record<string, unknown>>) ?? [];
  const usage = (message.usage as Record<string, unknown>) ?? {};
  const events: SseEvent[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          ...message,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
    },
  ];
  content.forEach((block, index) => {
    const start = (content_block: Record<string, unknown>) =>
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block },
      });
    const delta = (d: Record<string, unknown>) =>
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
    if (block.type === 'text') {
      start({ ...block, text: '' });
      for (const piece of chunks(String(block.text ?? ''))) delta({ type: 'text_delta', text: piece });
    } else if (block.type === 'thinking') {
      start({ type: 'thinking', thinking: '', signature: '' });
      for (const piece of chunks(String(block.thinking ?? '')))
        delta({ type: 'thinking_delta', thinking: piece });
      delta({ type: 'signature_delta', signature: String(block.signature ?? '') });
    } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      start({ ...block, input: {} });
      const json = JSON.stringify(block.input ?? {});
      for (const piece of chunks(json)) delta({ type: 'input_json_delta', partial_json: piece });
    } else {
      start(block);
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: {
        stop_reason: message.stop_reason ?? null,
        stop_sequence: message.stop_sequence ?? null,
        ...(message.stop_details !== undefined ? { stop_details: message.stop_details } : {}),
      },
      usage,
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** The events as the wire carries them: `event:` and `data:` lines, a blank line after each. */
export function sseText(events: readonly SseEvent[]): string {
  return events.map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`).join('');
}

/**
 * The message a stream of events builds, as a client joins it: blocks from their starts, text,
 * thinking, signatures and tool inputs from their deltas, stop reason and usage from
 * `message_delta`. For tests of the fake.
 * @throws {Error} when the events break the order above (a delta before its block's start, no
 *   `message_start`, no `message_stop`).
 */
export function joinEvents(events: readonly SseEvent[]): Record<string, unknown> {
  let message: Record<string, unknown> | null = null;
  const blocks: Array<Record<string, unknown>> = [];
  const inputs = new Map<number, string>();
  let stopped = false;
  for (const { data } of events) {
    if (stopped) throw new Error(`${String(data.type)} after message_stop`);
    if (data.type === 'message_start') {
      message = { ...(data.message as Record<string, unknown>) };
      continue;
    }
    if (message === null) throw new Error(`${String(data.type)} before message_start`);
    const index = data.index as number;
    if (data.type === 'content_block_start') {
      blocks[index] = { ...(data.content_block as Record<string, unknown>) };
    } else if (data.type === 'content_block_delta') {
      const block = blocks[index];
      if (!block) throw new Error(`a delta of block ${index} before its start`);
      const d = data.delta as Record<string, string>;
      if (d.type === 'text_delta') block.text = `${block.text ?? ''}${d.text}`;
      else if (d.type === 'thinking_delta') block.thinking = `${block.thinking ?? ''}${d.thinking}`;
      else if (d.type === 'signature_delta') block.signature = d.signature;
      else if (d.type === 'input_json_delta')
        inputs.set(index, `${inputs.get(index) ?? ''}${d.partial_json}`);
    } else if (data.type === 'content_block_stop') {
      const json = inputs.get(index);
      if (json !== undefined && blocks[index]) blocks[index].input = JSON.parse(json === '' ? '{}' : json);
    } else if (data.type === 'message_delta') {
      const d = data.delta as Record<string, unknown>;
      message = { ...message, ...d, usage: data.usage };
    } else if (data.type === 'message_stop') {
      stopped = true;
    }
  }
  if (!stopped || message === null) throw new Error('the stream ended without message_stop');
  return { ...message, content: blocks };
}

/** Parses an event stream's text into its events. */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(chunk)?.[1] ?? '{}';
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

function chunks(text: string): string[] {
  if (text === '') return [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += CHUNK) out.push(text.slice(i, i + CHUNK));
  return out;
}
