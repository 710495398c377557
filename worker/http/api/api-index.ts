/**
 * What `GET /v1` answers: where the API's own documents are, so the URL `compactor dev` and
 * `compactor api` print leads somewhere. Pure: no I/O.
 */
import { z } from 'zod';
import { MCP_PATH, OPENAPI_PATH } from './routes.ts';

/** The path of the index itself (served without credentials, as the OpenAPI document is). */
export const INDEX_PATH = '/v1';

/** The index's shape, as the OpenAPI document describes it. */
export const apiIndexSchema = z
  .object({
    name: z.literal('compactor API'),
    version: z.string().describe("The version of the API's contract (the OpenAPI document's info.version)."),
    openapi: z.string().describe('Path of the OpenAPI 3.1 document (no credentials needed).'),
    mcp: z.string().describe("Path of recall's MCP server (streamable HTTP; a key with context:read)."),
    docs: z
      .object({
        guide: z.string().describe('The guide to the API, in the compactor repository.'),
        reference: z.string().describe('The reference of every route, generated from the OpenAPI document.'),
      })
      .describe('Where the documentation is.'),
  })
  .meta({ title: 'ApiIndex' });

/** The body of `GET /v1`. */
export type ApiIndex = z.infer<typeof apiIndexSchema>;

/**
 * The index of an API of contract `version` mounted at `basePath` (`/compactor` for
 * `app.route('/compactor', api)`; default: the root), its paths prefixed with it so they resolve
 * where the index was read.
 */
export function apiIndex(version: string, basePath = ''): ApiIndex {
  const base = basePath.replace(/\/+$/, '');
  return {
    name: 'compactor API',
    version,
    openapi: `${base}${OPENAPI_PATH}`,
    mcp: `${base}${MCP_PATH}`,
    docs: { guide: 'docs/guide/http-api.md', reference: 'docs/reference/http-api.md' },
  };
}
