/**
 * The configuration reference page, from the config schema (`envSchema`) and the descriptions
 * `compactor --help` prints (`environmentVariables()`): each variable's default and meaning, and
 * what it accepts as the schema's JSON Schema states it (bounds, choices, patterns). Pure.
 */
import { z } from 'zod';
import { environmentVariables } from '../../worker/cli/environment.ts';
import { envSchema } from '../../worker/config/config.ts';
import { cell, code, generatedNotice, page, table } from './markdown.ts';

type JsonSchema = {
  type?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: unknown[];
};

/** A number as the docs write it: `3,600,000`. */
function count(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * What the schema accepts, in words: `integer 100 to 3,600,000`, `one of a, b`, `16 to 1,000
 * characters matching ^…$`. Empty when the schema's rule is code JSON Schema cannot state (a
 * refinement, a parser of its own): its error message names the rule when a value breaks it.
 */
export function accepts(field: z.ZodType): string {
  const json = z.toJSONSchema(field, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  if (json.enum) return `one of ${json.enum.map((v) => code(String(v))).join(', ')}`;
  if (json.type === 'integer' || json.type === 'number') {
    const safe = (n: number | undefined) => n !== undefined && Math.abs(n) < Number.MAX_SAFE_INTEGER;
    const word = json.type === 'integer' ? 'integer' : 'number';
    if (safe(json.minimum) && safe(json.maximum))
      return `${word} ${count(json.minimum as number)} to ${count(json.maximum as number)}`;
    return word;
  }
  if (json.type === 'string') {
    const parts: string[] = [];
    if (json.minLength !== undefined && json.maxLength !== undefined)
      parts.push(`${count(json.minLength)} to ${count(json.maxLength)} characters`);
    else if (json.minLength !== undefined && json.minLength > 1)
      parts.push(`at least ${count(json.minLength)} characters`);
    if (json.pattern) parts.push(`matching ${code(json.pattern)}`);
    return parts.join(' ');
  }
  return '';
}

/** The whole page, Markdown. */
export function configurationReferencePage(): string {
  const shape = envSchema.shape as Record<string, z.ZodType>;
  const rows = environmentVariables().map((v) => {
    const field = shape[v.name];
    const fallback = v.default.startsWith('default ')
      ? code(v.default.slice('default '.length))
      : cell(v.default);
    return [code(v.name), fallback, field ? accepts(field) : '', cell(v.description)];
  });
  return page([
    generatedNotice('the config schema (`envSchema`) and the descriptions `compactor --help` prints'),
    '# Configuration',
    'compactor reads its configuration from the environment once, at start-up, and validates it with ' +
      'one schema: a bad value stops start-up with a message naming the variable and the rule it breaks. ' +
      'Every command reads the same variables (`compactor --help` lists them too). The library ' +
      '(`createProducer`, `openDatabase`, `loadContext`, ...) reads none: it takes its settings as ' +
      'arguments.',
    table(['variable', 'default', 'accepts', 'meaning'], rows),
    'Related: [Tenant limits](../guide/security.md#tenant-limits) for the `COMPACTOR_LIMIT_*` defaults ' +
      'and how a policy overrides them; [Scale out](../guide/scale-out.md#redis-cluster) for the Redis ' +
      'Cluster settings; [Operate](../guide/operate.md) for the dashboard, metrics and API servers.',
  ]);
}
