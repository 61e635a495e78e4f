import type { Cluster, Member } from '../../../../src/domain/cluster/model/cluster.js';
import { jsonText, RawJson, Random } from '../http/fuzz-kit.js';

/**
 * Generators of what may sit under a cluster's keys in etcd (the values this version writes,
 * mutated field by field; Patroni's own formats; another key's value; JSON of the wrong shape;
 * no JSON at all; huge and deeply nested values), and the check that a decoded cluster holds
 * only the types the domain declares. Used by codec-fuzz.test.ts.
 */

export { Random };

/** The system identifier of the generated cluster (the local facts of the fuzz test carry it too). */
export const SYSID = '7300000000000000001';
/** "Now" of the fuzz cases (the HA fixtures' NOW: 2024-01-01T12:00:00Z). */
export const FUZZ_NOW = Date.UTC(2024, 0, 1, 12);

/** A raw store: key relative to the cluster prefix -> value as written. */
export type RawStore = Map<string, string>;

/** One generated store and what was done to it (for the report). */
export interface GeneratedStore {
  readonly store: RawStore;
  readonly notes: readonly string[];
}

const MEMBERS = ['node1', 'node2', 'node3'] as const;
const PLAIN_KEYS = ['initialize', 'config', 'leader', 'failover', 'sync', 'history', 'status', 'failsafe'] as const;
type PlainKey = (typeof PLAIN_KEYS)[number];
type Json = Record<string, unknown>;

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

// ------------------------------------------------------------------ valid values (this version)

function memberValue(rng: Random, name: string, leader: boolean): Json {
  const n = Number(name.replace(/\D/g, '') || 0);
  const base: Json = {
    conn_url: `postgres://${name}:5432/postgres`,
    api_url: `http://${name}:8008`,
    state: 'running',
    role: leader ? 'primary' : 'replica',
    version: '0.1.0',
    timeline: 2,
  };
  if (leader) base['xlog_location'] = 5000;
  else Object.assign(base, { receive_lsn: 5000 - n, replay_lsn: 4990 - n, replication_state: 'streaming' });
  if (rng.chance(0.4)) base['tags'] = rng.pick<Json>([{ zone: 'a' }, { nofailover: true }, { failover_priority: 2, sync_priority: 1 }, { nosync: true }, { replicatefrom: 'node3' }, { clonefrom: true, noloadbalance: 'true' }]);
  if (rng.chance(0.2)) Object.assign(base, { pending_restart: true, pending_restart_reason: { shared_buffers: { old_value: '128MB', new_value: '256MB' } } });
  if (rng.chance(0.35)) base['scheduled_restart'] = { schedule: iso(FUZZ_NOW + 3_600_000), restart_pending: true, role: 'replica', db_version: '15.4', timeout: 30 };
  if (rng.chance(0.3)) base['server_version'] = 150004;
  if (rng.chance(0.2)) base['safety_margin'] = 5;
  if (leader && rng.chance(0.2)) base['checkpoint_after_promote'] = rng.chance(0.5);
  return base;
}

function configValue(rng: Random): Json {
  const c: Json = {};
  if (rng.chance(0.5)) Object.assign(c, { ttl: 30, loop_wait: 10, retry_timeout: 10 });
  if (rng.chance(0.3)) c['maximum_lag_on_failover'] = rng.pick<unknown>([1_048_576, '16MB', 0]);
  const sync = rng.weighted({ off: 5, on: 2, strict: 1, quorum: 2 });
  if (sync === 'on') c['synchronous_mode'] = true;
  if (sync === 'strict') Object.assign(c, { synchronous_mode: true, synchronous_mode_strict: true });
  if (sync === 'quorum') Object.assign(c, { synchronous_mode: 'quorum', synchronous_node_count: 2 });
  if (rng.chance(0.15)) c['pause'] = true;
  if (rng.chance(0.2)) c['failsafe_mode'] = true;
  if (rng.chance(0.2)) c['check_timeline'] = true;
  if (rng.chance(0.2)) c['db'] = { use_pg_rewind: true, use_slots: true, parameters: { max_connections: 100, wal_level: 'replica' } };
  if (rng.chance(0.1)) c['slots'] = { archiver: { type: 'physical' } };
  if (rng.chance(0.05)) c['standby_cluster'] = { host: '10.0.0.9', port: 5432 };
  return c;
}

/** A value this version writes for `key`, as a JSON-able value (initialize and leader are plain strings). */
function validValue(rng: Random, key: PlainKey): unknown {
  switch (key) {
    case 'initialize':
      return SYSID;
    case 'leader':
      return 'node1';
    case 'config':
      return configValue(rng);
    case 'failover':
      return rng.pick<Json>([
        {},
        { leader: 'node1', member: 'node2' },
        { leader: 'node1' },
        { member: 'node3' },
        { leader: 'node1', member: 'node2', scheduled_at: iso(FUZZ_NOW + 60_000) },
        { leader: 'node1', member: 'node3', scheduled_at: iso(FUZZ_NOW - 60_000) },
      ]);
    case 'sync':
      return rng.pick<Json>([
        { leader: 'node1', sync_standby: ['node2'], quorum: 0 },
        { leader: 'node1', sync_standby: ['node2', 'node3'], quorum: 1 },
        { leader: 'node1', sync_standby: [], quorum: 0 },
      ]);
    case 'history':
      return [[1, 4000, 'no recovery target specified', iso(FUZZ_NOW - 86_400_000), 'node1']];
    case 'status':
      return { optime: 5000, slots: { node2: 4990, node3: 4980 }, ...(rng.chance(0.5) ? { retain_slots: ['node1', 'node2', 'node3'] } : {}) };
    case 'failsafe':
      return Object.fromEntries(MEMBERS.map((m) => [m, `http://${m}:8008`]));
  }
}

// ------------------------------------------------------------------ Patroni's formats

function patroniValue(rng: Random, key: string): string {
  switch (key.startsWith('members/') ? 'member' : key) {
    case 'member': {
      const primary = rng.chance(0.3);
      return JSON.stringify({
        conn_url: `postgres://10.0.0.2:5432/postgres`,
        api_url: `http://10.0.0.2:8008/patroni`,
        state: rng.pick(['running', 'streaming', 'starting', 'stopped', 'in archive recovery']),
        role: primary ? rng.pick(['master', 'primary']) : rng.pick(['replica', 'standby_leader', 'sync_standby']),
        version: rng.pick(['2.1.4', '3.0.2', '4.0.1']),
        xlog_location: rng.pick<unknown>([50331808, 0, 1234567890123]),
        timeline: rng.pick<unknown>([1, 7]),
        ...(rng.chance(0.5) ? { replication_state: 'streaming' } : {}),
        ...(rng.chance(0.5) ? { tags: { nofailover: false, clonefrom: true, noloadbalance: false, nosync: false } } : {}),
        ...(rng.chance(0.2) ? { pending_restart: true, pending_restart_reason: { max_connections: { old_value: '100', new_value: '200' } } } : {}),
        ...(rng.chance(0.2) ? { scheduled_restart: { schedule: '2030-01-01T00:00:00+00:00', postmaster_start_time: '2023-01-01 00:00:00.000 UTC' } } : {}),
        ...(rng.chance(0.2) ? { proxy_url: 'postgres://10.0.0.9:6432/postgres', pause: true } : {}),
        ...(rng.chance(0.2) ? { checkpoint_after_promote: true } : {}),
      });
    }
    case 'config':
      return JSON.stringify({
        ttl: 30,
        loop_wait: 10,
        retry_timeout: 10,
        maximum_lag_on_failover: 1048576,
        postgresql: { use_pg_rewind: true, use_slots: true, parameters: { max_connections: 100, wal_level: 'replica', hot_standby: 'on' }, pg_hba: ['host all all 0.0.0.0/0 md5'] },
        ...(rng.chance(0.3) ? { synchronous_mode: true, synchronous_mode_strict: false } : {}),
        ...(rng.chance(0.2) ? { master_start_timeout: 300 } : {}),
        ...(rng.chance(0.2) ? { pause: true } : {}),
        ...(rng.chance(0.2) ? { standby_cluster: { host: '10.0.0.9', port: 5432, create_replica_methods: ['basebackup'] } } : {}),
      });
    case 'history':
      return JSON.stringify(
        rng.pick<unknown[]>([
          [[1, 25165984, 'no recovery target specified', '2023-03-01T10:00:00.123456+00:00', 'node1'], [2, 50331808, 'no recovery target specified', '2023-03-02T10:00:00+00:00']],
          [[1, 25165984, 'no recovery target specified']],
          [],
        ]),
      );
    case 'sync':
      return JSON.stringify(rng.pick<Json>([{ leader: 'node1', sync_standby: 'node2' }, { leader: 'node1', sync_standby: 'node2,node3', quorum: 1 }, { leader: 'node1', sync_standby: null }, { leader: null, sync_standby: null }]));
    case 'failover':
      return JSON.stringify(rng.pick<Json>([{ leader: 'node1', member: 'node2', scheduled_at: '2023-03-01T10:00:00+00:00' }, { member: 'node3' }, { leader: 'node1' }]));
    case 'status':
      return rng.chance(0.3) ? '50331808' : JSON.stringify({ optime: 50331808, slots: { node2: 50331808, pgoutput_slot: 50331000 }, retain_slots: ['node1', 'node2', 'node3'] });
    case 'initialize':
      return rng.pick(['7207434297542811111', '']);
    case 'failsafe':
      return JSON.stringify({ node1: 'http://10.0.0.1:8008/patroni', node2: 'http://10.0.0.2:8008/patroni' });
    case 'leader':
      return rng.pick(['node1', 'node2']);
    default:
      return '{}';
  }
}

// ------------------------------------------------------------------ evil values

const LONG = 'x'.repeat(70_000);

/** Strings that are valid JSON strings but bad as any field. */
function evilString(rng: Random): string {
  return rng.pick([
    '',
    ' ',
    'node1',
    'node2',
    'node9',
    ' node2',
    'node2\n',
    'NaN',
    'Infinity',
    '-Infinity',
    '-1',
    '0',
    '1e30',
    '99999999999999999999999999',
    '0/ZZ',
    '0/3000060',
    'FFFFFFFF/FFFFFFFF',
    'true',
    'null',
    '{}',
    '[]',
    'é',
    '😀',
    '\u0000',
    '\ud800',
    '\u2028',
    '<script>',
    '__proto__',
    'now',
    '2030-13-45T99:99:99Z',
    '2024-01-01T11:59:00Z',
    '2024-01-01T12:01:00+00:00',
    '+275760-09-13T00:00:00.000Z',
    'postgres://',
    'http://[::1',
    'primary',
    'master',
    'replica',
    'standby_leader',
    'uninitialized',
    'streaming',
    LONG.slice(0, rng.pick([300, 5000, 70_000])),
  ]);
}

/** Any JSON value a field might be replaced by (RawJson: written verbatim). */
function evilValue(rng: Random, depth = 0): unknown {
  const kind = rng.weighted({ number: 5, string: 5, literal: 3, array: 2, object: 2, nested: 2 });
  switch (kind) {
    case 'number':
      return rng.pick<unknown>([
        0,
        -0,
        1,
        -1,
        -5000,
        1.5,
        0.1,
        2 ** 31,
        2 ** 32,
        2 ** 53,
        2 ** 53 + 2,
        2 ** 64,
        1e30,
        -1e30,
        1e308,
        Number.MIN_VALUE,
        new RawJson('1e999'),
        new RawJson('-1e999'),
        new RawJson('123456789012345678901234567890'),
        new RawJson('1E400'),
        new RawJson('-0.0'),
      ]);
    case 'string':
      return evilString(rng);
    case 'literal':
      return rng.pick<unknown>([null, true, false]);
    case 'array':
      return depth > 2 ? [] : rng.pick<unknown>([[], [1], ['a', 'b'], [null], [evilValue(rng, depth + 1)], [[1, 2, 'x']]]);
    case 'object':
      return depth > 2
        ? {}
        : rng.pick<unknown>([
            {},
            { a: 1 },
            { __proto__x: 1 },
            { schedule: evilValue(rng, depth + 1) },
            { schedule: '2030-01-01T00:00:00Z', [rng.pick(['role', 'timeout', 'x'])]: evilValue(rng, depth + 1) },
            { old_value: 1, new_value: null },
            { shared_buffers: { old_value: evilValue(rng, depth + 1), new_value: '1' } },
            JSON.parse('{"__proto__":{"polluted":1}}'),
          ]);
    case 'nested':
      return new RawJson(nested(rng));
  }
}

/** Deeply nested JSON text (arrays or objects), deep enough to break a recursive JSON.stringify at times. */
function nested(rng: Random): string {
  const d = rng.pick([50, 500, 3000, 12_000, 40_000]);
  return rng.chance(0.5) ? `${'['.repeat(d)}${']'.repeat(d)}` : `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`;
}

/** Field names a mutation may add. */
const EXTRA_FIELDS = ['x', 'extra', '', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'é', 'a'.repeat(300), 'leader', 'name', 'optime', 'role', 'future_field'];

/** One to three field mutations of a JSON object or array value. */
function mutateJson(rng: Random, v: unknown, notes: string[]): unknown {
  if (Array.isArray(v)) {
    const out = [...v];
    const what = rng.weighted({ element: 4, drop: 1, add: 1, inner: 3 });
    if (what === 'element' || out.length === 0) {
      const i = rng.int(0, Math.max(0, out.length - 1));
      out[i] = evilValue(rng);
      notes.push(`[${i}] replaced`);
    } else if (what === 'drop') {
      out.splice(rng.int(0, out.length - 1), 1);
      notes.push('an element dropped');
    } else if (what === 'add') {
      out.push(evilValue(rng));
      notes.push('an element added');
    } else {
      const i = rng.int(0, out.length - 1);
      out[i] = Array.isArray(out[i]) ? mutateJson(rng, out[i], notes) : evilValue(rng);
      notes.push(`[${i}] mutated`);
    }
    return out;
  }
  if (v === null || typeof v !== 'object') return evilValue(rng);
  const obj: Json = { ...(v as Json) };
  const n = rng.int(1, 3);
  for (let k = 0; k < n; k++) {
    const fields = Object.keys(obj);
    const what = fields.length === 0 ? 'add' : rng.weighted({ type: 6, drop: 2, nullify: 2, add: 2, inner: 2, deep: 1 });
    const field = fields.length ? rng.pick(fields) : '';
    if (what === 'deep') {
      // Deep nesting where a reader may pass it on whole: the field itself, or a field of an object field.
      const inner = obj[field];
      if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
        const sub = Object.keys(inner as Json);
        const at = sub.length && rng.chance(0.7) ? rng.pick(sub) : 'x';
        obj[field] = { ...(inner as Json), [at]: new RawJson(nested(rng)) };
        notes.push(`${field}.${at}: deeply nested`);
      } else {
        obj[field] = new RawJson(nested(rng));
        notes.push(`${field}: deeply nested`);
      }
    } else if (what === 'type') {
      obj[field] = evilValue(rng);
      notes.push(`${field}: wrong value`);
    } else if (what === 'drop') {
      delete obj[field];
      notes.push(`${field}: dropped`);
    } else if (what === 'nullify') {
      obj[field] = null;
      notes.push(`${field}: null`);
    } else if (what === 'add') {
      const extra = rng.pick(EXTRA_FIELDS);
      Object.defineProperty(obj, extra, { value: evilValue(rng), enumerable: true, configurable: true, writable: true });
      notes.push(`extra field ${JSON.stringify(extra.slice(0, 20))}`);
    } else {
      const inner = obj[field];
      obj[field] = inner !== null && typeof inner === 'object' ? mutateJson(rng, inner, notes) : evilValue(rng);
      notes.push(`${field}: mutated inside`);
    }
  }
  return obj;
}

/** The value with deep nesting put inside one of its objects or arrays (at any depth), where a reader may pass it on whole. */
function deepen(rng: Random, v: unknown, notes: string[]): unknown {
  const copy = JSON.parse(JSON.stringify(v)) as unknown;
  const containers: { node: Json | unknown[]; path: string }[] = [];
  const walk = (x: unknown, path: string) => {
    if (x === null || typeof x !== 'object') return;
    containers.push({ node: x as Json | unknown[], path });
    for (const [k, y] of Object.entries(x as Json)) walk(y, `${path}.${k}`);
  };
  walk(copy, '');
  const { node, path } = rng.pick(containers);
  const keys = Object.keys(node);
  const at = keys.length && rng.chance(0.7) ? rng.pick(keys) : Array.isArray(node) ? String(node.length) : 'x';
  (node as Json)[at] = new RawJson(nested(rng));
  notes.push(`${path}.${at}: deeply nested`);
  return copy;
}

/** Text that is not JSON, or not quite. */
function notJson(rng: Random, valid: string): string {
  return rng.pick([
    '',
    ' ',
    '\n',
    'NaN',
    'Infinity',
    'undefined',
    "{'a': 1}",
    '{a:1}',
    '{"a":1,}',
    '[1,2',
    '{"a":',
    valid.slice(0, Math.max(0, Math.floor(valid.length / 2))),
    valid.slice(0, Math.max(0, valid.length - 1)),
    `${valid}}`,
    `${valid} trailing`,
    `\ufeff${valid}`,
    `${valid}\u0000`,
    '\u0000\u0001\u0002',
    'ÿþ\u00fe',
    '{"a":1}{"b":2}',
    '{"a":"\\ud800"}',
    '"unterminated',
    'tru',
    LONG,
  ]);
}

/** JSON of the wrong shape for an object key. */
function wrongShape(rng: Random): string {
  return rng.pick(['null', 'true', 'false', '0', '-1', '1e999', '"node1"', '""', '[]', '[{}]', '[["a"]]', '{}', '[1,100,"x"]', `"${'y'.repeat(1000)}"`, nested(rng)]);
}

// ------------------------------------------------------------------ the store

/** The raw value of `key` in a valid store of this version. */
function validText(rng: Random, key: string): string {
  if (key.startsWith('members/')) return JSON.stringify(memberValue(rng, key.slice('members/'.length), key === 'members/node1'));
  const v = validValue(rng, key as PlainKey);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A garbled value for `key`, and how it was made. */
export function garbage(rng: Random, key: string, allKeys: readonly string[]): { value: string; note: string } {
  const valid = validText(rng, key);
  const plainString = key === 'leader' || key === 'initialize';
  const how = rng.weighted({ mutate: plainString ? 0 : 8, deepen: plainString ? 0 : 2, patroni: 3, other: 2, shape: 2, notJson: 2, huge: 1, leaderish: plainString ? 6 : 0 });
  switch (how) {
    case 'deepen': {
      const notes: string[] = [];
      const text = jsonText(deepen(rng, JSON.parse(valid), notes));
      return { value: text, note: notes.join('; ') };
    }
    case 'mutate': {
      const notes: string[] = [];
      const text = jsonText(mutateJson(rng, JSON.parse(valid), notes));
      return { value: text, note: `mutated (${notes.join('; ')})` };
    }
    case 'patroni':
      return { value: patroniValue(rng, key), note: "Patroni's format" };
    case 'other': {
      const other = rng.pick(allKeys.filter((k) => k !== key));
      return { value: rng.chance(0.5) ? validText(rng, other) : patroniValue(rng, other), note: `the value of ${other}` };
    }
    case 'shape':
      return { value: wrongShape(rng), note: 'JSON of the wrong shape' };
    case 'notJson':
      return { value: notJson(rng, valid), note: 'not JSON' };
    case 'huge':
      return { value: rng.chance(0.5) ? nested(rng) : jsonText({ big: LONG, list: Array.from({ length: 2000 }, (_, i) => i) }), note: 'huge' };
    case 'leaderish':
      return { value: rng.chance(0.3) ? evilString(rng) : notJson(rng, valid), note: 'odd text' };
  }
  return { value: valid, note: 'valid' };
}

/** Odd member names (key suffixes). */
const ODD_MEMBER_NAMES = ['node4', 'é', 'a/b', ' node2', 'node2 ', '__proto__', 'constructor', 'toString', 'x'.repeat(300), '😀', 'node1/extra', '.', '..'];

/**
 * A store as a running cluster of this version would hold it (node1 leads node2 and node3),
 * then one to four keys garbled, deleted or added.
 */
export function generateStore(rng: Random): GeneratedStore {
  const store: RawStore = new Map();
  const notes: string[] = [];
  for (const m of MEMBERS) store.set(`members/${m}`, validText(rng, `members/${m}`));
  for (const k of PLAIN_KEYS) {
    const optional = k === 'failover' || k === 'sync' || k === 'failsafe';
    if (!optional || rng.chance(0.5)) store.set(k, validText(rng, k));
  }
  const allKeys = [...PLAIN_KEYS, ...MEMBERS.map((m) => `members/${m}`)];
  const n = rng.weighted({ one: 4, two: 3, three: 2, many: 1 });
  const count = n === 'one' ? 1 : n === 'two' ? 2 : n === 'three' ? 3 : rng.int(4, 8);
  for (let i = 0; i < count; i++) {
    const what = rng.weighted({ garble: 12, delete: 1, oddMember: 1 });
    if (what === 'oddMember') {
      const key = `members/${rng.pick(ODD_MEMBER_NAMES)}`;
      const g = rng.chance(0.5) ? { value: validText(rng, 'members/node4'), note: 'valid' } : garbage(rng, 'members/node4', allKeys);
      store.set(key, g.value);
      notes.push(`${key}: added, ${g.note}`);
      continue;
    }
    const key = rng.pick(allKeys);
    if (what === 'delete') {
      store.delete(key);
      notes.push(`${key}: deleted`);
      continue;
    }
    const g = garbage(rng, key, allKeys);
    store.set(key, g.value);
    notes.push(`${key}: ${g.note}`);
  }
  return { store, notes };
}

/** The store for a report: every key with its value (long values cut, every byte recoverable from the seed). */
export function describeStore(g: GeneratedStore): string {
  const lines = [...g.store].map(([k, v]) => `    ${k} = ${JSON.stringify(v.length > 400 ? `${v.slice(0, 400)}` : v)}${v.length > 400 ? ` ...(${v.length} chars)` : ''}`);
  return `  changes: ${g.notes.join(' | ')}\n${lines.join('\n')}`;
}

// ------------------------------------------------------------------ decoded types

const isStr = (v: unknown): v is string => typeof v === 'string';
const isLsn = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isTimeline = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && v <= 0xffffffff;
const isPlainObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function memberProblems(m: Member): string[] {
  const p: string[] = [];
  const at = (f: string) => `members/${String(m.name)}.${f}`;
  if (!isStr(m.name) || m.name === '') p.push(at('name'));
  for (const f of ['revision', 'connUrl', 'apiUrl', 'state', 'role', 'version'] as const) if (!isStr(m[f])) p.push(at(f));
  for (const f of ['xlogLocation', 'receiveLsn', 'replayLsn'] as const) if (m[f] !== null && !isLsn(m[f])) p.push(`${at(f)} = ${String(m[f])}`);
  if (m.timeline !== null && !isTimeline(m.timeline)) p.push(`${at('timeline')} = ${String(m.timeline)}`);
  if (m.replicationState !== null && !isStr(m.replicationState)) p.push(at('replicationState'));
  if (!isPlainObject(m.tags)) p.push(at('tags'));
  else for (const [k, v] of Object.entries(m.tags)) if (!(isStr(v) || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) p.push(at(`tags.${k}`));
  if (Object.getPrototypeOf(m.tags) !== Object.prototype && Object.getPrototypeOf(m.tags) !== null) p.push(`${at('tags')}: prototype replaced`);
  if (typeof m.pendingRestart !== 'boolean') p.push(at('pendingRestart'));
  if (m.pendingRestartReason !== null) {
    if (!isPlainObject(m.pendingRestartReason)) p.push(at('pendingRestartReason'));
    else
      for (const [k, v] of Object.entries(m.pendingRestartReason)) {
        if (!isPlainObject(v) || !isStr(v.old_value) || !isStr(v.new_value)) p.push(at(`pendingRestartReason.${k}`));
      }
  }
  const sr = m.scheduledRestart;
  if (sr !== null) {
    if (!isPlainObject(sr) || !isStr(sr.schedule)) p.push(at('scheduledRestart'));
    else {
      if (sr.restart_pending !== undefined && typeof sr.restart_pending !== 'boolean') p.push(at('scheduledRestart.restart_pending'));
      if (sr.role !== undefined && !isStr(sr.role)) p.push(at('scheduledRestart.role'));
      if (sr.db_version !== undefined && !isStr(sr.db_version)) p.push(at('scheduledRestart.db_version'));
      if (sr.timeout !== undefined && !(typeof sr.timeout === 'number' && Number.isFinite(sr.timeout) && sr.timeout >= 0)) p.push(at('scheduledRestart.timeout'));
      for (const k of Object.keys(sr)) if (!['schedule', 'restart_pending', 'role', 'db_version', 'timeout'].includes(k)) p.push(at(`scheduledRestart.${k} (not a field of a scheduled restart)`));
    }
  }
  if (m.checkpointAfterPromote !== undefined && typeof m.checkpointAfterPromote !== 'boolean') p.push(at('checkpointAfterPromote'));
  if (m.serverVersion !== undefined && !(Number.isSafeInteger(m.serverVersion) && m.serverVersion >= 0)) p.push(`${at('serverVersion')} = ${String(m.serverVersion)}`);
  if (m.safetyMargin !== undefined && !(typeof m.safetyMargin === 'number' && Number.isFinite(m.safetyMargin) && m.safetyMargin >= 0)) p.push(`${at('safetyMargin')} = ${String(m.safetyMargin)}`);
  return p;
}

/**
 * Where a decoded cluster holds a value of another type or range than the domain's types
 * say (positions are non-negative integers, timelines 1..2^32-1, tag values scalars...).
 */
export function clusterTypeProblems(c: Cluster): string[] {
  const p: string[] = [];
  if (c.initialize !== null && !isStr(c.initialize)) p.push('initialize');
  if (c.initializeRevision !== null && !isStr(c.initializeRevision)) p.push('initializeRevision');
  if (c.config !== null && (!isPlainObject(c.config.value) || !isStr(c.config.revision))) p.push('config');
  if (c.leader !== null && (!isStr(c.leader.name) || !isStr(c.leader.revision))) p.push('leader');
  if (!Array.isArray(c.members)) p.push('members');
  else {
    const names = new Set<string>();
    for (const m of c.members) {
      p.push(...memberProblems(m));
      if (names.has(m.name)) p.push(`members/${m.name}: twice`);
      names.add(m.name);
    }
  }
  const f = c.failover;
  if (f !== null && (!(f.leader === null || isStr(f.leader)) || !(f.member === null || isStr(f.member)) || !(f.scheduledAt === null || isStr(f.scheduledAt)) || !isStr(f.revision))) p.push('failover');
  if (c.failoverRevision !== null && !isStr(c.failoverRevision)) p.push('failoverRevision');
  const s = c.sync;
  if (s !== null) {
    if (!(s.leader === null || isStr(s.leader)) || !Array.isArray(s.syncStandby) || !s.syncStandby.every(isStr) || !isStr(s.revision)) p.push('sync');
    if (!(Number.isSafeInteger(s.quorum) && s.quorum >= 0)) p.push(`sync.quorum = ${String(s.quorum)}`);
  }
  const h = c.history;
  if (h !== null) {
    if (!Array.isArray(h.lines) || !isStr(h.revision)) p.push('history');
    else
      h.lines.forEach((l, i) => {
        if (!Array.isArray(l) || l.length !== 5 || !isTimeline(l[0]) || !isLsn(l[1]) || !isStr(l[2]) || !(l[3] === null || isStr(l[3])) || !(l[4] === null || isStr(l[4]))) p.push(`history[${i}] = ${JSON.stringify(l)?.slice(0, 100)}`);
      });
  }
  const st = c.status;
  if (st !== null) {
    if (!isLsn(st.optime)) p.push(`status.optime = ${String(st.optime)}`);
    if (!isPlainObject(st.slots)) p.push('status.slots');
    else for (const [k, v] of Object.entries(st.slots)) if (!isLsn(v)) p.push(`status.slots.${k} = ${String(v)}`);
    if (st.retainSlots !== undefined && (!Array.isArray(st.retainSlots) || !st.retainSlots.every(isStr))) p.push('status.retainSlots');
  }
  if (c.failsafe !== null) {
    if (!isPlainObject(c.failsafe)) p.push('failsafe');
    else for (const [k, v] of Object.entries(c.failsafe)) if (!isStr(v)) p.push(`failsafe.${k}`);
  }
  return p;
}
