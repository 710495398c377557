/**
 * Which prompt messages of a conversation are new: the conversation Mastra holds grows at its end
 * (the user's message, then each step's reply and tool results), so what compactor has not stored
 * yet is what follows the messages it stored. Pure: no I/O.
 */
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { type PromptMessage, promptKey } from './prompt.ts';

/**
 * The messages of `conversation` after the `stored` ones (their {@link promptKey}s, in order).
 * @throws {InvalidInputError} when `conversation` does not start with them: a message already
 *   stored changed or went away (a processor or Mastra rewrote the history after compactor stored
 *   it), so the session would no longer hold what the agent sent; nothing is stored then.
 */
export function newMessages(
  stored: readonly string[],
  conversation: readonly PromptMessage[],
): PromptMessage[] {
  if (conversation.length < stored.length) {
    throw new InvalidInputError(
      `conversation: ${stored.length} messages are stored in compactor, but Mastra now holds ${conversation.length}: messages already stored went away`,
    );
  }
  stored.forEach((key, i) => {
    const message = conversation[i] as PromptMessage;
    if (promptKey(message) !== key) {
      throw new InvalidInputError(
        `conversation[${i}]: this ${message.role} message changed after compactor stored it (${clip(key)} became ${clip(promptKey(message))}); compactor stores a conversation that grows at its end`,
      );
    }
  });
  return conversation.slice(stored.length);
}

function clip(text: string): string {
  return text.length <= 120 ? text : `${text.slice(0, 117)}...`;
}
