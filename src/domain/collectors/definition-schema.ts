import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Problem } from '../errors.js';
import { USAGES } from './collector.js';
import { describeValue, pointerToPath } from '../json-path.js';

export { describeValue };

const duration = { type: ['string', 'number'] };

const metricColumnSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['usage'],
  properties: {
    usage: { enum: USAGES },
    rename: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    scale: { type: 'number' },
    default: { type: 'number' },
    bucket: { type: 'array', minItems: 1, items: { type: 'number' } },
    unit: { type: 'string', minLength: 1 },
    legacy_rename: { type: 'string', minLength: 1 },
  },
};

/** JSON schema of one collector definition as written in YAML (before defaults and semantic checks). */
export const COLLECTOR_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['query', 'metrics'],
  properties: {
    name: { type: 'string', minLength: 1 },
    desc: { type: 'string' },
    query: { type: 'string', minLength: 1 },
    ttl: duration,
    timeout: duration,
    min_version: { type: 'integer', minimum: 0 },
    max_version: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string', minLength: 1 } },
    fatal: { type: 'boolean' },
    skip: { type: 'boolean' },
    // pg_exporter's run order; accepted so its collector files load, and ignored (collectors run ordered by timeout).
    priority: { type: 'integer' },
    predicate_queries: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'predicate_query'],
        properties: { name: { type: 'string', minLength: 1 }, predicate_query: { type: 'string', minLength: 1 }, ttl: duration },
      },
    },
    metrics: {
      type: 'array',
      minItems: 1,
      items: { type: 'object', minProperties: 1, maxProperties: 1, additionalProperties: metricColumnSchema },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true, strictTypes: false });
const validateCollector: ValidateFunction = ajv.compile(COLLECTOR_SCHEMA);

/** Compiles a JSON schema with the options every exporter configuration schema uses. */
export function compileSchema(schema: object): ValidateFunction {
  return ajv.compile(schema);
}

/** Problems of `raw` against a compiled schema, each path starting with `root`. */
export function problemsOf(validate: ValidateFunction, root: string, raw: unknown): Problem[] {
  if (validate(raw)) return [];
  return (validate.errors ?? []).map((e) => toProblem(root, e)).filter((p): p is Problem => p !== null);
}

function join(base: string, key: string): string {
  return key ? `${base}.${key}` : base;
}

function toProblem(key: string, e: ErrorObject): Problem | null {
  const path = join(key, pointerToPath(e.instancePath));
  const params = e.params as Record<string, unknown>;
  // A mapping or list is named, never printed: it may hold connection URLs with passwords.
  const got = typeof e.data === 'object' && e.data !== null ? (Array.isArray(e.data) ? 'a list' : 'a mapping') : describeValue(e.data);
  // A key's name refused (propertyNames): said once, at the key, by its pattern error.
  if (e.keyword === 'propertyNames') return null;
  if (e.propertyName !== undefined) {
    return { path: `${path}.${e.propertyName}`, message: `invalid name ${JSON.stringify(e.propertyName)}: expected letters, digits, _ . - (starting with a letter or digit)` };
  }
  switch (e.keyword) {
    case 'additionalProperties': {
      const allowed = Object.keys((e.parentSchema as { properties?: object }).properties ?? {}).join(', ');
      return { path: `${path}.${String(params['additionalProperty'])}`, message: `unknown field (expected one of ${allowed})` };
    }
    case 'required':
      return { path: `${path}.${String(params['missingProperty'])}`, message: 'is required' };
    case 'enum':
      return { path, message: `expected one of ${(params['allowedValues'] as unknown[]).join(', ')}, got ${got}` };
    case 'type':
      return { path, message: `expected ${Array.isArray(params['type']) ? (params['type'] as string[]).join(' or ') : String(params['type'])}, got ${got}` };
    case 'minProperties':
    case 'maxProperties':
      return { path, message: `each metrics entry maps exactly one column name to its settings, got ${got}` };
    case 'minItems':
      return { path, message: `expected at least ${String(params['limit'])} item(s), got ${got}` };
    case 'minLength':
      return { path, message: `expected a non-empty string, got ${got}` };
    default:
      return { path, message: `${e.message ?? 'invalid'}, got ${got}` };
  }
}

/** Schema problems of one raw definition, each path starting with the collector key. */
export function schemaProblems(key: string, raw: unknown): Problem[] {
  if (validateCollector(raw)) return [];
  return (validateCollector.errors ?? []).map((e) => toProblem(key, e)).filter((p): p is Problem => p !== null);
}
