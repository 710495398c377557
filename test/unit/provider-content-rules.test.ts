/**
 * What each session format refuses because its provider would refuse it when the stored message is
 * sent back: each case names the field that is wrong, and what the provider takes (unknown block
 * types, an empty tool result, every supported media type) passes.
 */
import { describe, expect, it } from 'vitest';
import {
  ANTHROPIC_IMAGE_MEDIA_TYPES,
  anthropicContentProblem,
} from '../../shared/formats/anthropic/content-rules.ts';
import { chatMessageProblem } from '../../shared/formats/openai-chat/message.ts';
import { OPENAI_IMAGE_MEDIA_TYPES } from '../../shared/formats/openai-media.ts';
import { responsesItemProblem } from '../../shared/formats/openai-responses/item.ts';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const png = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } };
const toolResult = (content: unknown) => ({ type: 'tool_result', tool_use_id: 'toolu_1', content });
const field = (problem: { field: string } | null) => problem?.field ?? null;

describe('anthropic content', () => {
  it('takes what the Messages API takes: tool results as a string, blocks, empty or absent; every image type; unknown block types', () => {
    const user = [
      toolResult('ok'),
      toolResult([{ type: 'text', text: 'see' }, png]),
      toolResult([]),
      { type: 'tool_result', tool_use_id: 'toolu_2' },
      ...ANTHROPIC_IMAGE_MEDIA_TYPES.map((media_type) => ({ ...png, source: { ...png.source, media_type } })),
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } },
      { type: 'a_block_type_of_next_year', anything: [1, 2] },
    ];
    expect(anthropicContentProblem('user', user, 'messages[0]')).toBeNull();
    const assistant = [
      { type: 'thinking', thinking: '', signature: 'EuYB' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Reading', citations: [{ type: 'char_location' }] },
      { type: 'tool_use', id: 'toolu_1', name: 'read', input: {} },
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
    ];
    expect(anthropicContentProblem('assistant', assistant, 'messages[1]')).toBeNull();
    expect(anthropicContentProblem('system', [{ type: 'text', text: 'be brief' }], 'messages[2]')).toBeNull();
    expect(anthropicContentProblem('user', 'plain text', 'messages[3]')).toBeNull();
  });

  it('refuses a tool result whose content is no string or list of blocks, naming the field', () => {
    for (const content of [5, null, { text: 'x' }, true]) {
      expect(anthropicContentProblem('user', [toolResult(content)], 'messages[0]')).toEqual({
        field: 'messages[0].content[0].content',
        message: expect.stringMatching(
          /^expected a string or a list of text, image, document or search_result blocks/,
        ),
      });
    }
    expect(field(anthropicContentProblem('user', [toolResult(['text'])], 'messages[0]'))).toBe(
      'messages[0].content[0].content[0]',
    );
    const nested = [
      { type: 'text', text: 'a' },
      { type: 'tool_use', id: 't', name: 'n', input: {} },
    ];
    expect(anthropicContentProblem('user', [toolResult(nested)], 'messages[4]')).toEqual({
      field: 'messages[4].content[0].content[1].type',
      message: expect.stringContaining('not a "tool_use" block'),
    });
    expect(
      field(anthropicContentProblem('user', [{ type: 'tool_result', content: 'x' }], 'messages[0]')),
    ).toBe('messages[0].content[0].tool_use_id');
  });

  it('refuses images and documents of a media type the API does not take, inside tool results too', () => {
    const html = { ...png, source: { ...png.source, media_type: 'text/html' } };
    expect(anthropicContentProblem('user', [{ type: 'text', text: 'a' }, html], 'messages[0]')).toEqual({
      field: 'messages[0].content[1].source.media_type',
      message: expect.stringContaining('expected one of image/jpeg, image/png, image/gif, image/webp'),
    });
    expect(field(anthropicContentProblem('user', [toolResult([html])], 'messages[0]'))).toBe(
      'messages[0].content[0].content[0].source.media_type',
    );
    const notPdf = { type: 'document', source: { type: 'base64', media_type: 'image/png', data: PNG } };
    expect(field(anthropicContentProblem('user', [notPdf], 'messages[0]'))).toBe(
      'messages[0].content[0].source.media_type',
    );
    expect(field(anthropicContentProblem('user', [{ type: 'image' }], 'messages[0]'))).toBe(
      'messages[0].content[0].source',
    );
    expect(field(anthropicContentProblem('user', [{ type: 'image', source: { type: 'url' } }], 'm'))).toBe(
      'm.content[0].source.url',
    );
  });

  it('refuses blocks in a role that may not hold them', () => {
    const signed = { type: 'thinking', thinking: 'plan', signature: 'EuYB' };
    expect(anthropicContentProblem('user', [{ type: 'text', text: 'a' }, signed], 'messages[0]')).toEqual({
      field: 'messages[0].content[1].type',
      message: expect.stringContaining('a thinking block belongs in an assistant message'),
    });
    const cases: Array<[string, Record<string, unknown>]> = [
      ['user', { type: 'redacted_thinking', data: 'x' }],
      ['user', { type: 'tool_use', id: 't', name: 'n', input: {} }],
      ['assistant', toolResult('x')],
      ['system', toolResult('x')],
      ['system', png],
      ['assistant', { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }],
    ];
    for (const [role, block] of cases) {
      expect(field(anthropicContentProblem(role, [block], 'messages[0]'))).toBe(
        'messages[0].content[0].type',
      );
    }
    const cited = { type: 'text', text: 'a', citations: [{ type: 'char_location', cited_text: 'a' }] };
    expect(field(anthropicContentProblem('user', [cited], 'messages[0]'))).toBe(
      'messages[0].content[0].citations',
    );
  });

  it('refuses known blocks without their required fields', () => {
    expect(field(anthropicContentProblem('user', [{ type: 'text', text: 5 }], 'm'))).toBe(
      'm.content[0].text',
    );
    const call = { type: 'tool_use', id: 'toolu_1', name: 'read', input: '{"path":"a"}' };
    expect(anthropicContentProblem('assistant', [call], 'm')).toEqual({
      field: 'm.content[0].input',
      message: 'expected an object (the tool\'s arguments), got "{\\"path\\":\\"a\\"}"',
    });
    expect(field(anthropicContentProblem('assistant', [{ ...call, input: {}, name: '' }], 'm'))).toBe(
      'm.content[0].name',
    );
  });
});

describe('openai-chat messages', () => {
  const image = (url: string) => ({ role: 'user', content: [{ type: 'image_url', image_url: { url } }] });

  it('takes every image type the API takes, by URL or data URL', () => {
    for (const type of OPENAI_IMAGE_MEDIA_TYPES) {
      expect(chatMessageProblem(image(`data:${type};base64,${PNG}`), 'messages[0]')).toBeNull();
    }
    expect(chatMessageProblem(image('https://example.com/a.png'), 'messages[0]')).toBeNull();
  });

  it('refuses an image data URL of another media type, another URL scheme, and a file part with no file', () => {
    expect(chatMessageProblem(image('data:text/html;base64,PGI+'), 'messages[0]')).toEqual({
      field: 'messages[0].content[0].image_url.url',
      message: expect.stringContaining('a data URL of "text/html" is no image OpenAI takes'),
    });
    expect(field(chatMessageProblem(image('file:///etc/passwd'), 'messages[0]'))).toBe(
      'messages[0].content[0].image_url.url',
    );
    const noFile = { role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf' } }] };
    expect(chatMessageProblem(noFile, 'messages[2]')).toEqual({
      field: 'messages[2].content[0].file',
      message: expect.stringContaining('needs file_id'),
    });
  });

  it('refuses media in a tool message (text only) and an empty tool message content list', () => {
    const tool = {
      role: 'tool',
      tool_call_id: 'call_1',
      content: [{ type: 'image_url', image_url: { url: 'x' } }],
    };
    expect(field(chatMessageProblem(tool, 'messages[0]'))).toMatch(/^messages\[0\]\.content/);
    expect(
      field(chatMessageProblem({ role: 'tool', tool_call_id: 'call_1', content: [] }, 'messages[0]')),
    ).toBe('messages[0].content');
  });
});

describe('openai-responses items', () => {
  const output = (parts: unknown) => ({ type: 'function_call_output', call_id: 'call_1', output: parts });

  it('holds a call output to the rules of message parts', () => {
    expect(responsesItemProblem(output('done'), 'messages[0]')).toBeNull();
    expect(
      responsesItemProblem(
        output([{ type: 'input_image', image_url: `data:image/webp;base64,${PNG}` }]),
        'm',
      ),
    ).toBeNull();
    expect(responsesItemProblem(output([{ type: 'input_text', text: 5 }]), 'messages[0]')?.field).toBe(
      'messages[0].output[0].text',
    );
    expect(
      responsesItemProblem(
        output([{ type: 'input_image', image_url: 'data:text/html;base64,PGI+' }]),
        'messages[0]',
      )?.field,
    ).toBe('messages[0].output[0].image_url');
  });

  it('refuses an image data URL of another type and an input_file with no file', () => {
    const message = (part: unknown) => ({ role: 'user', content: [part] });
    expect(
      responsesItemProblem(
        message({ type: 'input_image', image_url: 'data:application/pdf;base64,JVBE' }),
        'm',
      ),
    ).toEqual({ field: 'm.content[0].image_url', message: expect.stringContaining('"application/pdf"') });
    expect(responsesItemProblem(message({ type: 'input_file', filename: 'a.pdf' }), 'm')).toEqual({
      field: 'm.content[0]',
      message: expect.stringContaining('needs file_id'),
    });
    expect(responsesItemProblem(message({ type: 'input_file', file_id: 'file-1' }), 'm')).toBeNull();
  });
});
