/**
 * The attribute names of compactor's spans (worker/observability/tracing-names.ts) against the
 * OpenTelemetry semantic conventions as `@opentelemetry/semantic-conventions` exports them: a name
 * compactor copied wrong, or one a later convention renamed, fails here rather than in a backend
 * that no longer recognises it.
 */
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
} from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import { COMPACTOR, GEN_AI } from '../../worker/observability/tracing-names.ts';
import { messagesCall } from '../../worker/summarizers/anthropic-calls.ts';

describe('span attribute names', () => {
  it('are the semantic conventions names', () => {
    expect(GEN_AI).toEqual({
      OPERATION_NAME: ATTR_GEN_AI_OPERATION_NAME,
      PROVIDER_NAME: ATTR_GEN_AI_PROVIDER_NAME,
      CONVERSATION_ID: ATTR_GEN_AI_CONVERSATION_ID,
      REQUEST_MODEL: ATTR_GEN_AI_REQUEST_MODEL,
      REQUEST_MAX_TOKENS: ATTR_GEN_AI_REQUEST_MAX_TOKENS,
      RESPONSE_MODEL: ATTR_GEN_AI_RESPONSE_MODEL,
      RESPONSE_ID: ATTR_GEN_AI_RESPONSE_ID,
      RESPONSE_FINISH_REASONS: ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
      USAGE_INPUT_TOKENS: ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      USAGE_OUTPUT_TOKENS: ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      USAGE_CACHE_READ_INPUT_TOKENS: ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
      USAGE_CACHE_CREATION_INPUT_TOKENS: ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
      SERVER_ADDRESS: ATTR_SERVER_ADDRESS,
      SERVER_PORT: ATTR_SERVER_PORT,
      ERROR_TYPE: ATTR_ERROR_TYPE,
    });
  });

  it("name the Anthropic summarizers' calls with the conventions' well-known values", () => {
    const call = messagesCall(
      'anthropic',
      { tenantId: 't', sessionId: 's' },
      { model: 'm', max_tokens: 1 },
      'https://a.test',
    );
    expect(call).toMatchObject({
      provider: GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
      operation: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    });
  });

  it("keep compactor's own in its namespace", () => {
    for (const name of Object.values(COMPACTOR)) expect(name).toMatch(/^compactor\.[a-z_.]+$/);
  });
});
