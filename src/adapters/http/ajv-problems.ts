import type { ErrorObject } from 'ajv';
import type { Problem } from '../../domain/errors.js';
import { pointerToPath } from '../../domain/json-path.js';

/** Short description of a JSON value for "expected X, got Y" messages. */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '...' : v)}`;
  if (typeof v === 'number' && !Number.isFinite(v)) return `number ${String(v)} (out of range)`;
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v} ${String(v)}`;
  return typeof v === 'object' ? 'an object' : typeof v;
}

/**
 * Turns ajv errors (compiled with `allErrors` and `verbose`) into problems that name the
 * field, what was expected and what was found. Union branches that ajv reports one by one
 * are folded into one problem per field.
 */
export function ajvProblems(errors: readonly ErrorObject[] | null | undefined, root = ''): Problem[] {
  const out: Problem[] = [];
  const seen = new Set<string>();
  const push = (path: string, message: string) => {
    const key = `${path}\u0000${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ path, message });
    }
  };
  const oneOfPaths = new Set(
    (errors ?? []).filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf').map((e) => e.instancePath),
  );
  for (const e of errors ?? []) {
    const at = pointerToPath(e.instancePath, root);
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'additionalProperties':
        push(at ? `${at}.${String(p['additionalProperty'])}` : String(p['additionalProperty']), 'unknown field');
        break;
      case 'required':
        push(at ? `${at}.${String(p['missingProperty'])}` : String(p['missingProperty']), 'required field is missing');
        break;
      case 'type':
      case 'enum':
      case 'const':
      case 'format':
      case 'pattern':
        // a failed union branch is reported once, by the oneOf/anyOf error below
        if (oneOfPaths.has(e.instancePath) && e.schemaPath.match(/\/(oneOf|anyOf)\/\d+\//)) break;
        push(at, `expected ${expected(e)}, got ${describeValue(e.data)}`);
        break;
      case 'oneOf':
      case 'anyOf':
        push(at, `expected ${unionExpected(e)}, got ${describeValue(e.data)}`);
        break;
      case 'minLength':
        push(at, `expected ${Number(p['limit']) === 1 ? 'a non-empty string' : `a string of at least ${String(p['limit'])} characters`}, got ${describeValue(e.data)}`);
        break;
      case 'maxLength':
        push(at, `expected a string of at most ${String(p['limit'])} characters, got one of ${String((e.data as string).length)}`);
        break;
      case 'minItems':
        push(at, `expected at least ${String(p['limit'])} item${Number(p['limit']) === 1 ? '' : 's'}, got ${(e.data as unknown[]).length === 0 ? 'an empty list' : `${String((e.data as unknown[]).length)}`}`);
        break;
      case 'maxItems':
        push(at, `expected at most ${String(p['limit'])} items, got ${String((e.data as unknown[]).length)}`);
        break;
      case 'uniqueItems':
        push(at, `expected each item once, got the same value as items ${Math.min(Number(p['i']), Number(p['j'])) + 1} and ${Math.max(Number(p['i']), Number(p['j'])) + 1}`);
        break;
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        push(at, `expected a number ${String(p['comparison'])} ${String(p['limit'])}, got ${describeValue(e.data)}`);
        break;
      default:
        push(at, `${e.message ?? 'invalid'}, got ${describeValue(e.data)}`);
    }
  }
  return out;
}

function expected(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type': {
      const schema = e.parentSchema as { description?: string } | undefined;
      return schema?.description ?? `${String(p['type']).replace(/,/g, ' or ')}`;
    }
    case 'enum':
      return `one of ${(p['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return JSON.stringify(p['allowedValue']);
    case 'format':
      return `a ${String(p['format'])} value`;
    case 'pattern': {
      const schema = e.parentSchema as { description?: string } | undefined;
      return schema?.description ?? `a string matching ${String(p['pattern'])}`;
    }
    default:
      return e.message ?? 'a valid value';
  }
}

function unionExpected(e: ErrorObject): string {
  const schema = e.parentSchema as { description?: string; oneOf?: unknown[]; anyOf?: unknown[] } | undefined;
  if (schema?.description) return schema.description;
  const branches = (schema?.oneOf ?? schema?.anyOf ?? []) as { type?: unknown; enum?: unknown[]; const?: unknown }[];
  const names = branches.map((b) =>
    b.enum ? b.enum.map((v) => JSON.stringify(v)).join(' or ') : b.const !== undefined ? JSON.stringify(b.const) : String(b.type ?? 'value'),
  );
  return names.join(' or ');
}
