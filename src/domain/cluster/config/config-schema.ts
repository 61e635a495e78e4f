import { Ajv, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Problem } from '../../errors.js';
import { isSize, parseSize } from '../model/size.js';
import { describeValue, pointerToPath } from '../../json-path.js';

export { describeValue, pointerToPath };

/** Server parameters Warden sets itself from the local configuration; the dynamic config may not override them. */
export const FORBIDDEN_DYNAMIC_PARAMETERS = ['listen_addresses', 'port', 'cluster_name'] as const;

const bool = { type: 'boolean' } as const;

/** Longest duration a setting may have, in seconds: the longest a timer can wait (2^31-1 ms, ~24.8 days). */
export const MAX_DURATION_SECONDS = 2_147_483;
const nonEmpty = { type: 'string', minLength: 1 } as const;
const slotName = '^[a-z0-9_]{1,63}$';

/** Names and values are checked by parameterProblem (validateConfig), which says why one is refused. */
const dbParameters = {
  type: 'object',
  additionalProperties: { type: ['string', 'number', 'boolean'] },
} as const;

const permanentSlot = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: { type: { enum: ['physical', 'logical'] }, database: nonEmpty, plugin: nonEmpty },
  if: { properties: { type: { const: 'logical' } }, required: ['type'] },
  then: { required: ['database', 'plugin'] },
} as const;

const ignoredSlot = {
  type: 'object',
  additionalProperties: false,
  properties: { name: nonEmpty, type: { enum: ['physical', 'logical'] }, database: nonEmpty, plugin: nonEmpty },
} as const;

/** A replica creation method's name (`basebackup`, or one the members' local files define under `db.<name>`). */
const methodName = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' } as const;

/** A host name or an IPv4 or IPv6 address, one of them: a typo (a space, a line break) is refused, not written into primary_conninfo. */
const hostName = {
  type: 'string',
  pattern: '^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(?:%[A-Za-z0-9_.-]+)?)$',
  maxLength: 253,
  description: 'a host name or an IP address',
} as const;

const standbyCluster = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    host: hostName,
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    primary_slot_name: { type: 'string', pattern: slotName },
    restore_command: nonEmpty,
    archive_cleanup_command: nonEmpty,
    // PostgreSQL's own syntax: milliseconds, or a duration with a unit ('5min').
    recovery_min_apply_delay: { type: ['integer', 'string'], minimum: 0, pattern: '^[0-9]+\\s*(ms|s|min|h|d)?$' },
    create_replica_methods: { type: 'array', minItems: 1, uniqueItems: true, items: methodName },
  },
} as const;

/** The keys `standby_cluster` takes. */
export const STANDBY_CLUSTER_KEYS: ReadonlySet<string> = new Set(Object.keys(standbyCluster.properties));

/**
 * JSON schema of the dynamic configuration (the DCS `config` key). Unknown keys are
 * refused at the top level and inside `db`, `slots` entries and `standby_cluster`, so a typo
 * never silently does nothing. `maximumLagSize` is a Warden keyword: bytes or a size string
 * (`syncNodeLag`: the same, or -1);
 * `durationSeconds` one for seconds or a duration string.
 * Cross-field rules (the ttl rule, standby_cluster source) are checked by validateConfig.
 */
export const DYNAMIC_CONFIG_SCHEMA = {
  $id: 'warden:dynamic-config',
  type: 'object',
  additionalProperties: false,
  properties: {
    ttl: { type: 'integer', minimum: 20, maximum: MAX_DURATION_SECONDS },
    loop_wait: { type: 'integer', minimum: 1, maximum: MAX_DURATION_SECONDS },
    retry_timeout: { type: 'integer', minimum: 3, maximum: MAX_DURATION_SECONDS },
    maximum_lag_on_failover: { maximumLagSize: true },
    maximum_lag_on_syncnode: { syncNodeLag: true },
    max_timelines_history: { type: 'integer', minimum: 0 },
    primary_start_timeout: { type: 'number', minimum: 0, maximum: MAX_DURATION_SECONDS },
    primary_stop_timeout: { type: 'number', minimum: 0, maximum: MAX_DURATION_SECONDS },
    synchronous_mode: { enum: [true, false, 'quorum'] },
    synchronous_mode_strict: bool,
    synchronous_node_count: { type: 'integer', minimum: 1, maximum: 1000 },
    failsafe_mode: bool,
    check_timeline: bool,
    pause: bool,
    preferred_leader_delay: { type: 'integer', minimum: 0, maximum: MAX_DURATION_SECONDS },
    member_slots_ttl: { durationSeconds: true },
    db: {
      type: 'object',
      additionalProperties: false,
      properties: {
        use_pg_rewind: bool,
        use_slots: bool,
        remove_data_directory_on_rewind_failure: bool,
        remove_data_directory_on_diverged_timelines: bool,
        parameters: dbParameters,
      },
    },
    slots: { type: 'object', propertyNames: { pattern: slotName }, additionalProperties: permanentSlot },
    ignore_slots: { type: 'array', items: ignoredSlot },
    standby_cluster: standbyCluster,
  },
} as const;

/** Top-level keys the dynamic configuration accepts. */
export const DYNAMIC_CONFIG_KEYS: readonly string[] = Object.freeze(Object.keys(DYNAMIC_CONFIG_SCHEMA.properties));

const SIZE_EXPECTED = 'a non-negative integer (bytes) or a size such as "1MB" (units B, kB, MB, GB, TB)';
const DURATION_EXPECTED = 'a non-negative integer (seconds) or a duration such as "30min" (units s, min, h, d), at most 24 days';

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, min: 60, h: 3600, d: 86400 };

/** Seconds of a duration setting: whole seconds, or `30s`, `30min`, `2h`, `1d`; null when invalid. */
export function durationSeconds(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 && v <= MAX_DURATION_SECONDS ? v : null;
  if (typeof v !== 'string') return null;
  const m = /^\s*(\d+)\s*(s|min|h|d)?\s*$/.exec(v);
  if (!m) return null;
  const seconds = Number(m[1]) * DURATION_UNITS[m[2] ?? 's']!;
  return seconds <= MAX_DURATION_SECONDS ? seconds : null;
}

/** True for a valid `maximum_lag_on_failover`: whole non-negative bytes or a size string. */
export function isLagValue(v: unknown): boolean {
  return (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) || (typeof v === 'string' && isSize(v));
}

/** Bytes of a valid `maximum_lag_on_syncnode` (bytes or a size string), null for off (-1, Patroni's spelling, or null), undefined when invalid. */
export function syncNodeLagBytes(v: unknown): number | null | undefined {
  if (v === -1 || v === null) return null;
  if (!isLagValue(v)) return undefined;
  return typeof v === 'string' ? parseSize(v) : (v as number);
}

/** The compiled validators of the dynamic configuration: the whole document, and the parts resolveConfig takes or drops one by one. */
export interface DynamicConfigValidators {
  readonly document: ValidateFunction;
  readonly key: Record<keyof typeof DYNAMIC_CONFIG_SCHEMA.properties, ValidateFunction>;
  readonly parameterValue: ValidateFunction;
  readonly slot: ValidateFunction;
  readonly ignoredSlot: ValidateFunction;
  readonly boolean: ValidateFunction;
}

let compiled: DynamicConfigValidators | null = null;

/**
 * The validators, compiled on first use: importing the package compiles nothing (ajv generates
 * code, which takes a fifth of a second and which a host run with
 * --disallow-code-generation-from-strings refuses).
 */
export function dynamicConfigValidators(): DynamicConfigValidators {
  if (compiled) return compiled;
  const ajv = new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true, strictTypes: false });
  ajv.addKeyword({ keyword: 'maximumLagSize', schemaType: 'boolean', errors: false, validate: (_s: boolean, v: unknown) => isLagValue(v) });
  ajv.addKeyword({ keyword: 'syncNodeLag', schemaType: 'boolean', errors: false, validate: (_s: boolean, v: unknown) => syncNodeLagBytes(v) !== undefined });
  ajv.addKeyword({ keyword: 'durationSeconds', schemaType: 'boolean', errors: false, validate: (_s: boolean, v: unknown) => durationSeconds(v) !== null });
  compiled = {
    document: ajv.compile(DYNAMIC_CONFIG_SCHEMA),
    key: Object.fromEntries(
      Object.entries(DYNAMIC_CONFIG_SCHEMA.properties).map(([k, s]) => [k, ajv.compile(s as AnySchemaObject)]),
    ) as Record<keyof typeof DYNAMIC_CONFIG_SCHEMA.properties, ValidateFunction>,
    parameterValue: ajv.compile(dbParameters.additionalProperties),
    slot: ajv.compile(permanentSlot),
    ignoredSlot: ajv.compile(ignoredSlot),
    boolean: ajv.compile(bool),
  };
  return compiled;
}

function typeWords(type: unknown): string {
  const one = (t: string) => ({ integer: 'an integer', object: 'an object', array: 'an array', null: 'null' })[t] ?? `a ${t}`;
  return Array.isArray(type) ? type.map(one).join(' or ') : one(String(type));
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Turns one ajv error into a Problem with path, expected and got; null for wrapper errors that repeat another. */
function toProblem(e: ErrorObject): Problem | null {
  const path = pointerToPath(e.instancePath);
  // Lazily: for an unknown key e.data is the whole object, and thousands of keys made this quadratic.
  const got = () => describeValue(e.data);
  const ps = e.parentSchema as { type?: unknown; properties?: Record<string, unknown> } | undefined;
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'propertyNames' || e.keyword === 'if') return null;
  if (e.propertyName !== undefined) {
    return { path: join(path, e.propertyName), message: `invalid name: expected lowercase letters, digits and _ (at most 63), got ${describeValue(e.propertyName)}` };
  }
  switch (e.keyword) {
    case 'type':
      return { path, message: `expected ${typeWords(params['type'])}, got ${got()}` };
    case 'minimum':
    case 'maximum':
      return { path, message: `expected ${typeWords(ps?.type ?? 'number')} ${e.keyword === 'minimum' ? '>=' : '<='} ${String(params['limit'])}, got ${got()}` };
    case 'enum':
      return { path, message: `expected one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${got()}` };
    case 'additionalProperties': {
      const key = String(params['additionalProperty']);
      const allowed = Object.keys(ps?.properties ?? {}).join(', ');
      return { path: join(path, key), message: `unknown key (a typo?): expected one of ${allowed}, got ${describeValue((e.data as Record<string, unknown>)[key])}` };
    }
    case 'required':
      return { path: join(path, String(params['missingProperty'])), message: `expected a value (required here), got nothing` };
    case 'minLength':
      return { path, message: `expected a non-empty string, got ${got()}` };
    case 'minItems':
      return { path, message: `expected at least ${String(params['limit'])} item(s), got ${got()}` };
    case 'uniqueItems':
      return { path, message: `expected each item once, got ${got()}` };
    case 'pattern': {
      const described = (e.parentSchema as { description?: unknown } | undefined)?.description;
      return { path, message: `expected ${typeof described === 'string' ? described : `a string matching ${String(params['pattern'])}`}, got ${got()}` };
    }
    case 'maximumLagSize':
      return { path, message: `expected ${SIZE_EXPECTED}, got ${got()}` };
    case 'durationSeconds':
      return { path, message: `expected ${DURATION_EXPECTED}, got ${got()}` };
    case 'syncNodeLag':
      return { path, message: `expected -1 (off), ${SIZE_EXPECTED}, got ${got()}` };
    default:
      return { path, message: `${e.message ?? 'invalid'}, got ${got()}` };
  }
}

/** Every schema problem of a dynamic configuration document, in document order. */
export function schemaProblems(raw: unknown): Problem[] {
  const validate = dynamicConfigValidators().document;
  if (validate(raw)) return [];
  return (validate.errors ?? []).map(toProblem).filter((p): p is Problem => p !== null);
}
