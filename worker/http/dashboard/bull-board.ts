/**
 * Bull Board on the dashboard: the two queues, a link from each session's job to its session page,
 * and a page template that references no other origin.
 *
 * Bull Board's own template links a Google Fonts stylesheet: every operator's browser would tell a
 * third party when it opens the board, and the board would wait on the internet to render. The
 * adapter renders whatever `index.ejs` its views path holds (`setViewsPath`, part of Bull Board's
 * server adapter interface), so the dashboard gives it a copy of the installed template with the
 * links to other origins taken out; the UI falls back to the system fonts. The copy is derived at
 * start-up rather than kept in the repository because the template names the UI's content-hashed
 * asset files, which change with every Bull Board release.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { QueueAdapterOptions } from '@bull-board/api/typings/app';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Hono } from 'hono';
import { WEBHOOKS_QUEUE } from '../../../shared/contract/webhooks.ts';
import { COMPACTION_QUEUE } from '../../../shared/protocol/events.ts';
import { SWEEP_QUEUE } from '../../queue/sweeps/sweep.ts';

/** A views directory holding Bull Board's page template, and its removal. */
export interface BullBoardViews {
  path: string;
  /** Removes the directory. */
  remove(): Promise<void>;
}

/**
 * Writes the installed Bull Board template, without links to other origins, into a new temporary
 * directory.
 * @throws {Error} when the template still references another origin after the links are removed
 *   (a Bull Board upgrade added one): better to refuse to start than to leak quietly.
 */
export function offlineBullBoardViews(): BullBoardViews {
  // Resolved the way @bull-board/api resolves it, so this is the template it would render.
  const fromApi = createRequire(createRequire(import.meta.url).resolve('@bull-board/api'));
  const ui = path.dirname(fromApi.resolve('@bull-board/ui/package.json'));
  const template = readFileSync(path.join(ui, 'dist', 'index.ejs'), 'utf8');
  const offline = withoutOtherOrigins(template);
  const dir = mkdtempSync(path.join(tmpdir(), 'compactor-bull-board-'));
  writeFileSync(path.join(dir, 'index.ejs'), offline);
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** An absolute or protocol-relative URL in an `href` or `src` attribute. */
const OTHER_ORIGIN = /\b(?:href|src)\s*=\s*["']?(?:[a-z][a-z\d+.-]*:)?\/\//i;

/**
 * `template` without its `<link>` elements to other origins (stylesheets, preconnects).
 * @throws {Error} when anything else in it still points at another origin.
 */
export function withoutOtherOrigins(template: string): string {
  const stripped = template.replace(/[ \t]*<link\b[^>]*>[ \t]*\r?\n?/gi, (link) =>
    OTHER_ORIGIN.test(link) ? '' : link,
  );
  const left = OTHER_ORIGIN.exec(stripped);
  if (left) {
    const at = stripped.slice(left.index, left.index + 120);
    throw new Error(`Bull Board's page template references another origin: ${at}`);
  }
  return stripped;
}

/** What each queue Bull Board shows carries. */
const DESCRIPTIONS: Record<string, string> = {
  [COMPACTION_QUEUE]: 'session.run.completed events and sweep-found compactions',
  [SWEEP_QUEUE]: 'the scheduled sweep',
  [WEBHOOKS_QUEUE]: "session.compacted deliveries to the tenants' webhooks",
};

/**
 * Bull Board on `queues`, its pages rendered from `viewsPath` (see {@link offlineBullBoardViews});
 * a session's jobs link to its page.
 */
export function bullBoard(queues: Queue[], options: { readOnly: boolean; viewsPath: string }): Hono {
  const serverAdapter = new HonoAdapter(serveStatic);
  serverAdapter.setBasePath('/queues');
  createBullBoard({
    queues: queues.map(
      (queue) =>
        new BullMQAdapter(queue, {
          readOnlyMode: options.readOnly,
          description: DESCRIPTIONS[queue.name] ?? queue.name,
          // No link for jobs without a session (the sweep's own jobs): the UI shows none.
          externalJobUrl: ((job) => sessionLink(job.data)) as QueueAdapterOptions['externalJobUrl'],
        }),
    ),
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'compactor',
        miscLinks: [
          { text: 'Overview', url: '/' },
          { text: 'Sessions', url: '/sessions' },
        ],
        hideDocsLink: true,
      },
    },
  });
  // After createBullBoard, which points the views at the UI package's own directory.
  serverAdapter.setViewsPath(options.viewsPath);
  return serverAdapter.registerPlugin() as unknown as Hono;
}

/** The session page of a job's session, when its data names one (job data is untrusted). */
export function sessionLink(data: unknown): { displayText: string; href: string } | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { tenantId, sessionId } = data as { tenantId?: unknown; sessionId?: unknown };
  if (typeof tenantId !== 'string' || typeof sessionId !== 'string' || !tenantId || !sessionId)
    return undefined;
  const query = new URLSearchParams({ tenant: tenantId });
  return {
    displayText: 'Session page',
    href: `/sessions/${encodeURIComponent(sessionId)}?${query.toString()}`,
  };
}
