/**
 * Rows of the `openai-responses` format for the tests every format passes (`FormatExamples`, ../format.ts),
 * each a Responses input item as the format stores it. Plain data.
 */
import type { FormatExamples } from '../format.ts';

export const examples: FormatExamples = {
  toolResult: { type: 'function_call_output', call_id: 'call_1', output: 'x'.repeat(400) },
  image: (png) => ({
    type: 'message',
    role: 'user',
    content: [
      { type: 'input_text', text: 'see this' },
      { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' },
    ],
  }),
};
