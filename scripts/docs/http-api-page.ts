/**
 * The HTTP API reference page, from the OpenAPI document the API serves (`openApiDocument()`):
 * each operation with its scope, parameters, request body and responses, then each named schema
 * with its fields and its JSON Schema. Reads the document as OpenAPI 3.1 JSON, whatever builds it.
 * Pure.
 */
import { openApiDocument } from '../../worker/http/api/openapi.ts';
import { cell, code, fence, generatedNotice, page, prose, table } from './markdown.ts';

type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The component name of a `$ref` such as `#/components/schemas/Context`, else undefined. */
function refName(schema: unknown): string | undefined {
  const ref = isObject(schema) ? text(schema.$ref) : '';
  return ref.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : undefined;
}

/** A link to a named schema's section on this page. */
function schemaLink(name: string): string {
  return `[${code(name)}](#${name.toLowerCase()})`;
}

/**
 * A schema's type in a few words: a named schema as a link, `string`, `array of X`, `"a" or "b"`,
 * `X or null`. Falls back to `object` or `any` for what it does not spell out (the JSON Schema
 * below each named schema has the whole of it).
 */
export function typeOf(schema: unknown): string {
  const name = refName(schema);
  if (name) return schemaLink(name);
  if (!isObject(schema)) return 'any';
  if ('const' in schema) return code(JSON.stringify(schema.const));
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => code(JSON.stringify(v))).join(' or ');
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options)) return [...new Set(options.map(typeOf))].join(' or ');
  }
  if (Array.isArray(schema.type)) return schema.type.map((t) => String(t)).join(' or ');
  if (schema.type === 'array') return `array of ${typeOf(schema.items)}`;
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return typeOf(schema.allOf[0]);
  return isObject(schema.properties) ? 'object' : 'any';
}

/** The schema of a body's `application/json` content, if any. */
function jsonBody(holder: unknown): unknown {
  if (!isObject(holder) || !isObject(holder.content)) return undefined;
  const json = holder.content['application/json'];
  return isObject(json) ? json.schema : undefined;
}

/** An object schema's fields as a table; empty for a schema that is not an object. */
function fieldsTable(schema: Json): string {
  if (!isObject(schema.properties)) return '';
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const rows = Object.entries(schema.properties).map(([name, field]) => [
    code(name),
    typeOf(field),
    required.has(name) ? 'yes' : '',
    cell(isObject(field) ? text(field.description) : ''),
  ]);
  return table(['field', 'type', 'required', 'meaning'], rows);
}

/**
 * The scope an operation needs: its `x-required-scope`, else the scopes of its security
 * requirements; '' when it needs no credentials (`security: []`). `undefined` when the document
 * says nothing either way (the document's default security then applies, scope unnamed).
 */
export function scopeOf(operation: Json): string | undefined {
  const named = text(operation['x-required-scope']);
  if (named) return named;
  if (!Array.isArray(operation.security)) return undefined;
  const scopes = operation.security
    .filter(isObject)
    .flatMap((requirement) =>
      Object.values(requirement).flatMap((list) => (Array.isArray(list) ? list.map(String) : [])),
    );
  return [...new Set(scopes)].join(', ');
}

/** One operation's section. */
function operationSection(method: string, path: string, operation: Json): string {
  const parameters = (Array.isArray(operation.parameters) ? operation.parameters : []).filter(isObject);
  const scope = scopeOf(operation);
  const body = isObject(operation.requestBody) ? operation.requestBody : undefined;
  const responses = isObject(operation.responses) ? operation.responses : {};
  return page([
    `## ${code(`${method.toUpperCase()} ${path}`)}`,
    `**${prose(text(operation.summary))}** (${code(text(operation.operationId))}).`,
    prose(text(operation.description)),
    scope === undefined
      ? 'Credentials: as the document says for every operation.'
      : scope
        ? `Scope: ${code(scope)}.`
        : 'No credentials needed.',
    parameters.length > 0 &&
      table(
        ['parameter', 'in', 'required', 'type', 'meaning'],
        parameters.map((p) => [
          code(text(p.name)),
          text(p.in),
          p.required === true ? 'yes' : '',
          typeOf(p.schema),
          cell(text(p.description)),
        ]),
      ),
    body && `Request body (${body.required === true ? 'required' : 'optional'}): ${typeOf(jsonBody(body))}.`,
    table(
      ['status', 'meaning', 'body'],
      Object.entries(responses).map(([status, response]) => [
        status,
        cell(isObject(response) ? text(response.description) : ''),
        jsonBody(response) === undefined ? '' : typeOf(jsonBody(response)),
      ]),
    ),
  ]).trimEnd();
}

/** One named schema's section: what it is, its fields, and its JSON Schema. */
function schemaSection(name: string, schema: Json): string {
  return page([
    `### ${name}`,
    prose(text(schema.description)),
    fieldsTable(schema),
    `<details><summary>JSON Schema</summary>\n\n${fence('json', JSON.stringify(schema, null, 2))}\n\n</details>`,
  ]).trimEnd();
}

/** The whole page, Markdown, for `document` (default: the API's own). */
export function httpApiReferencePage(document: Json = openApiDocument()): string {
  const info = isObject(document.info) ? document.info : {};
  const paths = isObject(document.paths) ? document.paths : {};
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) =>
      isObject(item) && isObject(item[method]) ? [{ method, path, operation: item[method] as Json }] : [],
    ),
  );
  const components = isObject(document.components) ? document.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  return page([
    generatedNotice('the OpenAPI document the API serves (`openApiDocument()`)'),
    '# HTTP API reference',
    `${prose(text(info.title))} ${code(text(info.version))}, OpenAPI ${code(text(document.openapi))}. ` +
      '`compactor api` serves this document at `GET /v1/openapi.json`; the ' +
      '[HTTP API guide](../guide/http-api.md) tells how to call it, and [Security](../guide/security.md) ' +
      'how keys, scopes and limits work.',
    prose(text(info.description)),
    table(
      ['operation', 'what', 'scope'],
      operations.map(({ method, path, operation }) => [
        `[${code(`${method.toUpperCase()} ${path}`)}](#${anchorOf(method, path)})`,
        cell(text(operation.summary)),
        code(scopeOf(operation) || 'none'),
      ]),
    ),
    ...operations.map(({ method, path, operation }) => operationSection(method, path, operation)),
    '## Schemas',
    ...Object.entries(schemas).flatMap(([name, schema]) =>
      isObject(schema) ? [schemaSection(name, schema)] : [],
    ),
  ]);
}

/**
 * The heading id VitePress gives `## \`POST /v1/sessions/{id}\``: the text lower-cased, runs of
 * characters other than letters and digits turned into one `-`, trimmed of `-`.
 */
function anchorOf(method: string, path: string): string {
  return `${method} ${path}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
