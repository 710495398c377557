/**
 * A summarizer's CPU work that waits for nothing but the answer (the guard's reading of the leaving
 * messages) runs while its LLM call is in flight, not after the answer.
 */
import { describe, expect, it } from 'vitest';
import { whileAnswering } from '../../worker/summarizers/llm-calls.ts';

describe('whileAnswering', () => {
  it('runs the work before a slow answer arrives, and returns the answer and the work', async () => {
    let answered = false;
    const reply = new Promise<string>((resolve) =>
      setTimeout(() => {
        answered = true;
        resolve('answer');
      }, 30),
    );
    let answeredWhenWorked: boolean | null = null;
    const result = await whileAnswering(reply, () => {
      answeredWhenWorked = answered;
      return 42;
    });
    expect(result).toEqual(['answer', 42]);
    expect(answeredWhenWorked).toBe(false);
  });

  it("throws the call's failure, one that came while the work ran too", async () => {
    const reply = Promise.reject(new Error('503 from the provider'));
    let worked = false;
    await expect(
      whileAnswering(reply, () => {
        worked = true;
      }),
    ).rejects.toThrow('503 from the provider');
    expect(worked).toBe(true);
  });
});
