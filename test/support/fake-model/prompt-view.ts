/**
 * What the fake model reads in a summary request: the blocks of compactor's summary prompt
 * (`<previous_checkpoint>`, `<working_set>`, `<user_messages>`, `<transcript>`), unescaped, and the
 * token target the closing line states. It reads only the request's text, as a model would: nothing
 * here knows how compactor built it. Pure.
 */

/** One `<message>` element of `<transcript>`. */
export interface TranscriptMessage {
  /** Position in the transcript, from 0 (several parts of one stored message share a seq). */
  index: number;
  seq: number;
  role: string;
  /** `message`, `tool_call` or `tool_result`. */
  kind: string;
  /** The `tool=` attribute, or null. */
  tool: string | null;
  /** The `call_id=` attribute, or null. */
  callId: string | null;
  content: string;
}

/** One `<user_message>` element of `<user_messages>`. */
export interface WrittenUserMessage {
  seq: number;
  /** `request` or `answer`. */
  kind: string;
  content: string;
}

/** The request as the fake model sees it. */
export interface PromptView {
  /** The previous checkpoint's JSON, `{}` when the prompt has none (or it does not parse). */
  previous: Record<string, unknown>;
  /** `<working_set>` paths, most recent first; the `... and N more` line left out. */
  workingSet: string[];
  /** `<user_messages>` elements in order; null when the prompt has no such block. */
  userMessages: WrittenUserMessage[] | null;
  /** `<transcript>` messages in order. */
  transcript: TranscriptMessage[];
  /** "the checkpoint under about N tokens", or null when the prompt states no target. */
  targetTokens: number | null;
}

/** Reads the blocks of a summary request's user turn. Text that is not such a prompt gives empty blocks. */
export function readPrompt(text: string): PromptView {
  const stated = /the checkpoint under about (\d+) tokens/.exec(text)?.[1];
  return {
    previous: previousCheckpoint(text),
    workingSet: workingSetPaths(text),
    userMessages: userMessages(text),
    transcript: transcriptMessages(text),
    targetTokens: stated ? Number(stated) : null,
  };
}

function transcriptMessages(text: string): TranscriptMessage[] {
  const block = /<transcript[^>]*>\n([\s\S]*)\n<\/transcript>/.exec(text)?.[1] ?? '';
  return [...block.matchAll(/<message ([^>]*)>\n([\s\S]*?)\n<\/message>/g)].map((m, index) => {
    const attrs = Object.fromEntries(
      [...(m[1] ?? '').matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1], unescapeEntities(a[2] ?? '')]),
    );
    return {
      index,
      seq: Number(attrs.seq),
      role: attrs.role ?? '',
      kind: attrs.kind ?? 'message',
      tool: attrs.tool ?? null,
      callId: attrs.call_id ?? null,
      content: unescapeEntities(m[2] ?? ''),
    };
  });
}

function userMessages(text: string): WrittenUserMessage[] | null {
  const block = /<user_messages[^>]*>\n([\s\S]*?)\n<\/user_messages>/.exec(text);
  if (!block) return null;
  return [
    ...(block[1] ?? '').matchAll(
      /<user_message seq="(\d+)"(?: kind="(\w+)")?[^>]*>\n([\s\S]*?)\n<\/user_message>/g,
    ),
  ].map((m) => ({ seq: Number(m[1]), kind: m[2] ?? 'request', content: unescapeEntities(m[3] ?? '') }));
}

function previousCheckpoint(text: string): Record<string, unknown> {
  const match = /<previous_checkpoint>\n([\s\S]*?)\n<\/previous_checkpoint>/.exec(text);
  if (!match) return {};
  try {
    const parsed: unknown = JSON.parse(unescapeEntities(match[1] ?? ''));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function workingSetPaths(text: string): string[] {
  const match = /<working_set[^>]*>\n([\s\S]*?)\n<\/working_set>/.exec(text);
  if (!match) return [];
  return unescapeEntities(match[1] ?? '')
    .split('\n')
    .map((line) => line.replace(/^\s*(?:[-*]|\d+\.)\s+/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('...') && !line.startsWith('(no file'))
    .map((line) => line.slice(0, 300));
}

/** `&lt;` `&gt;` `&quot;` `&amp;` back to `<` `>` `"` `&`, as the prompt says to read them. */
export function unescapeEntities(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}
