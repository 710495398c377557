/**
 * Rows of the `anthropic` format for the tests every format passes (`FormatExamples`, ../format.ts),
 * each a Messages API content list as the format stores it. Plain data.
 */
import type { FormatExamples } from '../format.ts';

export const examples: FormatExamples = {
  toolResult: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'x'.repeat(400) }],
  image: (png) => [
    { type: 'text', text: 'see this' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
  ],
};
