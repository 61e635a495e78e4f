import type { Cluster, ClusterStatus, FailoverKey, HistoryLine, Member, ScheduledRestart, StoredConfig, SyncPromotion, SyncState, TimelineHistory } from '../../domain/cluster/model/cluster.js';
import type { PendingChange } from '../../domain/cluster/model/facts.js';
import type { TagValue } from '../../domain/cluster/model/node.js';
import { parseLsn } from '../../domain/cluster/model/lsn.js';
import { ValidationError, type Problem } from '../../domain/errors.js';
import { ClusterKey, type DcsSnapshot } from './keys.js';

/**
 * The encoding of cluster values in the key-value store (JSON, field names as the spec's
 * store layout gives them). Only the cluster-store adapters use it: the rest of Warden
 * sees typed values.
 */

/** Parse result: the cluster plus every key that could not be read (those keys are treated as absent). */
export interface ParsedCluster {
  readonly cluster: Cluster;
  readonly problems: readonly Problem[];
}

type Json = Record<string, unknown>;

/**
 * How deep a stored value may nest. Nothing Warden or Patroni writes goes past a handful of
 * levels; a value nested thousands deep (a hand edit, a broken writer) would make every
 * recursive reader and writer of it (JSON.stringify answering GET /config or /cluster, the
 * merge of PATCH /config) overflow the stack.
 */
export const MAX_VALUE_DEPTH = 64;

/** Whether `v` nests deeper than `limit` levels of arrays and objects (iterative: safe at any depth). */
function nestsDeeperThan(v: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d >= limit) return true;
    for (const y of Array.isArray(x) ? x : Object.values(x as Json)) if (y !== null && typeof y === 'object') stack.push([y, d + 1]);
  }
  return false;
}

/** The JSON value of a key, or a ValidationError naming the key: not JSON, or nested too deep. */
function jsonValue(key: string, text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ValidationError([{ path: key, message: `not valid JSON (${(e as Error).message})` }], 'malformed_dcs_value');
  }
  if (nestsDeeperThan(parsed, MAX_VALUE_DEPTH)) {
    throw new ValidationError([{ path: key, message: `nested deeper than ${MAX_VALUE_DEPTH} levels` }], 'malformed_dcs_value');
  }
  return parsed;
}

function jsonObject(key: string, text: string): Json {
  const parsed = jsonValue(key, text);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError([{ path: key, message: `expected a JSON object, got ${describe(parsed)}` }], 'malformed_dcs_value');
  }
  return parsed as Json;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? `string ${JSON.stringify(v).slice(0, 40)}` : typeof v;
}

/** The largest timeline PostgreSQL has (TimeLineID is a uint32). */
const MAX_TIMELINE = 0xffffffff;

/** A non-negative integer JS represents exactly, from a number or a string of digits; undefined otherwise. */
function wholeNumber(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** A WAL position: a whole number of bytes, or PostgreSQL's `X/Y` text; undefined otherwise. */
function walPosition(v: unknown): number | undefined {
  const n = typeof v === 'string' && v.includes('/') ? parseLsn(v) : wholeNumber(v);
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

/** A timeline: 1 to 2^32-1; undefined otherwise. */
function timelineOf(v: unknown): number | undefined {
  const n = wholeNumber(v);
  return n !== undefined && n >= 1 && n <= MAX_TIMELINE ? n : undefined;
}

/** Own property of a parsed value, whatever its name (`__proto__` included). */
function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Reads typed fields from a JSON object. A field that is absent or null reads as unknown; one of
 * the wrong type or out of range reads as unknown too, and is recorded in `problems`.
 */
class FieldReader {
  readonly problems: Problem[] = [];
  constructor(private readonly key: string, private readonly obj: Json) {}

  private bad(field: string, expected: string): undefined {
    this.problems.push({ path: `${this.key}.${field}`, message: `expected ${expected}, got ${describe(this.obj[field])}` });
    return undefined;
  }
  private read<T>(field: string, expected: string, conv: (v: unknown) => T | undefined): T | null {
    const v = this.obj[field];
    if (v === undefined || v === null) return null;
    const out = conv(v);
    return out === undefined ? (this.bad(field, expected) ?? null) : out;
  }
  string(field: string): string | null {
    return this.read(field, 'a string', (v) => (typeof v === 'string' ? v : undefined));
  }
  /** A WAL position (bytes, or `X/Y`). */
  lsn(field: string): number | null {
    return this.read(field, 'a WAL position (a whole number of bytes)', walPosition);
  }
  timeline(field: string): number | null {
    return this.read(field, `a timeline (1 to ${MAX_TIMELINE})`, timelineOf);
  }
  /** A whole number >= 0 (a count, a version number). */
  whole(field: string): number | null {
    return this.read(field, 'a whole number', wholeNumber);
  }
  /** A finite number >= 0 (seconds). */
  seconds(field: string): number | null {
    return this.read(field, 'a number of seconds', (v) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined));
  }
  boolean(field: string): boolean | null {
    return this.read(field, 'a boolean', (v) => (typeof v === 'boolean' ? v : undefined));
  }
  object(field: string): Json | null {
    return this.read(field, 'an object', (v) => (typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined));
  }
  has(field: string): boolean {
    return this.obj[field] !== undefined && this.obj[field] !== null;
  }
  /** A list of strings; a string is a comma-separated list (Patroni's sync key). */
  stringList(field: string): string[] | null {
    return this.read(field, 'a list of strings', (v) => {
      if (typeof v === 'string') return v.split(',').map((x) => x.trim()).filter((x) => x !== '');
      return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
    });
  }
  done<T>(value: T): T {
    if (this.problems.length) throw new ValidationError(this.problems, 'malformed_dcs_value');
    return value;
  }
}

/** A value read as far as it could be, with what could not be read. */
export interface Read<T> {
  readonly value: T;
  readonly problems: readonly Problem[];
}

/** The fields of a scheduled restart this version knows; null without a readable `schedule`. */
function scheduledRestartOf(key: string, r: FieldReader): ScheduledRestart | null {
  const sr = r.object('scheduled_restart');
  if (sr === null) return null;
  const f = new FieldReader(`${key}.scheduled_restart`, sr);
  const schedule = f.string('schedule');
  if (schedule === null) {
    if (!f.has('schedule')) r.problems.push({ path: `${key}.scheduled_restart.schedule`, message: 'expected a string, got nothing' });
    r.problems.push(...f.problems);
    return null;
  }
  const out: { -readonly [K in keyof ScheduledRestart]: ScheduledRestart[K] } = { schedule };
  const pending = f.boolean('restart_pending');
  if (pending !== null) out.restart_pending = pending;
  const role = f.string('role');
  if (role !== null) out.role = role;
  const version = f.string('db_version');
  if (version !== null) out.db_version = version;
  const timeout = f.seconds('timeout');
  if (timeout !== null) out.timeout = timeout;
  r.problems.push(...f.problems);
  return Object.freeze(out);
}

/** The parameters waiting for a restart (`{name: {old_value, new_value}}`), the readable ones. */
function pendingReasonOf(key: string, r: FieldReader): Readonly<Record<string, PendingChange>> | null {
  const reason = r.object('pending_restart_reason');
  if (reason === null) return null;
  const out: Record<string, PendingChange> = {};
  const text = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);
  for (const [name, change] of Object.entries(reason)) {
    const c = change !== null && typeof change === 'object' && !Array.isArray(change) ? (change as Json) : null;
    const oldValue = c ? text(c['old_value']) : undefined;
    const newValue = c ? text(c['new_value']) : undefined;
    if (oldValue === undefined || newValue === undefined) {
      r.problems.push({ path: `${key}.pending_restart_reason.${name}`, message: `expected {old_value, new_value}, got ${describe(change)}` });
    } else setOwn(out, name, Object.freeze({ old_value: oldValue, new_value: newValue }));
  }
  return Object.freeze(out);
}

/**
 * Reads a member key's JSON field by field: a field that cannot be read is unknown (a position
 * or timeline null, a string empty, the state `unknown`), and named in `problems`; the member
 * stays in the view: another version's record must not make a member vanish (its slot, its
 * place in the synchronous set and in the race go with it). Null, with the problem, when the
 * value is not a JSON object (nothing of it is a member's record).
 */
export function readMember(name: string, text: string, revision: string): Read<Member | null> {
  const key = ClusterKey.member(name);
  let obj: Json;
  try {
    obj = jsonObject(key, text);
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    return { value: null, problems: e.problems };
  }
  const r = new FieldReader(key, obj);
  const tags = r.object('tags') ?? {};
  const tagValues: Record<string, TagValue> = {};
  for (const [k, v] of Object.entries(tags)) {
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) setOwn(tagValues, k, v);
    else r.problems.push({ path: `${key}.tags.${k}`, message: `expected a string, number or boolean, got ${describe(v)}` });
  }
  // Unreadable, a fresh primary's checkpoint counts as pending: rewinders wait for its next record.
  const checkpoint = obj['checkpoint_after_promote'] === undefined ? null : (r.boolean('checkpoint_after_promote') ?? false);
  const serverVersion = r.whole('server_version');
  const safetyMargin = r.seconds('safety_margin');
  const member: Member = {
    name,
    revision,
    connUrl: r.string('conn_url') ?? '',
    apiUrl: r.string('api_url') ?? '',
    state: r.string('state') ?? 'unknown',
    role: r.string('role') ?? 'uninitialized',
    version: r.string('version') ?? '',
    xlogLocation: r.lsn('xlog_location'),
    receiveLsn: r.lsn('receive_lsn'),
    replayLsn: r.lsn('replay_lsn'),
    replicationState: r.string('replication_state'),
    timeline: r.timeline('timeline'),
    tags: Object.freeze(tagValues),
    pendingRestart: r.boolean('pending_restart') ?? false,
    pendingRestartReason: pendingReasonOf(key, r),
    scheduledRestart: scheduledRestartOf(key, r),
    ...(checkpoint === null ? {} : { checkpointAfterPromote: checkpoint }),
    ...(serverVersion === null ? {} : { serverVersion }),
    ...(safetyMargin === null ? {} : { safetyMargin }),
  };
  return { value: Object.freeze(member), problems: r.problems };
}

/** Parses a member key's JSON. Throws ValidationError naming every bad field (see readMember for the tolerant read). */
export function parseMember(name: string, text: string, revision: string): Member {
  const { value, problems } = readMember(name, text, revision);
  if (problems.length || value === null) throw new ValidationError(problems, 'malformed_dcs_value');
  return value;
}

/** Serializes a member to its key's JSON, omitting unknown values. */
export function memberToJson(m: Omit<Member, 'name' | 'revision'>): string {
  const out: Json = { conn_url: m.connUrl, api_url: m.apiUrl, state: m.state, role: m.role, version: m.version };
  if (m.xlogLocation !== null) out['xlog_location'] = m.xlogLocation;
  if (m.receiveLsn !== null) out['receive_lsn'] = m.receiveLsn;
  if (m.replayLsn !== null) out['replay_lsn'] = m.replayLsn;
  if (m.replicationState !== null) out['replication_state'] = m.replicationState;
  if (m.timeline !== null) out['timeline'] = m.timeline;
  if (Object.keys(m.tags).length) out['tags'] = m.tags;
  if (m.pendingRestart) {
    out['pending_restart'] = true;
    if (m.pendingRestartReason) out['pending_restart_reason'] = m.pendingRestartReason;
  }
  if (m.scheduledRestart) out['scheduled_restart'] = m.scheduledRestart;
  if (m.checkpointAfterPromote !== undefined) out['checkpoint_after_promote'] = m.checkpointAfterPromote;
  if (m.serverVersion !== undefined) out['server_version'] = m.serverVersion;
  if (m.safetyMargin !== undefined) out['safety_margin'] = m.safetyMargin;
  return JSON.stringify(out);
}

/** Parses the failover key; `{}` (a cancelled request) parses to null. */
export function parseFailover(text: string, revision: string): FailoverKey | null {
  if (text.trim() === '') return null;
  const r = new FieldReader(ClusterKey.failover, jsonObject(ClusterKey.failover, text));
  const key: FailoverKey = {
    leader: r.string('leader'),
    member: r.string('member'),
    scheduledAt: r.string('scheduled_at'),
    revision,
  };
  r.done(key);
  return key.leader === null && key.member === null ? null : Object.freeze(key);
}

/** Serializes a failover request; null gives `{}` (the cancelled form). */
export function failoverToJson(f: Omit<FailoverKey, 'revision'> | null): string {
  if (!f) return '{}';
  const out: Json = {};
  if (f.leader) out['leader'] = f.leader;
  if (f.member) out['member'] = f.member;
  if (f.scheduledAt) out['scheduled_at'] = f.scheduledAt;
  return JSON.stringify(out);
}

/** Parses the sync key (`sync_standby` a list, or Patroni's comma-separated string). Throws ValidationError. */
export function parseSync(text: string, revision: string): SyncState {
  const r = new FieldReader(ClusterKey.sync, jsonObject(ClusterKey.sync, text));
  const promoting = syncPromotionOf(r);
  const value: SyncState = {
    leader: r.string('leader'),
    syncStandby: Object.freeze(r.stringList('sync_standby') ?? []),
    quorum: r.whole('quorum') ?? 0,
    ...(promoting ? { promoting } : {}),
    revision,
  };
  // A quorum above the standbys listed is this version's own (strict quorum mode with fewer standbys than synchronous_node_count: commits wait).
  return r.done(Object.freeze(value));
}

/** The sync key's `promoting` record (`{timeline, replaced: {leader, sync_standby, quorum}}`); null when absent. */
function syncPromotionOf(r: FieldReader): SyncPromotion | null {
  const p = r.object('promoting');
  if (p === null) return null;
  const f = new FieldReader(`${ClusterKey.sync}.promoting`, p);
  const timeline = f.timeline('timeline');
  const replaced = f.object('replaced');
  if (timeline === null) f.problems.push({ path: `${ClusterKey.sync}.promoting.timeline`, message: 'expected a timeline, got nothing' });
  if (replaced === null) f.problems.push({ path: `${ClusterKey.sync}.promoting.replaced`, message: 'expected an object, got nothing' });
  let out: SyncPromotion | null = null;
  if (timeline !== null && replaced !== null) {
    const k = new FieldReader(`${ClusterKey.sync}.promoting.replaced`, replaced);
    const key = { leader: k.string('leader'), syncStandby: Object.freeze(k.stringList('sync_standby') ?? []), quorum: k.whole('quorum') ?? 0 };
    f.problems.push(...k.problems);
    out = Object.freeze({ timeline, replaced: Object.freeze(key) });
  }
  r.problems.push(...f.problems);
  return f.problems.length ? null : out;
}

/**
 * The sync key as the domain reads it: an unreadable one is not "no sync key" (any standby
 * could then be promoted in synchronous mode) but a key that names no standby and no leader:
 * no standby is known to hold every commit, and the leader replaces it by compare-and-set on
 * its revision.
 */
export function readSync(text: string, revision: string): Read<SyncState> {
  try {
    return { value: parseSync(text, revision), problems: [] };
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    return { value: Object.freeze({ leader: null, syncStandby: Object.freeze([]), quorum: 0, revision }), problems: e.problems };
  }
}

/** Serializes the sync key. */
export function syncToJson(s: Omit<SyncState, 'revision'>): string {
  const p = s.promoting;
  const promoting = p ? { promoting: { timeline: p.timeline, replaced: { leader: p.replaced.leader, sync_standby: p.replaced.syncStandby, quorum: p.replaced.quorum } } } : {};
  return JSON.stringify({ leader: s.leader, sync_standby: s.syncStandby, quorum: s.quorum, ...promoting });
}

/** Parses the status key (`{optime, slots}`). Throws ValidationError (see readStatus for the tolerant read). */
export function parseStatus(text: string, revision: string): ClusterStatus {
  const { value, problems } = readStatus(text, revision);
  if (problems.length) throw new ValidationError(problems, 'malformed_dcs_value');
  return value!;
}

/**
 * Reads the status key field by field: an unreadable optime reads as 0 (no position known, as
 * when absent), an unreadable slot position or `retain_slots` is left out. Null when the value
 * is not a JSON object (Patroni's older plain `optime` number included).
 */
export function readStatus(text: string, revision: string): Read<ClusterStatus | null> {
  let obj: Json;
  try {
    obj = jsonObject(ClusterKey.status, text);
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    return { value: null, problems: e.problems };
  }
  const r = new FieldReader(ClusterKey.status, obj);
  const slots = r.object('slots') ?? {};
  const slotValues: Record<string, number> = {};
  for (const [k, v] of Object.entries(slots)) {
    const pos = walPosition(v);
    if (pos !== undefined) setOwn(slotValues, k, pos);
    else r.problems.push({ path: `status.slots.${k}`, message: `expected a WAL position (a whole number of bytes), got ${describe(v)}` });
  }
  const retainSlots = r.stringList('retain_slots');
  const value: ClusterStatus = { optime: r.lsn('optime') ?? 0, slots: Object.freeze(slotValues), ...(retainSlots !== null ? { retainSlots: Object.freeze(retainSlots) } : {}), revision };
  return { value: Object.freeze(value), problems: r.problems };
}

/** Serializes the status key (`retain_slots` only when given, as Patroni writes it). */
export function statusToJson(s: Omit<ClusterStatus, 'revision'>): string {
  return JSON.stringify({ optime: s.optime, slots: s.slots, ...(s.retainSlots ? { retain_slots: s.retainSlots } : {}) });
}

/** Parses the history key: a JSON array of `[timeline, lsn, reason, timestamp?, new_leader?]`. */
export function parseHistory(text: string, revision: string): TimelineHistory {
  const parsed = jsonValue('history', text);
  if (!Array.isArray(parsed)) {
    throw new ValidationError([{ path: 'history', message: `expected a JSON array, got ${describe(parsed)}` }], 'malformed_dcs_value');
  }
  const problems: Problem[] = [];
  const lines: HistoryLine[] = [];
  parsed.forEach((line: unknown, i) => {
    const timeline = Array.isArray(line) ? timelineOf(line[0]) : undefined;
    const lsn = Array.isArray(line) ? walPosition(line[1]) : undefined;
    if (!Array.isArray(line) || timeline === undefined || lsn === undefined || typeof line[2] !== 'string') {
      problems.push({ path: `history[${i}]`, message: `expected [timeline, lsn, reason, timestamp, new_leader], got ${JSON.stringify(line)?.slice(0, 80) ?? describe(line)}` });
      return;
    }
    const ts = typeof line[3] === 'string' ? line[3] : null;
    const who = typeof line[4] === 'string' ? line[4] : null;
    lines.push(Object.freeze([timeline, lsn, line[2], ts, who] as const));
  });
  if (problems.length) throw new ValidationError(problems, 'malformed_dcs_value');
  return Object.freeze({ lines: Object.freeze(lines), revision });
}

/** Serializes the history key. */
export function historyToJson(lines: readonly HistoryLine[]): string {
  return JSON.stringify(lines);
}

/** Parses the failsafe key: an object of member name -> api_url. */
export function parseFailsafe(text: string): Readonly<Record<string, string>> {
  const obj = jsonObject(ClusterKey.failsafe, text);
  const problems: Problem[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v !== 'string') problems.push({ path: `failsafe.${k}`, message: `expected a string, got ${describe(v)}` });
  }
  if (problems.length) throw new ValidationError(problems, 'malformed_dcs_value');
  return Object.freeze(obj as Record<string, string>);
}

/** The configuration key as the domain reads it: an unreadable one (null) is empty and marked unreadable. */
function storedConfigOf(value: Json | null, revision: string): StoredConfig {
  return Object.freeze(value === null ? { value: Object.freeze({}), revision, unreadable: true as const } : { value: Object.freeze(value), revision });
}

/**
 * Builds the cluster view from one prefix read. What cannot be read is reported in
 * `problems` (one bad write must not stop every agent's loop) and read the safe way: a member
 * record field by field (see readMember), the sync key as naming nobody (see readSync), the
 * configuration as empty, and the leader key, whatever it holds, as held (by the name it
 * holds, even an empty one: an unreadable leader key is not a free one). Other keys that
 * cannot be read are treated as absent.
 */
export function parseCluster(snapshot: DcsSnapshot): ParsedCluster {
  const problems: Problem[] = [];
  const attempt = <T>(fn: () => T): T | null => {
    try {
      return fn();
    } catch (e) {
      if (e instanceof ValidationError) problems.push(...e.problems);
      else throw e;
      return null;
    }
  };
  const tolerant = <T>(read: Read<T>): T => {
    problems.push(...read.problems);
    return read.value;
  };
  const get = (k: string) => snapshot.get(k);
  const members: Member[] = [];
  for (const [key, entry] of snapshot) {
    if (!key.startsWith(ClusterKey.membersPrefix)) continue;
    const name = key.slice(ClusterKey.membersPrefix.length);
    if (!name) continue;
    const m = tolerant(readMember(name, entry.value, entry.revision));
    if (m) members.push(m);
  }
  members.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const leaderEntry = get(ClusterKey.leader);
  const configEntry = get(ClusterKey.config);
  const cluster: Cluster = {
    initialize: get(ClusterKey.initialize)?.value ?? null,
    initializeRevision: get(ClusterKey.initialize)?.revision ?? null,
    // An unreadable configuration reads as empty, marked so, and keeps its revision, so it can be replaced by compare-and-set.
    config: configEntry ? storedConfigOf(attempt(() => jsonObject(ClusterKey.config, configEntry.value)), configEntry.revision) : null,
    leader: leaderEntry ? Object.freeze({ name: leaderEntry.value, revision: leaderEntry.revision }) : null,
    members: Object.freeze(members),
    failover: ((e) => (e ? attempt(() => parseFailover(e.value, e.revision)) : null))(get(ClusterKey.failover)),
    failoverRevision: get(ClusterKey.failover)?.revision ?? null,
    sync: ((e) => (e ? tolerant(readSync(e.value, e.revision)) : null))(get(ClusterKey.sync)),
    history: ((e) => (e ? attempt(() => parseHistory(e.value, e.revision)) : null))(get(ClusterKey.history)),
    status: ((e) => (e ? tolerant(readStatus(e.value, e.revision)) : null))(get(ClusterKey.status)),
    failsafe: ((e) => (e ? attempt(() => parseFailsafe(e.value)) : null))(get(ClusterKey.failsafe)),
  };
  const initialize = get(ClusterKey.initialize)?.value;
  if (initialize !== undefined && initialize !== '' && !/^\d{1,20}$/.test(initialize)) {
    problems.push({ path: ClusterKey.initialize, message: `expected a system identifier (digits), got ${describe(initialize)}: the members' data is not checked against it` });
  }
  if (leaderEntry && leaderEntry.value.trim() === '') problems.push({ path: ClusterKey.leader, message: 'holds no member name: read as held by nobody known (not as free)' });
  return { cluster: Object.freeze(cluster), problems };
}
