/**
 * Rows of the `openai-chat` format for the tests every format passes (`FormatExamples`, ../format.ts),
 * each a Chat Completions message as the format stores it. Plain data.
 */
import type { FormatExamples } from '../format.ts';

export const examples: FormatExamples = {
  toolResult: { role: 'tool', tool_call_id: 'call_1', content: 'x'.repeat(400) },
  image: (png) => ({
    role: 'user',
    content: [
      { type: 'text', text: 'see this' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
    ],
  }),
};
