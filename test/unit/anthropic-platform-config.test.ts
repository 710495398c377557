/**
 * Which platform the anthropic summarizers reach Claude on (`COMPACTOR_ANTHROPIC_PLATFORM`), and the
 * platform's settings refused with a message naming the variable to set or unset.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../worker/config/config.ts';

const BEDROCK = {
  COMPACTOR_ANTHROPIC_PLATFORM: 'bedrock',
  COMPACTOR_MODEL: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
  AWS_REGION: 'us-east-1',
};
const VERTEX = {
  COMPACTOR_ANTHROPIC_PLATFORM: 'vertex',
  COMPACTOR_MODEL: 'claude-haiku-4-5@20251001',
  CLOUD_ML_REGION: 'global',
  ANTHROPIC_VERTEX_PROJECT_ID: 'my-project-1',
};

describe('COMPACTOR_ANTHROPIC_PLATFORM', () => {
  it("defaults to Anthropic's own API", () => {
    expect(loadConfig({}).anthropicPlatform).toEqual({ platform: 'anthropic' });
  });

  it("reads Bedrock's region and endpoint, leaving credentials to the AWS SDK", () => {
    const config = loadConfig({ ...BEDROCK, ANTHROPIC_BEDROCK_BASE_URL: 'http://127.0.0.1:9000' });
    expect(config.anthropicPlatform).toEqual({
      platform: 'bedrock',
      region: 'us-east-1',
      baseURL: 'http://127.0.0.1:9000',
    });
    expect(config.model).toBe('us.anthropic.claude-haiku-4-5-20251001-v1:0');
  });

  it("reads Vertex AI's region, project and access token", () => {
    expect(loadConfig({ ...VERTEX, COMPACTOR_VERTEX_ACCESS_TOKEN: 'ya29.x' }).anthropicPlatform).toEqual({
      platform: 'vertex',
      region: 'global',
      projectId: 'my-project-1',
      accessToken: 'ya29.x',
      baseURL: undefined,
    });
  });

  it('refuses another platform, naming the choices', () => {
    expect(() => loadConfig({ COMPACTOR_ANTHROPIC_PLATFORM: 'azure' })).toThrow(
      /COMPACTOR_ANTHROPIC_PLATFORM: must be anthropic, bedrock, vertex/,
    );
  });

  it('names the setting a platform is missing', () => {
    const without = (env: Record<string, string>, name: string) => {
      const { [name]: _left, ...rest } = env;
      return () => loadConfig(rest);
    };
    expect(without(BEDROCK, 'AWS_REGION')).toThrow(ConfigError);
    expect(without(BEDROCK, 'AWS_REGION')).toThrow(/COMPACTOR_ANTHROPIC_PLATFORM is bedrock: set AWS_REGION/);
    expect(without(VERTEX, 'CLOUD_ML_REGION')).toThrow(/is vertex: set CLOUD_ML_REGION/);
    expect(without(VERTEX, 'ANTHROPIC_VERTEX_PROJECT_ID')).toThrow(
      /is vertex: set ANTHROPIC_VERTEX_PROJECT_ID/,
    );
    // The default model is Anthropic's id, which neither platform serves.
    expect(without(BEDROCK, 'COMPACTOR_MODEL')).toThrow(
      /is bedrock: set COMPACTOR_MODEL to the platform's model id \(e\.g\. anthropic\.claude-/,
    );
    expect(without(VERTEX, 'COMPACTOR_MODEL')).toThrow(/is vertex: set COMPACTOR_MODEL .*@/);
  });

  it('refuses an Anthropic key on a cloud platform, and malformed regions or projects', () => {
    expect(() => loadConfig({ ...BEDROCK, ANTHROPIC_API_KEY: 'sk-ant-x' })).toThrow(
      /is bedrock: unset ANTHROPIC_API_KEY/,
    );
    expect(() => loadConfig({ ...BEDROCK, AWS_REGION: 'Frankfurt' })).toThrow(
      /AWS_REGION: must be an AWS region such as us-east-1/,
    );
    expect(() => loadConfig({ ...VERTEX, ANTHROPIC_VERTEX_PROJECT_ID: 'x' })).toThrow(
      /ANTHROPIC_VERTEX_PROJECT_ID: must be a Google Cloud project id/,
    );
  });
});
