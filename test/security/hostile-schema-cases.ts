/**
 * Hostile values for a request body, generated from the body's JSON Schema as the OpenAPI document
 * publishes it, so a field added to a route gets its cases without anyone writing them: for each
 * top-level property, a value of every JSON type it does not allow, one past each bound it states
 * (length, range, items), a number JSON cannot hold, NUL and an unpaired surrogate in its strings,
 * a member its enum or const does not have; each required property left out; an unknown property
 * on a closed object. Every one of them is a request the schema refuses, so the API must answer
 * 400 naming the property. Pure: no I/O.
 */

/** A JSON Schema object as the OpenAPI document holds it. */
export type JsonSchema = Record<string, unknown>;

/** JSON text put in a body where a JS value cannot say it (`1e400`). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** One value to put in place of a property, and what it is. */
export interface SchemaMutation {
  /** What the value is, for the case's name. */
  what: string;
  /** The property, and the field the answer must name (it or a path below it). */
  property: string;
  /** The property's new value; `undefined` leaves it out. */
  value: unknown;
}

/** The JSON types, as JSON Schema names them. */
type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'array' | 'object';

/** A value of each type, for the types a property does not allow, in the order they are tried. */
const SAMPLES: Record<Exclude<JsonType, 'integer'>, unknown> = {
  object: {},
  null: null,
  string: 'seven',
  number: 7.5,
  array: [],
  boolean: true,
};

/** Wrong types tried per property: three catch a parser that takes any. */
const WRONG_TYPES_PER_PROPERTY = 3;

/** `schema` with its `$ref` followed into `components`. */
export function resolve(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const target = components[ref.replace('#/components/schemas/', '')];
  if (!target) throw new Error(`unresolved ${ref}`);
  return target;
}

/** The alternatives of a schema (its `anyOf`/`oneOf` members, or itself). */
function variants(schema: JsonSchema): JsonSchema[] {
  const members = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  return members ? members.flatMap(variants) : [schema];
}

/** The JSON types a schema allows; null when it allows any value. */
function typesOf(schema: JsonSchema): Set<JsonType> | null {
  const types = new Set<JsonType>();
  for (const variant of variants(schema)) {
    const type = variant.type;
    if (typeof type === 'string') types.add(type as JsonType);
    else if (Array.isArray(type)) for (const t of type) types.add(t as JsonType);
    else if ('const' in variant) types.add(jsonTypeOf(variant.const));
    else if (Array.isArray(variant.enum)) for (const v of variant.enum) types.add(jsonTypeOf(v));
    else return null;
  }
  return types;
}

function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

/** Values of the types `types` does not allow. */
function wrongTypes(types: Set<JsonType>): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [type, sample] of Object.entries(SAMPLES) as Array<[JsonType, unknown]>) {
    if (types.has(type)) continue;
    // 7.5 is a number an integer property refuses; 7 would be one it takes.
    if (type === 'number' && !types.has('integer')) out.push(['a number', 7]);
    else out.push([`a ${type === 'null' ? 'null' : type}`, sample]);
  }
  return out.slice(0, WRONG_TYPES_PER_PROPERTY);
}

/** Values past the bounds a string variant states, and characters no stored string may hold. */
function stringMutations(variant: JsonSchema): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  const members = Array.isArray(variant.enum) ? (variant.enum as string[]) : undefined;
  const constant = typeof variant.const === 'string' ? variant.const : undefined;
  const sample = members?.[0] ?? constant ?? 'value';
  if (members || constant !== undefined) out.push(['a string not among its values', 'not-one-of-them']);
  if (typeof variant.minLength === 'number' && variant.minLength > 0) out.push(['an empty string', '']);
  if (typeof variant.maxLength === 'number')
    out.push([`${variant.maxLength + 1} characters`, 'x'.repeat(variant.maxLength + 1)]);
  out.push(['a NUL', `${sample}\u0000x`], ['an unpaired surrogate', `${sample}\uD800`]);
  if (variant.allOf || variant.pattern)
    out.push(['an ANSI escape', `${sample}\u001b[31m`], ['a bidi override', `${sample}\u202Egnp`]);
  if (variant.format === 'date-time') out.push(['a date without a time', '2026-13-45']);
  return out;
}

/** Values past the bounds a number variant states, and numbers JSON cannot hold. */
function numberMutations(variant: JsonSchema, integer: boolean): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [['1e400', new RawJson('1e400')]];
  if (integer) out.push(['a fraction', 1.5]);
  if (typeof variant.minimum === 'number') out.push([`${variant.minimum - 1}`, variant.minimum - 1]);
  if (typeof variant.maximum === 'number') {
    // Past MAX_SAFE_INTEGER, one more is not a distinct double: twice the bound is.
    const past = variant.maximum >= Number.MAX_SAFE_INTEGER ? variant.maximum * 2 : variant.maximum + 1;
    out.push([`${past}`, past]);
  }
  return out;
}

/** Values past the bounds an array variant states. */
function arrayMutations(variant: JsonSchema): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  const items = (variant.items ?? {}) as JsonSchema;
  const item = Array.isArray(items.enum) ? items.enum[0] : typesOf(items)?.has('string') ? 'x' : {};
  if (typeof variant.minItems === 'number' && variant.minItems > 0) out.push(['an empty list', []]);
  if (typeof variant.maxItems === 'number')
    out.push([`${variant.maxItems + 1} items`, Array.from({ length: variant.maxItems + 1 }, () => item)]);
  if (Array.isArray(items.enum)) {
    out.push(['a list with an unknown member', ['not-one-of-them']]);
    out.push(['a list with a member twice', [items.enum[0], items.enum[0]]]);
  }
  const itemTypes = typesOf(items);
  if (itemTypes) for (const [what, value] of wrongTypes(itemTypes)) out.push([`a list of ${what}`, [value]]);
  return out;
}

/** Every value of {@link SchemaMutation} for one property. */
function propertyMutations(schema: JsonSchema): Array<[string, unknown]> {
  const types = typesOf(schema);
  const out: Array<[string, unknown]> = types ? wrongTypes(types) : [];
  for (const variant of variants(schema)) {
    if (variant.type === 'string' || typeof variant.const === 'string') out.push(...stringMutations(variant));
    if (typeof variant.const === 'boolean') out.push([`${!variant.const}`, !variant.const]);
    if (variant.type === 'integer' || variant.type === 'number')
      out.push(...numberMutations(variant, variant.type === 'integer'));
    if (variant.type === 'array') out.push(...arrayMutations(variant));
    if (variant.type === 'object' && Array.isArray(variant.required) && variant.required.length > 0)
      out.push(['an object without its required fields', {}]);
  }
  // A union of objects (a strategy): one whose discriminating type none of them has.
  if (variants(schema).every((v) => v.type === 'object' && v.properties))
    out.push(['an object of an unknown type', { type: 'not-one-of-them' }]);
  const seen = new Set<string>();
  return out.filter(([what]) => !seen.has(what) && seen.add(what));
}

/**
 * The mutations of a body schema's top-level properties (see the module comment).
 * @param schema an object schema, `$ref` resolved.
 */
export function schemaMutations(schema: JsonSchema): SchemaMutation[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out: SchemaMutation[] = [];
  for (const [property, propertySchema] of Object.entries(properties)) {
    for (const [what, value] of propertyMutations(propertySchema)) out.push({ what, property, value });
  }
  for (const property of (schema.required ?? []) as string[])
    out.push({ what: 'left out', property, value: undefined });
  return out;
}

/** Whether the schema refuses properties it does not name. */
export function isClosed(schema: JsonSchema): boolean {
  return schema.additionalProperties === false;
}

/**
 * JSON text of `value`, with each {@link RawJson} written as its text.
 */
export function jsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v) => {
    if (!(v instanceof RawJson)) return v;
    raws.push(v.text);
    return `\u0000raw${raws.length - 1}\u0000`;
  });
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)] ?? '');
}
