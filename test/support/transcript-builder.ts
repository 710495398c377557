/**
 * A corpus-format transcript built call by call, for tests of the pure summarizing code: seqs follow
 * the order of the calls, each tool call gets a unique id and its result (unless `null`).
 */
import { legacyToolIds, type Message } from '../../shared/contract/message.ts';

/** Builds a transcript, continuing `start` when given. */
export function transcript(start: Message[] = []) {
  const messages: Message[] = [...start];
  const push = (m: Pick<Message, 'role' | 'kind' | 'content'> & Partial<Message>) => {
    messages.push({
      toolCallId: null,
      toolName: null,
      tokenCount: 1,
      pinned: false,
      seq: messages.length,
      ...legacyToolIds(m.kind, m.toolCallId ?? null),
      ...m,
    });
  };
  let id = 0;
  const t = {
    messages,
    user(content: string) {
      push({ role: 'user', kind: 'message', content });
      return t;
    },
    assistant(content: string) {
      push({ role: 'assistant', kind: 'message', content });
      return t;
    },
    /** A tool call, with its result unless `result` is null. */
    tool(name: string, args: Record<string, unknown>, result: string | null) {
      const callId = `call_${messages.length}_${++id}`;
      push({
        role: 'assistant',
        kind: 'tool_call',
        toolCallId: callId,
        toolName: name,
        content: JSON.stringify({ name, arguments: args }),
      });
      if (result !== null)
        push({ role: 'tool', kind: 'tool_result', toolCallId: callId, toolName: name, content: result });
      return t;
    },
    /** A shell call with mini-swe-agent's `<returncode>`/`<output>` result, unless `output` is null. */
    bash(command: string, output: string | null, code = 0) {
      return t.tool(
        'bash',
        { command },
        output === null ? null : `<returncode>${code}</returncode>\n<output>\n${output}\n</output>`,
      );
    },
  };
  return t;
}
