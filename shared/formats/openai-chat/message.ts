/**
 * OpenAI Chat Completions messages as compactor stores them: the whole message object, kept exactly
 * as the agent wrote it (every field, in order), validated at append by {@link chatMessageSchema},
 * and the facts the rest of compactor reads off it (kind, tool pair ids, a plain-text rendering for
 * summaries, search and token estimates). Pure: no I/O.
 *
 * The shapes and rules come from the `openai` SDK's request types (openai-python
 * `src/openai/types/chat/chat_completion_*_message_param.py`, `chat_completion_content_part_*_param.py`,
 * `chat_completion_message_{function,custom}_tool_call_param.py`; the same in openai-node
 * `src/resources/chat/completions/completions.ts`):
 * - roles `system`/`developer` (string or `text` parts), `user` (string or `text`, `image_url`,
 *   `input_audio`, `file` parts), `assistant` (string, `text`/`refusal` parts, or null/absent when it
 *   has `tool_calls`), `tool` (string or `text` parts, and a required `tool_call_id`); every role but
 *   `tool` may carry `name`. The legacy `function` role is refused: its `function_call` is deprecated
 *   in favour of `tool_calls`.
 * - a tool call is `{id, type: "function", function: {name, arguments}}` (`arguments` a JSON
 *   *string*) or `{id, type: "custom", custom: {name, input}}`.
 * - an `image_url` part's URL is an http(s) URL or a data URL of an image type the API takes
 *   (../openai-media.ts, after OpenAI's images-vision guide); a `file` part names its file
 *   (`file_id`) or carries it (`file_data`).
 * - the API's own refusals, worded as it words them (OpenAI publishes no list of its error messages;
 *   these are its texts as quoted in bug reports against LiteLLM, the openai-node SDK and
 *   llama_index): `tool_calls: []` is "empty array. Expected an array with minimum
 *   length 1"; a null `content` is "expected a string, got null" unless the assistant message has
 *   `tool_calls`.
 */
import { z } from 'zod';
import { estimateTextTokens, MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import { imageUrlSchema } from '../openai-media.ts';

/** Roles a Chat Completions message may have in compactor (the SDK's union less legacy `function`). */
export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

/**
 * Estimated tokens of an image part: a high-detail 1024×1024 image on the tile-based models
 * (85 + 170 per 512-px tile, OpenAI's images-vision guide). Its size is not known without fetching it.
 */
export const CHAT_IMAGE_TOKENS = 765;

const text = z.looseObject({ type: z.literal('text'), text: z.string() });
const imageUrl = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: imageUrlSchema, detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const inputAudio = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.enum(['wav', 'mp3']) }),
});
// A file part names an uploaded file or carries its data ("file_id" or "file_data", OpenAI's PDF
// files guide, https://developers.openai.com/api/docs/guides/pdf-files): with neither it is no file.
const file = z.looseObject({
  type: z.literal('file'),
  file: z
    .looseObject({
      file_id: z.string().min(1).optional(),
      file_data: z.string().min(1).optional(),
      filename: z.string().optional(),
    })
    .refine((f) => f.file_id !== undefined || f.file_data !== undefined, {
      error: 'a file part needs file_id (an uploaded file) or file_data (its base64 data)',
    }),
});
const refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

const parts = <T extends z.ZodType>(part: T) => z.array(part).min(1);

const functionCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    arguments: z.string({ error: "expected a string (the call's arguments as JSON text, not an object)" }),
  }),
});
const customCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('custom'),
  custom: z.looseObject({ name: z.string().min(1), input: z.string() }),
});
const toolCall = z.discriminatedUnion('type', [functionCall, customCall]);

const name = z.string().min(1).optional();

const systemLike = (role: 'system' | 'developer') =>
  z.looseObject({ role: z.literal(role), content: z.union([z.string(), parts(text)]), name });

/**
 * One Chat Completions request message, as the SDK types it (see the file comment). Unknown extra
 * fields are allowed and kept (a newer API field such as `prompt_cache_breakpoint` on a part).
 */
export const chatMessageSchema = z
  .discriminatedUnion('role', [
    systemLike('system'),
    systemLike('developer'),
    z.looseObject({
      role: z.literal('user'),
      content: z.union([z.string(), parts(z.discriminatedUnion('type', [text, imageUrl, inputAudio, file]))]),
      name,
    }),
    z.looseObject({
      role: z.literal('assistant'),
      content: z
        .union([z.string(), parts(z.discriminatedUnion('type', [text, refusal]))])
        .nullable()
        .optional(),
      refusal: z.string().nullable().optional(),
      tool_calls: z.array(toolCall).optional(),
      name,
    }),
    z.looseObject({
      role: z.literal('tool'),
      content: z.union([z.string(), parts(text)]),
      tool_call_id: z
        .string({ error: 'required on a tool message: the id of the tool call it answers' })
        .min(1),
    }),
  ])
  .superRefine((m, ctx) => {
    if (m.role !== 'assistant') return;
    if (m.tool_calls !== undefined && m.tool_calls.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['tool_calls'],
        message:
          'empty array. Expected an array with minimum length 1, but got an empty array instead (omit the key)',
      });
    }
    if ((m.content === null || m.content === undefined) && !(m.tool_calls && m.tool_calls.length > 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['content'],
        message: `expected a string, got ${m.content === null ? 'null' : 'nothing'} (content is required unless the message has tool_calls)`,
      });
    }
  });

/** A validated Chat Completions message (extra fields kept). */
export type ChatMessage = z.infer<typeof chatMessageSchema>;

/** A part of a message's content, any type. */
type Part = { type: string } & Record<string, unknown>;

/**
 * The first problem with `value` as a Chat Completions message, as `{field, message}` with the
 * field named below `where` (`messages[2].tool_calls`), or null when it is valid.
 */
export function chatMessageProblem(value: unknown, where: string): { field: string; message: string } | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { field: where, message: 'expected a Chat Completions message object ({ role, content })' };
  }
  const role = (value as { role?: unknown }).role;
  if (!(CHAT_ROLES as readonly unknown[]).includes(role)) {
    return {
      field: `${where}.role`,
      message: `expected one of ${CHAT_ROLES.map((r) => `"${r}"`).join(', ')}, got ${JSON.stringify(role) ?? 'nothing'}${role === 'function' ? ' (the legacy function role is deprecated in favour of tool_calls)' : ''}`,
    };
  }
  // The API's own wording for a missing content ("Invalid value for 'content': expected a string,
  // got null"), for every role but an assistant with tool_calls (checked by the schema).
  const content = (value as { content?: unknown }).content;
  if (role !== 'assistant' && (content === null || content === undefined)) {
    return {
      field: `${where}.content`,
      message: `expected a string, got ${content === null ? 'null' : 'nothing'} (only an assistant message with tool_calls may leave content out)`,
    };
  }
  const parsed = chatMessageSchema.safeParse(value);
  if (parsed.success) return null;
  let issue: z.core.$ZodIssue | undefined = parsed.error.issues[0];
  let path: PropertyKey[] = [...(issue?.path ?? [])];
  // A failed union (string or parts) is followed into the option that got furthest, so the field
  // named is the one that is wrong (`content[0].image_url.url`), not the union around it.
  for (let depth = 0; issue?.code === 'invalid_union' && depth < 10; depth++) {
    const deepest: z.core.$ZodIssue | undefined = issue.errors
      .flat()
      .sort((a, b) => b.path.length - a.path.length)[0];
    if (!deepest || deepest.path.length === 0) break;
    path = [...path, ...deepest.path];
    issue = deepest;
  }
  const named = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  return { field: `${where}${named}`, message: issue?.message ?? 'invalid' };
}

/** Whether a stored value is a Chat Completions message (an object; Anthropic content is a string or a list). */
export function isChatMessage(value: unknown): value is ChatMessage {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'role' in value;
}

/** What compactor reads off a Chat Completions message. */
export interface ChatFacts {
  /** The `role` column: `developer` is stored as `system` (the message itself keeps `developer`). */
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** `tool_result` for a tool message, `tool_call` for an assistant message with calls, else `message`. */
  kind: 'message' | 'tool_call' | 'tool_result';
  /** Ids of its `tool_calls`, in order. */
  toolUseIds: string[];
  /** `[tool_call_id]` of a tool message, else empty. */
  toolResultIds: string[];
  /** The first call's tool name, if any. */
  toolName: string | null;
  /** The plain-text rendering (see {@link chatText}). */
  text: string;
  /** Estimated input tokens, framing included. */
  tokenCount: number;
}

/** The facts of one (valid) Chat Completions message. */
export function chatFacts(m: ChatMessage): ChatFacts {
  const calls = m.role === 'assistant' ? (m.tool_calls ?? []) : [];
  const first = calls[0];
  const text = chatText(m);
  const images = partsOf(m).filter((p) => p.type === 'image_url').length;
  return {
    role: m.role === 'developer' ? 'system' : m.role,
    kind: m.role === 'tool' ? 'tool_result' : calls.length > 0 ? 'tool_call' : 'message',
    toolUseIds: calls.map((c) => c.id),
    toolResultIds: m.role === 'tool' ? [m.tool_call_id] : [],
    toolName: first ? toolNameOf(first) : null,
    text,
    tokenCount: estimateTextTokens(text) + images * CHAT_IMAGE_TOKENS + MESSAGE_OVERHEAD_TOKENS,
  };
}

/** The name of a tool call of either shape. */
export function toolNameOf(call: { type: string } & Record<string, unknown>): string {
  const body = (call.type === 'custom' ? call.custom : call.function) as { name?: unknown } | undefined;
  return typeof body?.name === 'string' ? body.name : 'tool';
}

/**
 * The plain-text rendering of a message: its text parts as they are, a refusal as `[refusal] …`,
 * media as a marker (`[image: https://…]`, `[image: image/png, base64]`, `[audio: wav]`,
 * `[file: report.pdf]`, never base64), then each tool call as `{"name": …, "arguments": …}` (the
 * rendering compactor gives Anthropic `tool_use` blocks, so summaries read both alike).
 */
export function chatText(m: ChatMessage): string {
  const lines = partsOf(m).map(partText);
  if (m.role === 'assistant') {
    if (typeof m.refusal === 'string' && m.refusal !== '') lines.push(`[refusal] ${m.refusal}`);
    for (const call of m.tool_calls ?? []) {
      const body = call.type === 'custom' ? call.custom.input : call.function.arguments;
      lines.push(JSON.stringify({ name: toolNameOf(call), arguments: parsedOrText(body) }));
    }
  }
  return lines.join('\n');
}

function partsOf(m: ChatMessage): Part[] {
  const content = (m as { content?: unknown }).content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Part[]) : [];
}

function partText(part: Part): string {
  switch (part.type) {
    case 'text':
      return String(part.text);
    case 'refusal':
      return `[refusal] ${String(part.refusal)}`;
    case 'image_url': {
      const url = String((part.image_url as { url?: unknown }).url ?? '');
      const data = /^data:([^;,]+)[;,]/.exec(url);
      return data ? `[image: ${data[1]}, base64]` : `[image: ${url.slice(0, 200)}]`;
    }
    case 'input_audio':
      return `[audio: ${String((part.input_audio as { format?: unknown }).format)}]`;
    case 'file': {
      const f = part.file as { filename?: unknown; file_id?: unknown };
      return `[file: ${String(f.filename ?? f.file_id ?? 'inline')}]`;
    }
    default:
      return `[${part.type}]`;
  }
}

function parsedOrText(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}
