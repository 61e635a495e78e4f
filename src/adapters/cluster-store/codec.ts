import type { Cluster, ClusterStatus, FailoverKey, HistoryLine, Member, ScheduledRestart, SyncState, TimelineHistory } from '../../domain/cluster/model/cluster.js';
import type { PendingChange } from '../../domain/cluster/model/facts.js';
import type { TagValue } from '../../domain/cluster/model/node.js';
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

function jsonObject(key: string, text: string): Json {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ValidationError([{ path: key, message: `not valid JSON (${(e as Error).message})` }], 'malformed_dcs_value');
  }
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

/** Reads typed fields from a JSON object, collecting every problem before failing. */
class FieldReader {
  readonly problems: Problem[] = [];
  constructor(private readonly key: string, private readonly obj: Json) {}

  private bad(field: string, expected: string): null {
    this.problems.push({ path: `${this.key}.${field}`, message: `expected ${expected}, got ${describe(this.obj[field])}` });
    return null;
  }
  string(field: string, required = false): string | null {
    const v = this.obj[field];
    if (v === undefined || v === null) return required ? this.bad(field, 'a string') : null;
    return typeof v === 'string' ? v : this.bad(field, 'a string');
  }
  number(field: string): number | null {
    const v = this.obj[field];
    if (v === undefined || v === null) return null;
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
    return this.bad(field, 'a number');
  }
  boolean(field: string): boolean {
    const v = this.obj[field];
    if (v === undefined || v === null) return false;
    if (typeof v === 'boolean') return v;
    this.bad(field, 'a boolean');
    return false;
  }
  object(field: string): Json | null {
    const v = this.obj[field];
    if (v === undefined || v === null) return null;
    if (typeof v === 'object' && !Array.isArray(v)) return v as Json;
    return this.bad(field, 'an object');
  }
  has(field: string): boolean {
    return this.obj[field] !== undefined && this.obj[field] !== null;
  }
  stringList(field: string): string[] {
    const v = this.obj[field];
    if (v === undefined || v === null) return [];
    if (typeof v === 'string') return v ? [v] : [];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
    this.bad(field, 'a list of strings');
    return [];
  }
  done<T>(value: T): T {
    if (this.problems.length) throw new ValidationError(this.problems, 'malformed_dcs_value');
    return value;
  }
}

/** Parses a member key's JSON. Throws ValidationError naming every bad field. */
export function parseMember(name: string, text: string, revision: string): Member {
  const key = ClusterKey.member(name);
  const obj = jsonObject(key, text);
  const r = new FieldReader(key, obj);
  const tags = r.object('tags') ?? {};
  const tagValues: Record<string, TagValue> = {};
  for (const [k, v] of Object.entries(tags)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') tagValues[k] = v;
    else r.problems.push({ path: `${key}.tags.${k}`, message: `expected a string, number or boolean, got ${describe(v)}` });
  }
  const sr = r.object('scheduled_restart');
  const member: Member = {
    name,
    revision,
    connUrl: r.string('conn_url') ?? '',
    apiUrl: r.string('api_url') ?? '',
    state: r.string('state') ?? 'unknown',
    role: r.string('role') ?? 'uninitialized',
    version: r.string('version') ?? '',
    xlogLocation: r.number('xlog_location'),
    receiveLsn: r.number('receive_lsn'),
    replayLsn: r.number('replay_lsn'),
    replicationState: r.string('replication_state'),
    timeline: r.number('timeline'),
    tags: Object.freeze(tagValues),
    pendingRestart: r.boolean('pending_restart'),
    pendingRestartReason: (r.object('pending_restart_reason') as Record<string, PendingChange> | null) ?? null,
    scheduledRestart: sr && typeof sr['schedule'] === 'string' ? (sr as unknown as ScheduledRestart) : null,
    ...(obj['checkpoint_after_promote'] === undefined ? {} : { checkpointAfterPromote: r.boolean('checkpoint_after_promote') }),
    ...(obj['server_version'] === undefined ? {} : { serverVersion: r.number('server_version') ?? 0 }),
    ...(obj['safety_margin'] === undefined ? {} : { safetyMargin: r.number('safety_margin') ?? 0 }),
  };
  return r.done(Object.freeze(member));
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
  if (text.trim() === '' ) return null;
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

/** Parses the sync key. */
export function parseSync(text: string, revision: string): SyncState {
  const r = new FieldReader(ClusterKey.sync, jsonObject(ClusterKey.sync, text));
  const value: SyncState = {
    leader: r.string('leader'),
    syncStandby: Object.freeze(r.stringList('sync_standby')),
    quorum: r.number('quorum') ?? 0,
    revision,
  };
  return r.done(Object.freeze(value));
}

/** Serializes the sync key. */
export function syncToJson(s: Omit<SyncState, 'revision'>): string {
  return JSON.stringify({ leader: s.leader, sync_standby: s.syncStandby, quorum: s.quorum });
}

/** Parses the status key (`{optime, slots}`). */
export function parseStatus(text: string, revision: string): ClusterStatus {
  const r = new FieldReader(ClusterKey.status, jsonObject(ClusterKey.status, text));
  const slots = r.object('slots') ?? {};
  const slotValues: Record<string, number> = {};
  for (const [k, v] of Object.entries(slots)) {
    if (typeof v === 'number' && Number.isFinite(v)) slotValues[k] = v;
    else r.problems.push({ path: `status.slots.${k}`, message: `expected a number, got ${describe(v)}` });
  }
  const hasRetain = r.has('retain_slots');
  const retainSlots = r.stringList('retain_slots');
  const value: ClusterStatus = { optime: r.number('optime') ?? 0, slots: Object.freeze(slotValues), ...(hasRetain ? { retainSlots: Object.freeze(retainSlots) } : {}), revision };
  return r.done(Object.freeze(value));
}

/** Serializes the status key (`retain_slots` only when given, as Patroni writes it). */
export function statusToJson(s: Omit<ClusterStatus, 'revision'>): string {
  return JSON.stringify({ optime: s.optime, slots: s.slots, ...(s.retainSlots ? { retain_slots: s.retainSlots } : {}) });
}

/** Parses the history key: a JSON array of `[timeline, lsn, reason, timestamp?, new_leader?]`. */
export function parseHistory(text: string, revision: string): TimelineHistory {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ValidationError([{ path: 'history', message: `not valid JSON (${(e as Error).message})` }], 'malformed_dcs_value');
  }
  if (!Array.isArray(parsed)) {
    throw new ValidationError([{ path: 'history', message: `expected a JSON array, got ${describe(parsed)}` }], 'malformed_dcs_value');
  }
  const problems: Problem[] = [];
  const lines: HistoryLine[] = [];
  parsed.forEach((line, i) => {
    if (!Array.isArray(line) || typeof line[0] !== 'number' || typeof line[1] !== 'number' || typeof line[2] !== 'string') {
      problems.push({ path: `history[${i}]`, message: 'expected [timeline, lsn, reason, timestamp, new_leader]' });
      return;
    }
    const ts = typeof line[3] === 'string' ? line[3] : null;
    const who = typeof line[4] === 'string' ? line[4] : null;
    lines.push(Object.freeze([line[0], line[1], line[2], ts, who] as const));
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

/**
 * Builds the cluster view from one prefix read. A malformed key is reported in
 * `problems` and treated as absent: one bad write must not stop every agent's loop.
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
  const get = (k: string) => snapshot.get(k);
  const members: Member[] = [];
  for (const [key, entry] of snapshot) {
    if (!key.startsWith(ClusterKey.membersPrefix)) continue;
    const name = key.slice(ClusterKey.membersPrefix.length);
    if (!name) continue;
    const m = attempt(() => parseMember(name, entry.value, entry.revision));
    if (m) members.push(m);
  }
  members.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const leaderEntry = get(ClusterKey.leader);
  const configEntry = get(ClusterKey.config);
  const cluster: Cluster = {
    initialize: get(ClusterKey.initialize)?.value ?? null,
    initializeRevision: get(ClusterKey.initialize)?.revision ?? null,
    // An unreadable configuration reads as empty but keeps its revision, so it can be replaced by compare-and-set.
    config: configEntry
      ? Object.freeze({ value: Object.freeze(attempt(() => jsonObject(ClusterKey.config, configEntry.value)) ?? {}), revision: configEntry.revision })
      : null,
    leader: leaderEntry && leaderEntry.value ? Object.freeze({ name: leaderEntry.value, revision: leaderEntry.revision }) : null,
    members: Object.freeze(members),
    failover: ((e) => (e ? attempt(() => parseFailover(e.value, e.revision)) : null))(get(ClusterKey.failover)),
    failoverRevision: get(ClusterKey.failover)?.revision ?? null,
    sync: ((e) => (e ? attempt(() => parseSync(e.value, e.revision)) : null))(get(ClusterKey.sync)),
    history: ((e) => (e ? attempt(() => parseHistory(e.value, e.revision)) : null))(get(ClusterKey.history)),
    status: ((e) => (e ? attempt(() => parseStatus(e.value, e.revision)) : null))(get(ClusterKey.status)),
    failsafe: ((e) => (e ? attempt(() => parseFailsafe(e.value)) : null))(get(ClusterKey.failsafe)),
  };
  return { cluster: Object.freeze(cluster), problems };
}

