import { PARAMETER_CATALOG, type ParameterSpecRow } from './parameter-catalog.generated.js';

/**
 * Whether a value is one PostgreSQL accepts for a parameter, by its catalog entry (types,
 * units, ranges and choices of PostgreSQL 13-18, generated from pg_settings). A value it
 * refuses in postgresql.conf keeps the server from starting, so it is refused before it is
 * written anywhere.
 */

/** Bytes in one memory unit PostgreSQL takes. */
const MEMORY_UNITS: Readonly<Record<string, number>> = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };
/** Microseconds in one time unit PostgreSQL takes. */
const TIME_UNITS: Readonly<Record<string, number>> = { us: 1, ms: 1000, s: 1e6, min: 6e7, h: 3.6e9, d: 8.64e10 };

/**
 * Choices PostgreSQL accepts but pg_settings does not list (hidden aliases). Enums that list on
 * and off also take every boolean spelling (true, yes, 1, ...).
 */
const HIDDEN_CHOICES: Readonly<Record<string, readonly string[]>> = { wal_level: ['archive', 'hot_standby'], client_min_messages: ['info'] };

let byLowerName: ReadonlyMap<string, ParameterSpecRow> | null = null;

/** The catalog entry of `name` (PostgreSQL's names are case-insensitive), or undefined. */
function specOf(name: string): ParameterSpecRow | undefined {
  byLowerName ??= new Map(Object.entries(PARAMETER_CATALOG).map(([k, v]) => [k.toLowerCase(), v]));
  return byLowerName.get(name.toLowerCase());
}

/** Whether PostgreSQL 13-18 knows `name` (a module's own `module.name` is not in the catalog). */
export function isKnownParameter(name: string): boolean {
  return specOf(name) !== undefined;
}

/** A boolean as PostgreSQL reads it (on/off, true/false, yes/no and their unique prefixes, 1/0), or null when it is none. */
export function booleanOf(value: string | number | boolean): boolean | null {
  if (typeof value === 'boolean') return value;
  const t = String(value).trim().toLowerCase();
  if (t === '1' || t === 'on') return true;
  if (t === '0' || (t.length >= 2 && 'off'.startsWith(t))) return false;
  if (t.length >= 1 && ('true'.startsWith(t) || 'yes'.startsWith(t))) return true;
  if (t.length >= 1 && ('false'.startsWith(t) || 'no'.startsWith(t))) return false;
  return null;
}

/** The size of one of the parameter's own units in bytes or microseconds, and the units its text may carry. */
function unitScale(unit: string): { readonly base: number; readonly units: Readonly<Record<string, number>> } | null {
  const memory = /^(\d*)(B|kB|MB)$/.exec(unit);
  if (memory) return { base: Number(memory[1] || 1) * MEMORY_UNITS[memory[2]!]!, units: MEMORY_UNITS };
  if (unit in TIME_UNITS) return { base: TIME_UNITS[unit]!, units: TIME_UNITS };
  return null;
}

/** A number as PostgreSQL reads it with its optional unit, in the parameter's own unit; null when it cannot. */
function numberIn(text: string, unit: string): number | null {
  const m = /^\s*([+-]?(?:0x[0-9a-f]+|\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?))\s*([A-Za-z]+)?\s*$/i.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return null;
  if (m[2] === undefined) return n;
  const scale = unitScale(unit);
  const factor = scale?.units[m[2]];
  return scale && factor !== undefined ? (n * factor) / scale.base : null;
}

/** What a value of this parameter looks like, for a message. */
function expected(spec: ParameterSpecRow): string {
  const [type, , unit, min, max, values] = spec;
  if (type === 'bool') return 'on or off (true/false, yes/no, 1/0)';
  if (type === 'enum') return `one of ${values.join(', ')}`;
  const range = min !== null && max !== null && Number.isFinite(max) ? ` from ${min} to ${max}${unit ? ` (in units of ${unit})` : ''}` : '';
  const units = unit ? `, with a unit (${Object.keys(unitScale(unit)?.units ?? {}).join(', ')}) or without` : '';
  return `${type === 'integer' ? 'an integer' : 'a number'}${range}${units}`;
}

/**
 * Why `value` is not a value PostgreSQL accepts for parameter `name`, or null when it is (or
 * when the parameter is not in the catalog: a module's own, checked by the module).
 */
export function parameterValueProblem(name: string, value: string | number | boolean): string | null {
  const spec = specOf(name);
  if (spec === undefined) return null;
  const [type, context, unit, min, max, values] = spec;
  const got = JSON.stringify(value);
  if (context === 'internal') return `${name.toLowerCase()} cannot be set: PostgreSQL fixes it when it is built or initdb runs, got ${got}`;
  const text = typeof value === 'boolean' ? (value ? 'on' : 'off') : String(value);
  switch (type) {
    case 'bool':
      return booleanOf(text) !== null ? null : `expected ${expected(spec)}, got ${got}`;
    case 'enum': {
      const t = text.trim().toLowerCase();
      const choices = [...values, ...(HIDDEN_CHOICES[name.toLowerCase()] ?? [])].map((v) => v.toLowerCase());
      const boolish = choices.includes('on') && choices.includes('off') && booleanOf(t) !== null;
      return choices.includes(t) || boolish ? null : `expected ${expected(spec)}, got ${got}`;
    }
    case 'integer':
    case 'real': {
      const n = numberIn(text, unit);
      if (n === null) return `expected ${expected(spec)}, got ${got}`;
      const v = type === 'integer' ? Math.round(n) : n;
      if ((min !== null && v < min) || (max !== null && v > max)) return `expected ${expected(spec)}, got ${got}`;
      return null;
    }
    default:
      return null;
  }
}
