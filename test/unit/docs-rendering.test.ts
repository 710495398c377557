/**
 * How the generated reference pages read once built: wrapped help text joined into paragraphs
 * (lists kept as lists), code spans shown as written, and the check `npm run docs:build` runs on
 * the built HTML (scripts/docs/check-rendering.ts), failing on a paragraph cut mid-sentence and on
 * an entity shown inside code.
 */
import { describe, expect, it } from 'vitest';
import { renderingFaults, visibleText } from '../../scripts/docs/check-rendering.ts';
import { cliReferencePage } from '../../scripts/docs/cli-page.ts';
import { httpApiReferencePage } from '../../scripts/docs/http-api-page.ts';
import { cell, codeSpans, prose, sentence, wrappedProse } from '../../scripts/docs/markdown.ts';

/** A built page as VitePress writes it: navigation outside `<main>`, the page's content inside. */
const builtPage = (content: string) =>
  `<html><body><nav><p>Appearance</p></nav><main class="main"><div class="vp-doc">${content}</div></main>` +
  '<footer><p>Pager</p></footer></body></html>';

describe('the rendering check', () => {
  it('passes a page whose paragraphs end as sentences and whose code shows its characters', () => {
    const html = builtPage(
      '<p>Send a key as <code>Authorization: Bearer &lt;key&gt;</code> to the API.</p>' +
        '<p>Scopes:</p><ul><li><code>admin</code>: issue keys</li></ul>' +
        '<p><strong>Create a session</strong> (<code>createSession</code>).</p>' +
        '<p>It ends (as a sentence does.)</p>' +
        '<pre><code><span>compactor import &lt;file-or-dir&gt;...</span></code></pre>',
    );
    expect(renderingFaults(html, { prose: true })).toEqual([]);
  });

  it('fails on a paragraph cut mid-sentence, naming its text', () => {
    const html = builtPage(
      '<p>Migrates, imports every transcript in dir under a new</p><p>tenant, starts a worker.</p>',
    );
    expect(renderingFaults(html, { prose: true })).toEqual([
      { kind: 'paragraph cut mid-sentence', text: 'Migrates, imports every transcript in dir under a new' },
    ]);
  });

  it('fails on an entity a reader sees inside code, inline or in a block', () => {
    const inline = builtPage('<p>Send <code>Authorization: Bearer &amp;lt;key&amp;gt;</code>.</p>');
    expect(renderingFaults(inline, { prose: true })).toEqual([
      { kind: 'entity shown in code', text: 'Authorization: Bearer &lt;key&gt;' },
    ]);
    const block = builtPage('<pre><code><span>echo &amp;#123;x&amp;#125;</span></code></pre>');
    expect(renderingFaults(block, { prose: false })).toHaveLength(1);
  });

  it('checks paragraphs only where asked, and only the content of the page', () => {
    const cut = builtPage('<p>a paragraph that stops</p>');
    expect(renderingFaults(cut, { prose: false })).toEqual([]);
    expect(renderingFaults(builtPage('<p>Done.</p>'), { prose: true })).toEqual([]);
  });

  it('reads text as the browser shows it', () => {
    expect(visibleText('<code>a &lt;b&gt; &amp;lt; &#123;&#x7d;</code>')).toBe('a <b> &lt; {}');
  });
});

describe('the generated Markdown', () => {
  it('joins lines wrapped for a terminal into paragraphs that end as sentences', () => {
    const blocks = wrappedProse([
      'Migrates, imports every transcript under a new',
      'tenant, then checks that nothing was',
      'lost. Safe to run again.',
      'Without DATABASE_URL it starts an',
      'embedded PostgreSQL.',
      '--instructions tells the summarizer what',
      'to keep.',
    ]);
    expect(blocks).toEqual([
      'Migrates, imports every transcript under a new tenant, then checks that nothing was lost. Safe to run again.',
      'Without DATABASE\\_URL it starts an embedded PostgreSQL.',
      '--instructions tells the summarizer what to keep.',
    ]);
  });

  it('keeps indented lines as a list, term and meaning apart', () => {
    expect(
      wrappedProse([
        'Scopes:',
        '  context:read      read a session <context>',
        '  admin             issue keys',
        'A tenant key cannot hold admin.',
        '',
        'Nor can it act on another tenant.',
      ]),
    ).toEqual([
      'Scopes:',
      '- `context:read`: read a session &lt;context&gt;\n- `admin`: issue keys',
      'A tenant key cannot hold admin.',
      'Nor can it act on another tenant.',
    ]);
  });

  it('escapes prose but leaves code spans as written, but for Vue’s {{', () => {
    expect(prose('Send `Authorization: Bearer <key>` to <api> with *_x_*')).toBe(
      'Send `Authorization: Bearer <key>` to &lt;api&gt; with \\*\\_x\\_\\*',
    );
    expect(prose('``a ` b`` and `{{x}}`')).toBe('``a ` b`` and `{\u200b{x}}`');
    expect(prose('an open ` backtick <b>')).toBe('an open ` backtick &lt;b&gt;');
    expect(cell('`a|b` <c>')).toBe('`a\\|b` &lt;c&gt;');
    expect(codeSpans('x `y` z')).toEqual([
      { code: false, text: 'x ' },
      { code: true, text: '`y`' },
      { code: false, text: ' z' },
    ]);
  });

  it('makes a summary line a sentence', () => {
    expect(sentence('print the table')).toBe('Print the table.');
    expect(sentence('undo it: now')).toBe('Undo it: now.');
    expect(sentence('Done.')).toBe('Done.');
  });

  it('shows no escaped entity inside a code span of the reference pages', () => {
    for (const page of [cliReferencePage(), httpApiReferencePage()]) {
      const spans = page.split('\n').flatMap((line) => codeSpans(line).filter((p) => p.code));
      expect(spans.filter((s) => /&(lt|gt|amp|#\d+);/.test(s.text))).toEqual([]);
    }
  });
});
