/**
 * The docs site (VitePress). `npm run docs:build` generates the reference pages and builds the site
 * into docs/.vitepress/dist; a link to a page that does not exist fails the build. Nothing here
 * loads from the network: the search index is built locally (minisearch) and no web font is used.
 */
import { existsSync, readFileSync } from 'node:fs';
import { type DefaultTheme, defineConfig } from 'vitepress';

/** TypeDoc's sidebar of the TypeScript API pages (written by `npm run docs:generate`). */
function typescriptSidebar(): DefaultTheme.SidebarItem[] {
  const file = new URL('../reference/typescript/typedoc-sidebar.json', import.meta.url);
  if (!existsSync(file)) return [];
  return JSON.parse(readFileSync(file, 'utf8')) as DefaultTheme.SidebarItem[];
}

const guide: DefaultTheme.SidebarItem[] = [
  { text: 'Install in your service', link: '/guide/install' },
  { text: 'Integrate an agent', link: '/guide/integrate' },
  { text: 'Agents on OpenAI Chat Completions', link: '/guide/openai-chat' },
  { text: 'Recall: what left the context', link: '/guide/recall' },
  { text: 'Agents on the OpenAI Responses API', link: '/guide/openai-responses' },
  { text: 'LangChain.js agents', link: '/guide/langchain' },
  { text: 'Agents on the OpenAI Agents SDK', link: '/guide/openai-agents' },
  { text: 'Agents on the Vercel AI SDK', link: '/guide/ai-sdk' },
  { text: 'Agents on the AI SDK: the ai-sdk format', link: '/guide/ai-sdk-format' },
  { text: 'Mastra agents', link: '/guide/mastra' },
  { text: 'Agents on the Claude Agent SDK', link: '/guide/claude-agent-sdk' },
  { text: 'Events and webhooks', link: '/guide/events' },
  { text: 'The HTTP API', link: '/guide/http-api' },
  { text: 'Policies and strategies', link: '/guide/policies' },
  { text: 'Summarizers', link: '/guide/summarizers' },
  { text: 'Operate', link: '/guide/operate' },
  { text: 'The compactor command', link: '/guide/commands' },
  { text: 'Security: tenants, keys, limits', link: '/guide/security' },
  { text: 'Scale out', link: '/guide/scale-out' },
  { text: 'Postgres by tenant', link: '/guide/distributed-postgres' },
];

const reference: DefaultTheme.SidebarItem[] = [
  { text: 'CLI', link: '/reference/cli' },
  { text: 'Configuration', link: '/reference/configuration' },
  { text: 'HTTP API', link: '/reference/http-api' },
  { text: 'TypeScript API', link: '/reference/typescript/', collapsed: true, items: typescriptSidebar() },
];

const internals: DefaultTheme.SidebarItem[] = [
  { text: 'Architecture', link: '/architecture' },
  { text: 'Development', link: '/development' },
  { text: 'Changelog', link: '/changelog' },
];

export default defineConfig({
  title: 'compactor',
  description: 'Keeps AI-agent sessions small without losing a message',
  lang: 'en',
  cleanUrls: true,
  lastUpdated: false,
  // Dead links fail the build (VitePress's default, stated here so nobody turns it off by accident).
  ignoreDeadLinks: false,
  markdown: { theme: { light: 'github-light', dark: 'github-dark' } },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/integrate' },
      { text: 'Reference', link: '/reference/cli' },
      { text: 'Changelog', link: '/changelog' },
    ],
    sidebar: [
      { text: 'Guide', items: guide },
      { text: 'Reference', items: reference },
      { text: 'Internals', items: internals },
    ],
    search: { provider: 'local' },
    outline: { level: [2, 3] },
  },
});
