import { Ajv } from 'ajv';
import type { Problem } from '../../domain/errors.js';
import { ajvProblems } from '../../adapters/http/ajv-problems.js';
import { FORBIDDEN_BASEBACKUP_OPTIONS, type BasebackupOptions } from '../../adapters/database/pg-replica-methods.js';
import { KNOWN_BOOTSTRAP_KEYS, KNOWN_DB_KEYS } from './local-config-sections.js';

/**
 * The method sections of the local file, as Patroni names them: a replica creation method is
 * `db.<name>` and a custom bootstrap method `bootstrap.<name>`, each an object with a
 * `command`. Any other unknown key of those sections stays an unknown field (a typo).
 */

const scalar = { type: ['string', 'number', 'boolean'] } as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;

/** `db.<name>`: a replica creation method. Other keys are options passed as `--<key>=<value>`. */
const REPLICA_METHOD_SCHEMA = {
  type: 'object',
  required: ['command'],
  properties: { command: nonEmpty, keep_data: { type: 'boolean' }, no_params: { type: 'boolean' }, no_leader: { type: 'boolean' } },
  additionalProperties: scalar,
} as const;

/** `bootstrap.<name>`: a custom bootstrap method. */
const BOOTSTRAP_METHOD_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['command'],
  properties: {
    command: nonEmpty,
    no_params: { type: 'boolean' },
    keep_existing_recovery_conf: { type: 'boolean' },
    recovery_conf: { type: 'object', additionalProperties: scalar },
  },
} as const;

const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });
const validateReplicaMethod = ajv.compile(REPLICA_METHOD_SCHEMA);
const validateBootstrapMethod = ajv.compile(BOOTSTRAP_METHOD_SCHEMA);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A method section: an object with a command, under a key the section does not know. */
function isMethodSection(key: string, value: unknown, known: readonly string[]): boolean {
  return !known.includes(key) && isObject(value) && 'command' in value;
}

/** The document without the method sections (for the main schema), and the sections by path. */
export function splitMethodSections(doc: Json): { rest: Json; replica: Record<string, unknown>; bootstrap: Record<string, unknown> } {
  const replica: Record<string, unknown> = {};
  const bootstrap: Record<string, unknown> = {};
  const strip = (section: unknown, known: readonly string[], into: Record<string, unknown>): unknown => {
    if (!isObject(section)) return section;
    const kept: Json = {};
    // Own properties: a key named `__proto__` stays a key (an unknown field), not the prototype.
    const set = (o: Record<string, unknown>, k: string, v: unknown) => Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
    for (const [k, v] of Object.entries(section)) {
      if (isMethodSection(k, v, known)) set(into, k, v);
      else set(kept, k, v);
    }
    return kept;
  };
  const rest: Json = { ...doc };
  if ('db' in doc) rest['db'] = strip(doc['db'], KNOWN_DB_KEYS, replica);
  if ('bootstrap' in doc) rest['bootstrap'] = strip(doc['bootstrap'], KNOWN_BOOTSTRAP_KEYS, bootstrap);
  return { rest, replica, bootstrap };
}

/** A method name as a problem shows it: a name of thousands of characters is cut. */
function shownName(name: string): string {
  return name.length > 60 ? `${name.slice(0, 40)}... (${name.length} characters)` : name;
}

/** Recovery settings Warden sets itself, or that would pause, promote or stop a replica. */
function forbiddenRecoverySetting(name: string): string | null {
  const n = name.toLowerCase();
  if (n === 'primary_conninfo' || n === 'primary_slot_name') return 'Warden sets it from the member it follows';
  if (n === 'standby_mode' || n === 'recovery_target_timeline') return 'Warden sets it';
  if (n.startsWith('recovery_target')) return 'a recovery target would stop a replica from following its upstream';
  return null;
}

/**
 * Every problem of the method sections and the settings that use them: each method against
 * its schema; `db.create_replica_methods` naming `basebackup` or a defined method;
 * `bootstrap.method` naming `initdb` or a defined one; pg_basebackup options Warden sets
 * itself; recovery settings Warden manages; a custom bootstrap's recovery ending otherwise
 * than with a promotion.
 */
export function methodProblems(doc: Json, replica: Record<string, unknown>, bootstrapMethods: Record<string, unknown>): Problem[] {
  const out: Problem[] = [];
  for (const [name, section] of Object.entries(replica)) {
    if (!validateReplicaMethod(section)) out.push(...ajvProblems(validateReplicaMethod.errors, `db.${name}`));
  }
  for (const [name, section] of Object.entries(bootstrapMethods)) {
    if (!validateBootstrapMethod(section)) {
      out.push(...ajvProblems(validateBootstrapMethod.errors, `bootstrap.${name}`));
      continue;
    }
    const action = (section as { recovery_conf?: Json }).recovery_conf?.['recovery_target_action'];
    if (action !== undefined && action !== 'promote') {
      out.push({ path: `bootstrap.${name}.recovery_conf.recovery_target_action`, message: `expected "promote" (the bootstrap ends with a writable primary), got ${JSON.stringify(action)}` });
    }
  }
  const db = isObject(doc['db']) ? doc['db'] : {};
  const methods = db['create_replica_methods'];
  if (Array.isArray(methods)) {
    methods.forEach((m, i) => {
      if (typeof m === 'string' && m !== 'basebackup' && replica[m] === undefined) {
        out.push({ path: `db.create_replica_methods[${i}]`, message: `expected basebackup or a method defined as db.${shownName(m)} (with a command), got ${JSON.stringify(m)}` });
      }
    });
  }
  if (db['basebackup'] !== undefined) {
    try {
      basebackupOptionNames(db['basebackup'] as BasebackupOptions).forEach((n) => {
        if (FORBIDDEN_BASEBACKUP_OPTIONS.includes(n)) out.push({ path: `db.basebackup.${n}`, message: 'Warden sets this pg_basebackup option itself; remove it' });
      });
    } catch {
      // the schema reports the shape
    }
  }
  if (isObject(db['recovery_conf'])) {
    for (const k of Object.keys(db['recovery_conf'])) {
      const why = forbiddenRecoverySetting(k);
      if (why) out.push({ path: `db.recovery_conf.${k}`, message: `cannot be set here: ${why}` });
    }
  }
  const bootstrap = isObject(doc['bootstrap']) ? doc['bootstrap'] : {};
  const sc = isObject(bootstrap['dcs']) && isObject(bootstrap['dcs']['standby_cluster']) ? bootstrap['dcs']['standby_cluster'] : {};
  if (Array.isArray(sc['create_replica_methods'])) {
    sc['create_replica_methods'].forEach((m, i) => {
      if (typeof m === 'string' && m !== 'basebackup' && replica[m] === undefined) {
        out.push({ path: `bootstrap.dcs.standby_cluster.create_replica_methods[${i}]`, message: `expected basebackup or a method this file defines as db.${shownName(m)} (with a command), got ${JSON.stringify(m)}` });
      }
    });
  }
  const method = bootstrap['method'];
  if (typeof method === 'string' && method !== 'initdb' && bootstrapMethods[method] === undefined) {
    out.push({ path: 'bootstrap.method', message: `expected initdb or a method defined as bootstrap.${shownName(method)} (with a command), got ${JSON.stringify(method)}` });
  }
  return out;
}

function basebackupOptionNames(options: BasebackupOptions): string[] {
  if (Array.isArray(options)) return options.flatMap((o: unknown) => (typeof o === 'string' ? [o] : isObject(o) ? Object.keys(o) : []));
  return isObject(options) ? Object.keys(options) : [];
}
