import { ValidationError, type Problem } from '../../errors.js';
import type { RawConfig } from '../config/config.js';
import { DcsKey, type DcsSnapshot } from './dcs-keys.js';
import type { PendingChange } from './facts.js';
import type { TagValue } from './node.js';

/** A scheduled restart as stored in a member key and shown in status documents. */
export interface ScheduledRestart {
  /** ISO 8601 with zone. */
  readonly schedule: string;
  readonly restart_pending?: boolean;
  readonly role?: string;
  readonly db_version?: string;
  readonly timeout?: number;
}

/** One member key (`members/<name>`): what a node publishes about itself each tick. */
export interface Member {
  readonly name: string;
  readonly revision: string;
  readonly connUrl: string;
  readonly apiUrl: string;
  /** State string (`running`, `starting`, ...). */
  readonly state: string;
  /** Role string (`primary`, `replica`, ...). */
  readonly role: string;
  readonly version: string;
  readonly xlogLocation: number | null;
  readonly receiveLsn: number | null;
  readonly replayLsn: number | null;
  readonly replicationState: string | null;
  readonly timeline: number | null;
  readonly tags: Readonly<Record<string, TagValue>>;
  readonly pendingRestart: boolean;
  readonly pendingRestartReason: Readonly<Record<string, PendingChange>> | null;
  readonly scheduledRestart: ScheduledRestart | null;
  /** A freshly promoted primary: false until its checkpoint after the promotion is done (absent: nothing pending). */
  readonly checkpointAfterPromote?: boolean;
}

/** The leader key: the only source of "who may write". */
export interface Leader {
  readonly name: string;
  readonly revision: string;
}

/** The failover key: a requested switchover/failover (candidate stored as `member`). */
export interface FailoverKey {
  readonly leader: string | null;
  readonly member: string | null;
  /** ISO 8601 with zone; null for an immediate request. */
  readonly scheduledAt: string | null;
  readonly revision: string;
}

/** The sync key: which standbys the primary currently treats as synchronous. */
export interface SyncState {
  readonly leader: string | null;
  readonly syncStandby: readonly string[];
  /** Quorum size in quorum mode; 0 otherwise. */
  readonly quorum: number;
  readonly revision: string;
}

/** One line of timeline history: [timeline, lsn, reason, timestamp, new_leader]. */
export type HistoryLine = readonly [number, number, string, string | null, string | null];

/** The history key: past promotions, oldest first. */
export interface TimelineHistory {
  readonly lines: readonly HistoryLine[];
  readonly revision: string;
}

/** The status key: the leader's last WAL position and slot positions. */
export interface ClusterStatus {
  readonly optime: number;
  readonly slots: Readonly<Record<string, number>>;
  readonly revision: string;
}

/** Stored dynamic configuration with its revision (for compare-and-set). */
export interface StoredConfig {
  readonly value: RawConfig;
  readonly revision: string;
}

/** Everything the DCS says about the cluster, parsed once per tick. Immutable. */
export interface Cluster {
  /** System identifier written by the bootstrap winner. */
  readonly initialize: string | null;
  readonly config: StoredConfig | null;
  readonly leader: Leader | null;
  /** Sorted by name. */
  readonly members: readonly Member[];
  readonly failover: FailoverKey | null;
  readonly sync: SyncState | null;
  readonly history: TimelineHistory | null;
  readonly status: ClusterStatus | null;
  /** Members (name -> api_url) that confirm a primary while the DCS is unreachable. */
  readonly failsafe: Readonly<Record<string, string>> | null;
}

/** A cluster with nothing in it (before bootstrap). */
export const EMPTY_CLUSTER: Cluster = Object.freeze({
  initialize: null,
  config: null,
  leader: null,
  members: Object.freeze([]),
  failover: null,
  sync: null,
  history: null,
  status: null,
  failsafe: null,
});

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
  const key = DcsKey.member(name);
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
  };
  return r.done(Object.freeze(member));
}

/** Serializes a member to its key's JSON (spec §10), omitting unknown values. */
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
  return JSON.stringify(out);
}

/** Parses the failover key; `{}` (a cancelled request) parses to null. */
export function parseFailover(text: string, revision: string): FailoverKey | null {
  if (text.trim() === '' ) return null;
  const r = new FieldReader(DcsKey.failover, jsonObject(DcsKey.failover, text));
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
  const r = new FieldReader(DcsKey.sync, jsonObject(DcsKey.sync, text));
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
  const r = new FieldReader(DcsKey.status, jsonObject(DcsKey.status, text));
  const slots = r.object('slots') ?? {};
  const slotValues: Record<string, number> = {};
  for (const [k, v] of Object.entries(slots)) {
    if (typeof v === 'number' && Number.isFinite(v)) slotValues[k] = v;
    else r.problems.push({ path: `status.slots.${k}`, message: `expected a number, got ${describe(v)}` });
  }
  const value: ClusterStatus = { optime: r.number('optime') ?? 0, slots: Object.freeze(slotValues), revision };
  return r.done(Object.freeze(value));
}

/** Serializes the status key. */
export function statusToJson(s: Omit<ClusterStatus, 'revision'>): string {
  return JSON.stringify({ optime: s.optime, slots: s.slots });
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
  const obj = jsonObject(DcsKey.failsafe, text);
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
    if (!key.startsWith(DcsKey.membersPrefix)) continue;
    const name = key.slice(DcsKey.membersPrefix.length);
    if (!name) continue;
    const m = attempt(() => parseMember(name, entry.value, entry.revision));
    if (m) members.push(m);
  }
  members.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const leaderEntry = get(DcsKey.leader);
  const configEntry = get(DcsKey.config);
  const cluster: Cluster = {
    initialize: get(DcsKey.initialize)?.value ?? null,
    config: configEntry
      ? attempt(() => Object.freeze({ value: Object.freeze(jsonObject(DcsKey.config, configEntry.value)), revision: configEntry.revision }))
      : null,
    leader: leaderEntry && leaderEntry.value ? Object.freeze({ name: leaderEntry.value, revision: leaderEntry.revision }) : null,
    members: Object.freeze(members),
    failover: ((e) => (e ? attempt(() => parseFailover(e.value, e.revision)) : null))(get(DcsKey.failover)),
    sync: ((e) => (e ? attempt(() => parseSync(e.value, e.revision)) : null))(get(DcsKey.sync)),
    history: ((e) => (e ? attempt(() => parseHistory(e.value, e.revision)) : null))(get(DcsKey.history)),
    status: ((e) => (e ? attempt(() => parseStatus(e.value, e.revision)) : null))(get(DcsKey.status)),
    failsafe: ((e) => (e ? attempt(() => parseFailsafe(e.value)) : null))(get(DcsKey.failsafe)),
  };
  return { cluster: Object.freeze(cluster), problems };
}

/** Finds a member by name. */
export function findMember(cluster: Cluster, name: string): Member | undefined {
  return cluster.members.find((m) => m.name === name);
}
