/**
 * Rows of the `ai-sdk` format for the tests every format passes (`FormatExamples`, ../format.ts),
 * each an AI SDK prompt message (its bytes `{ $bytes }`, ./encoding.ts) as the format stores it. Plain data.
 */
import type { FormatExamples } from '../format.ts';

export const examples: FormatExamples = {
  toolResult: {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_1',
        toolName: 'bash',
        output: { type: 'text', value: 'x'.repeat(400) },
      },
    ],
  },
  image: (png) => ({
    role: 'user',
    content: [
      { type: 'text', text: 'see this' },
      { type: 'file', mediaType: 'image/png', data: { $bytes: png } },
    ],
  }),
};
