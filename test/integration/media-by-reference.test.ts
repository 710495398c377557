/**
 * Media by reference, on real Postgres: images and documents that leave with a `summarize`
 * compaction are listed in the checkpoint (seq, media type, bytes, tokens, caption) by the
 * extractive summarizer and by the `anthropic` one (against the fake Messages API over HTTP), kept
 * by the next compaction, shown in the summary the agent reads, and read back byte-exact by recall.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { appendMessages, createSession, loadContext, readRecall } from '../../producer/index.ts';
import { OPENAI_IMAGE_TOKENS } from '../../shared/contract/media-refs.ts';
import { imageTokens, pdfPageTokens } from '../../shared/contract/media-tokens.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { type Checkpoint, MEDIA_TITLE, renderMedia } from '../../shared/summary/checkpoint.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { createAnthropicCompactionSummarizer } from '../../worker/summarizers/anthropic-compaction.ts';
import { useIntegration } from '../support/integration.ts';
import { pdfOf, pngOf } from '../support/media.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'media';
const db = () => ctx.tdb.database.db;
const summarize: Strategy = { type: 'summarize', keepRecent: 6, maxSummaryTokens: 2_000 };

const PNG = pngOf(800, 600, 49_000);
const PDF = pdfOf(2);
const IMAGE_SOURCE = {
  type: 'base64' as const,
  media_type: 'image/png' as const,
  data: PNG.toString('base64'),
};
const PDF_SOURCE = {
  type: 'base64' as const,
  media_type: 'application/pdf' as const,
  data: PDF.toString('base64'),
};

const chatter = (n: number, from = 0): MessageParam[] =>
  Array.from({ length: n }, (_, i) => ({
    role: (from + i) % 2 === 0 ? 'user' : 'assistant',
    content: `turn ${from + i}: still tuning the layout of the settings page grid`,
  }));

/** An Anthropic session: a screenshot with its caption (seq 1), a PDF with a title (seq 3), then chatter. */
function anthropicSession(): MessageParam[] {
  return [
    { role: 'user', content: 'The settings page renders its grid wrong on narrow screens. Please fix it.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Here is the broken settings page on a phone.' },
        { type: 'image', source: IMAGE_SOURCE },
      ],
    },
    { role: 'assistant', content: 'I see the grid overflowing. Do you have the design spec?' },
    {
      role: 'user',
      content: [
        { type: 'document', title: 'Settings design spec', source: PDF_SOURCE },
        { type: 'text', text: 'spec' },
      ],
    },
    ...chatter(12),
  ];
}

type Numbered = Parameters<typeof createSession>[1]['messages'];
/** The messages as a new session's, numbered from seq 0 (Anthropic or Chat Completions messages). */
const numbered = (messages: readonly object[]): Numbered =>
  messages.map((message, seq) => ({ message, seq })) as unknown as Numbered;

async function checkpointOf(sessionId: string): Promise<Checkpoint> {
  const [row] = await ctx.tdb.database.sql<{ checkpoint: Checkpoint }[]>`
    select checkpoint from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  if (!row) throw new Error(`no session ${sessionId}`);
  return row.checkpoint;
}

async function summaryText(sessionId: string, format?: 'openai-chat'): Promise<string> {
  const context = await loadContext(db(), { tenantId, sessionId, ...(format ? { format } : {}) });
  return JSON.stringify((context as { messages: unknown[] }).messages[0]);
}

const EXPECTED_IMAGE = {
  seq: 1,
  index: 0,
  kind: 'image',
  mediaType: 'image/png',
  source: 'base64',
  bytes: PNG.length,
  tokens: imageTokens(IMAGE_SOURCE),
  caption: 'Here is the broken settings page on a phone.',
};
const EXPECTED_PDF = {
  seq: 3,
  index: 0,
  kind: 'document',
  mediaType: 'application/pdf',
  source: 'base64',
  bytes: PDF.length,
  tokens: 2 * pdfPageTokens(),
  caption: 'Settings design spec',
};

async function expectListedAndReadable(sessionId: string, messages: MessageParam[]) {
  const checkpoint = await checkpointOf(sessionId);
  expect(checkpoint.media).toEqual([EXPECTED_IMAGE, EXPECTED_PDF]);
  const text = await summaryText(sessionId);
  expect(text).toContain(MEDIA_TITLE);
  expect(text).toContain(renderMedia(EXPECTED_IMAGE as Checkpoint['media'][number]));
  expect(text).toContain('seq 1: image/png, 48 KB, ~');
  expect(text).toContain(`seq 3: application/pdf, ${PDF.length} B, ~7,636 tokens — «Settings design spec»`);
  const read = await readRecall(db(), { tenantId, sessionId, fromSeq: 1, toSeq: 3 });
  for (const m of read.messages)
    expect(JSON.stringify(m.content)).toBe(JSON.stringify(messages[m.seq]?.content));
  const blocks = (read.messages[0]?.content ?? []) as Array<{ type: string; source?: { data: string } }>;
  const image = blocks[1];
  expect(Buffer.from(image?.source?.data ?? '', 'base64').equals(PNG)).toBe(true);
}

describe('media by reference', () => {
  it('extractive: the checkpoint lists the image and the PDF, the summary shows them, recall reads them back', async () => {
    const messages = anthropicSession();
    await createSession(db(), { tenantId, sessionId: 'ext', messages: numbered(messages) });
    const outcome = await ctx.compactInProcess({ tenantId, sessionId: 'ext', strategy: summarize });
    expect(outcome.row).toMatchObject({ status: 'applied', summarizer: 'extractive' });
    await expectListedAndReadable('ext', messages);

    // A second compaction keeps the media that left in the first, and adds the new.
    const shot = pngOf(1024, 768, 2_000);
    const more: MessageParam[] = [
      {
        role: 'user',
        content: [
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: shot.toString('base64') },
          },
        ],
      },
      ...chatter(14, 16),
    ];
    await appendMessages(db(), tenantId, 'ext', more);
    const again = await ctx.compactInProcess({ tenantId, sessionId: 'ext', strategy: summarize });
    expect(again.row?.status).toBe('applied');
    const checkpoint = await checkpointOf('ext');
    expect(checkpoint.media.map((m) => [m.seq, m.mediaType, m.bytes])).toEqual([
      [1, 'image/png', PNG.length],
      [3, 'application/pdf', PDF.length],
      [16, 'image/png', shot.length],
    ]);
    const third = checkpoint.media[2] as Checkpoint['media'][number];
    expect(renderMedia(third)).toBe(
      `seq 16: image/png, 2 KB, ~${imageTokens({ ...IMAGE_SOURCE, data: shot.toString('base64') }).toLocaleString('en-US')} tokens`,
    );
    expect(await summaryText('ext')).toContain(renderMedia(third));
  });

  it('anthropic summarizer: the model never writes the list, yet the checkpoint carries it', async () => {
    const messages = anthropicSession();
    await createSession(db(), { tenantId, sessionId: 'llm', messages: numbered(messages) });
    const primary = createAnthropicSummarizer({
      apiKey: 'sk-ant-test',
      baseURL: ctx.llm.url,
      model: 'claude-haiku-4-5',
    });
    const outcome = await ctx.compactInProcess(
      { tenantId, sessionId: 'llm', strategy: summarize },
      { summarizers: { primary } },
    );
    expect(outcome.row).toMatchObject({ status: 'applied', summarizer: 'anthropic' });
    const request = JSON.stringify(ctx.fake.requests.at(-1)?.body);
    expect(request).not.toContain('"media"');
    expect(request).not.toContain(IMAGE_SOURCE.data.slice(0, 200));
    await expectListedAndReadable('llm', messages);
  });

  it('anthropic-compaction: the opaque block is the summary, the readable checkpoint beside it lists the media', async () => {
    const messages = anthropicSession();
    await createSession(db(), { tenantId, sessionId: 'block', messages: numbered(messages) });
    const named = {
      'anthropic-compaction': createAnthropicCompactionSummarizer({
        apiKey: 'test',
        baseURL: ctx.llm.url,
        model: 'claude-sonnet-4-6',
      }),
    };
    const strategy: Strategy = {
      ...summarize,
      cutAtUserTurn: true,
      summarizer: 'anthropic-compaction',
    } as Strategy;
    const outcome = await ctx.compactInProcess(
      { tenantId, sessionId: 'block', strategy },
      { summarizers: { named } },
    );
    expect(outcome.row).toMatchObject({ status: 'applied', summarizer: 'anthropic-compaction' });
    expect(ctx.fake.compactions.length).toBeGreaterThan(0);
    expect((await checkpointOf('block')).media).toEqual([EXPECTED_IMAGE, EXPECTED_PDF]);
  });

  it('an openai-chat image_url part is listed with its caption and read back exactly', async () => {
    const dataUrl = `data:image/png;base64,${PNG.toString('base64')}`;
    const messages = [
      { role: 'user', content: 'Why does the chart have no legend?' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The dashboard chart, as rendered' },
          { type: 'image_url', image_url: { url: dataUrl } },
        ],
      },
      ...chatter(14, 2),
    ];
    await createSession(db(), {
      tenantId,
      sessionId: 'chat',
      format: 'openai-chat',
      messages: numbered(messages),
    });
    const outcome = await ctx.compactInProcess({ tenantId, sessionId: 'chat', strategy: summarize });
    expect(outcome.row?.status).toBe('applied');
    expect((await checkpointOf('chat')).media).toEqual([
      {
        seq: 1,
        index: 0,
        kind: 'image',
        mediaType: 'image/png',
        source: 'base64',
        bytes: PNG.length,
        tokens: OPENAI_IMAGE_TOKENS,
        caption: 'The dashboard chart, as rendered',
      },
    ]);
    expect(await summaryText('chat', 'openai-chat')).toContain(
      'seq 1: image/png, 48 KB, ~765 tokens — «The dashboard chart, as rendered»',
    );
    const read = await readRecall(db(), { tenantId, sessionId: 'chat', fromSeq: 1, toSeq: 1 });
    expect(read.format).toBe('openai-chat');
    expect(JSON.stringify(read.messages[0]?.content ?? read.messages[0])).toContain(dataUrl);
  });

  it('an ai-sdk file part is listed by the format, with its name as caption, and read back exactly', async () => {
    const bytes = PNG.toString('base64');
    const text = (t: string) => [{ type: 'text', text: t }];
    const messages = [
      { role: 'user', content: text('Why does the chart have no legend?') },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The dashboard chart' },
          { type: 'file', mediaType: 'image/png', filename: 'chart.png', data: { $bytes: bytes } },
        ],
      },
      ...chatter(14, 2).map((m) => ({ role: m.role, content: text(String(m.content)) })),
    ];
    await createSession(db(), {
      tenantId,
      sessionId: 'ai-sdk',
      format: 'ai-sdk',
      messages: numbered(messages),
    });
    const outcome = await ctx.compactInProcess({ tenantId, sessionId: 'ai-sdk', strategy: summarize });
    expect(outcome.row?.status).toBe('applied');
    expect((await checkpointOf('ai-sdk')).media).toEqual([
      {
        seq: 1,
        index: 0,
        kind: 'image',
        mediaType: 'image/png',
        source: 'base64',
        bytes: PNG.length,
        tokens: imageTokens(IMAGE_SOURCE),
        caption: 'chart.png',
      },
    ]);
    const context = await loadContext(db(), { tenantId, sessionId: 'ai-sdk', format: 'ai-sdk' });
    expect(JSON.stringify(context.prompt[0])).toContain('seq 1: image/png, 48 KB, ~');
    const read = await readRecall(db(), { tenantId, sessionId: 'ai-sdk', fromSeq: 1, toSeq: 1 });
    expect(JSON.stringify(read.messages[0]?.content)).toBe(JSON.stringify(messages[1]));
  });
});
