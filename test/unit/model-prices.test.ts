/**
 * The operator's price rows (`COMPACTOR_MODEL_PRICES`): read from the environment with errors that
 * name what is wrong, and used for every cost once set, in place of a built-in row of the same model.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/contract/errors.ts';
import { costUsd, extendModelPrices } from '../../shared/summary/pricing.ts';
import { loadConfig } from '../../worker/config/config.ts';

afterEach(() => extendModelPrices({}));

const usage = {
  inputTokens: 1_000_000,
  outputTokens: 100_000,
  cacheReadTokens: 200_000,
  cacheWriteTokens: 0,
};

describe('COMPACTOR_MODEL_PRICES', () => {
  it('prices a model the table lacks, cache rates defaulting to the input rate', () => {
    expect(costUsd('Qwen/Qwen3-8B', usage)).toEqual({ usd: 0, known: false, pricedAs: null });
    const config = loadConfig({ COMPACTOR_MODEL_PRICES: '{"Qwen/Qwen3-8B": {"input": 0.2, "output": 0.6}}' });
    extendModelPrices(config.modelPrices ?? {});
    // 1M input × 0.2 + 0.1M output × 0.6 + 0.2M cache reads × 0.2 (no discount assumed)
    expect(costUsd('qwen/qwen3-8b', usage)).toEqual({ usd: 0.3, known: true, pricedAs: 'qwen/qwen3-8b' });
  });

  it('replaces a built-in row of the same model, matched as built-in ids are', () => {
    const builtIn = costUsd('claude-haiku-4-5', usage).usd;
    extendModelPrices({ 'claude-haiku-4-5': { input: 0.5, output: 2, cacheRead: 0.05, cacheWrite: 0.6 } });
    const priced = costUsd('claude-haiku-4-5-20251001', usage);
    expect(priced.usd).toBe(0.5 + 0.2 + 0.01);
    expect(priced.usd).not.toBe(builtIn);
  });

  it('refuses text that is not JSON, or a row without its output rate, naming the variable and the field', () => {
    expect(() => loadConfig({ COMPACTOR_MODEL_PRICES: 'gpt-x: 1' })).toThrow(ConfigError);
    expect(() => loadConfig({ COMPACTOR_MODEL_PRICES: 'gpt-x: 1' })).toThrow(
      /COMPACTOR_MODEL_PRICES.*JSON object/,
    );
    expect(() => loadConfig({ COMPACTOR_MODEL_PRICES: '{"gpt-x": {"input": 1}}' })).toThrow(
      /COMPACTOR_MODEL_PRICES.*gpt-x\.output/,
    );
    expect(() => loadConfig({ COMPACTOR_MODEL_PRICES: '{"gpt-x": {"input": -1, "output": 1}}' })).toThrow(
      /gpt-x\.input/,
    );
  });
});
