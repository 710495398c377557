/**
 * The HTTP API's OpenAPI 3.1 document, generated from the route table (routes.ts) and its zod
 * schemas with `z.toJSONSchema` (OpenAPI 3.1's schemas are JSON Schema draft 2020-12, which is
 * what it writes). Named schemas (their `title`) become `components.schemas` entries referenced
 * by `$ref`. Pure: no I/O.
 */
import type { z } from 'zod';
import { JSON_SCHEMA_DIALECT, toJsonSchema } from '../../../shared/protocol/json-schemas.ts';
import { type ApiErrorType, apiErrorSchema, ERROR_STATUS, ERROR_TYPES } from './errors.ts';
import { API_ROUTES, type ApiRoute, OPENAPI_PATH } from './routes.ts';

/** What every route of the table may answer: a bad request, no or wrong credentials, too many failures. */
const COMMON_ERRORS = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'rate_limit_error',
] as const satisfies ApiErrorType[];

/** The version of the API's contract (the `v1` of its paths). */
export const API_VERSION = '1.0.0';

type Json = Record<string, unknown>;

/**
 * Builds the document. `basePath`: where the app is mounted (`/compactor` for
 * `app.route('/compactor', api)`), given as the document's server URL; default `/`.
 */
export function openApiDocument(options: { basePath?: string } = {}): Json {
  const components: Record<string, Json> = {};
  /** A request or response schema: a `$ref` to its component when it has a title, else inline. */
  const schemaOf = (schema: z.ZodType, io: 'input' | 'output'): Json => {
    const { $schema: _dialect, ...json } = toJsonSchema(schema, io);
    const title = typeof json.title === 'string' ? json.title : undefined;
    if (!title) return json;
    components[title] ??= json;
    return { $ref: `#/components/schemas/${title}` };
  };
  // One response per status: the error types that share it are described together.
  const errorResponse = (types: ApiErrorType[]) => ({
    description: types.map((type) => `${type}: ${ERROR_TYPES[type].description}`).join(' '),
    content: { 'application/json': { schema: schemaOf(apiErrorSchema, 'output') } },
  });

  const paths: Record<string, Record<string, Json>> = {};
  for (const [operationId, route] of Object.entries(API_ROUTES) as Array<[string, ApiRoute]>) {
    const parameters = [
      ...parametersOf(route.params, 'path'),
      ...parametersOf(route.query, 'query'),
      ...parametersOf(route.headers, 'header'),
    ];
    const responses: Record<string, Json> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      if (!response) continue;
      responses[status] = {
        description: response.description,
        ...(response.headers
          ? {
              headers: Object.fromEntries(
                Object.entries(response.headers).map(([name, description]) => [
                  name,
                  { description, schema: { type: 'string' } },
                ]),
              ),
            }
          : {}),
        content: { 'application/json': { schema: schemaOf(response.schema, 'output') } },
      };
    }
    const errors = new Set(route.errors);
    for (const type of COMMON_ERRORS) errors.add(type);
    const byStatus = new Map<number, ApiErrorType[]>();
    for (const type of errors)
      byStatus.set(ERROR_STATUS[type], [...(byStatus.get(ERROR_STATUS[type]) ?? []), type]);
    for (const [status, types] of [...byStatus].sort(([a], [b]) => a - b)) {
      responses[String(status)] ??= errorResponse(types);
    }
    const methods = paths[route.path] ?? {};
    paths[route.path] = methods;
    methods[route.method] = {
      operationId,
      summary: route.summary,
      description: `${route.description} Needs the scope ${route.scope}.`,
      'x-required-scope': route.scope,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: route.body.required,
              content: { 'application/json': { schema: schemaOf(route.body.schema, 'input') } },
            },
          }
        : {}),
      responses,
      security: [{ bearer: [route.scope] }, { basic: [route.scope] }],
    };
  }
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      description:
        'The OpenAPI 3.1 document of the API, generated from its zod schemas. No credentials needed.',
      security: [],
      responses: { 200: { description: 'The document.', content: { 'application/json': { schema: {} } } } },
    },
  };

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: JSON_SCHEMA_DIALECT,
    info: {
      title: 'compactor API',
      version: API_VERSION,
      description:
        'Create sessions, append Anthropic messages, enqueue session.run.completed, load the next context, compact now and delete sessions, tenant by tenant; issue, list, rotate and revoke keys. A tenant credential acts on its own tenant; an admin credential names one in the Compactor-Tenant header. Each operation needs one scope (x-required-scope, and the scopes of its security requirement): a credential without it gets 403 naming it. After 10 failed authentications in a minute a client gets 429 with retry-after. Errors are { "error": { "type", "message", "field"? } }.',
    },
    servers: [{ url: options.basePath || '/' }],
    security: [{ bearer: [] }, { basic: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An issued key (cpt_ tenant key or cpa_ admin key, with its scopes), COMPACTOR_DASHBOARD_TOKEN (the bootstrap admin: every scope) or a tenant token of COMPACTOR_DASHBOARD_TOKENS (every tenant scope).',
        },
        basic: {
          type: 'http',
          scheme: 'basic',
          description:
            'COMPACTOR_DASHBOARD_USER/_PASSWORD (admin), a tenant id and its token of COMPACTOR_DASHBOARD_TOKENS, or any user name and an issued key as the password.',
        },
      },
    },
  };
}

/** OpenAPI parameter objects of one part's schema (an object: one parameter per key). */
function parametersOf(schema: z.ZodObject | undefined, where: 'path' | 'query' | 'header'): Json[] {
  if (!schema) return [];
  return Object.entries(schema.shape).map(([name, field]) => {
    const { $schema: _dialect, description, ...json } = toJsonSchema(field as z.ZodType, 'input');
    return {
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(typeof description === 'string' ? { description } : {}),
      schema: json,
    };
  });
}
