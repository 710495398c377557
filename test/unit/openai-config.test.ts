/**
 * Which summarizer an environment picks (`COMPACTOR_SUMMARIZER`, else the API keys set), the
 * `openai` summarizer's settings, and the summarizers a strategy may then name; bad settings
 * refused with a message naming the variable.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_OPENAI_MODEL, loadConfig } from '../../worker/config/config.ts';
import { batchesFor, summarizerFor, summarizersFor } from '../../worker/summarizers/index.ts';

describe('COMPACTOR_SUMMARIZER and the OpenAI settings', () => {
  it('picks anthropic with an Anthropic key, openai with only an OpenAI key, extractive with neither', () => {
    expect(loadConfig({}).summarizer).toBe('extractive');
    expect(loadConfig({ ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o' }).summarizer).toBe('anthropic');
    const config = loadConfig({ OPENAI_API_KEY: 'o' });
    expect(config.summarizer).toBe('openai');
    expect(config.openai).toEqual({
      apiKey: 'o',
      baseURL: undefined,
      model: DEFAULT_OPENAI_MODEL,
      structuredOutputs: 'auto',
      providerName: 'openai',
    });
  });

  it('takes the summarizer and the server it is told', () => {
    const config = loadConfig({
      ANTHROPIC_API_KEY: 'a',
      OPENAI_API_KEY: 'unused-by-vllm',
      COMPACTOR_SUMMARIZER: 'openai',
      OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1',
      COMPACTOR_OPENAI_MODEL: 'Qwen/Qwen3-8B',
      COMPACTOR_OPENAI_STRUCTURED_OUTPUTS: 'tool',
      COMPACTOR_OPENAI_PROVIDER_NAME: 'azure.ai.openai',
    });
    expect(config.summarizer).toBe('openai');
    expect(config.openai).toMatchObject({
      baseURL: 'http://127.0.0.1:8000/v1',
      model: 'Qwen/Qwen3-8B',
      structuredOutputs: 'tool',
      providerName: 'azure.ai.openai',
    });
    expect(summarizerFor(config).name).toBe('openai');
    expect(Object.keys(summarizersFor(config)).sort()).toEqual([
      'anthropic',
      'anthropic-compaction',
      'extractive',
      'openai',
      'openai-compaction',
    ]);
    // Anthropic's batches are not the openai summarizer's to send.
    expect(batchesFor(config)).toBeNull();
    expect(
      summarizerFor(loadConfig({ ANTHROPIC_API_KEY: 'a', COMPACTOR_SUMMARIZER: 'extractive' })).name,
    ).toBe('extractive');
  });

  it.each<[string, NodeJS.ProcessEnv, RegExp]>([
    [
      'openai without its key',
      { COMPACTOR_SUMMARIZER: 'openai' },
      /COMPACTOR_SUMMARIZER is openai and OPENAI_API_KEY is unset/,
    ],
    ['anthropic without its key', { COMPACTOR_SUMMARIZER: 'anthropic' }, /ANTHROPIC_API_KEY is unset/],
    [
      'another summarizer',
      { COMPACTOR_SUMMARIZER: 'gemini' },
      /COMPACTOR_SUMMARIZER: must be extractive, anthropic, openai/,
    ],
    [
      'another answer form',
      { COMPACTOR_OPENAI_STRUCTURED_OUTPUTS: 'grammar' },
      /COMPACTOR_OPENAI_STRUCTURED_OUTPUTS: must be auto, json_schema, tool/,
    ],
    ['a base URL that is not one', { OPENAI_BASE_URL: 'localhost:11434' }, /OPENAI_BASE_URL/],
    [
      'a provider name with spaces',
      { COMPACTOR_OPENAI_PROVIDER_NAME: 'Azure OpenAI' },
      /COMPACTOR_OPENAI_PROVIDER_NAME: must be lower-case words/,
    ],
  ])('refuses %s, naming the variable', (_name, env, pattern) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(pattern);
  });
});
