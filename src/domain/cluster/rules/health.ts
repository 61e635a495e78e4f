import { ValidationError, type Problem } from '../../errors.js';
import { tagIsTrue, type TagValue } from '../model/node.js';
import { parseSize } from '../model/size.js';
import { noStream } from '../model/topology-tags.js';
import type { NodeSnapshot } from '../model/snapshot.js';

/** One health check of the API's table (aliases share one). */
export type HealthEndpoint =
  | 'primary'
  | 'standby_leader'
  | 'leader'
  | 'replica'
  | 'read_only'
  | 'synchronous'
  | 'read_only_sync'
  | 'quorum'
  | 'read_only_quorum'
  | 'asynchronous'
  | 'health'
  | 'liveness'
  | 'readiness';

/** Every health path of the seed, with its check. */
export const HEALTH_PATHS: Readonly<Record<string, HealthEndpoint>> = Object.freeze({
  '/': 'primary',
  '/primary': 'primary',
  '/read-write': 'primary',
  '/standby-leader': 'standby_leader',
  '/standby_leader': 'standby_leader',
  '/leader': 'leader',
  '/replica': 'replica',
  '/read-only': 'read_only',
  '/synchronous': 'synchronous',
  '/sync': 'synchronous',
  '/read-only-sync': 'read_only_sync',
  '/quorum': 'quorum',
  '/read-only-quorum': 'read_only_quorum',
  '/asynchronous': 'asynchronous',
  '/async': 'asynchronous',
  '/health': 'health',
  '/liveness': 'liveness',
  '/readiness': 'readiness',
});

/** Query string of a health request: a repeated parameter arrives as an array. */
export type HealthQuery = Readonly<Record<string, string | readonly string[] | undefined>>;

type Param = 'lag' | 'replication_state' | 'mode';

/**
 * What each endpoint accepts: named parameters, and whether `tag_<name>` filters apply, are
 * ignored, or are refused. Every check that may route reads takes the replica filters, as
 * load balancer configurations written for Patroni send them.
 */
const REPLICA_PARAMS: readonly Param[] = ['lag', 'replication_state'];
const ACCEPTS: Readonly<Record<HealthEndpoint, { readonly params: readonly Param[]; readonly tags: 'apply' | 'ignore' | 'refuse' }>> = {
  primary: { params: [], tags: 'ignore' },
  standby_leader: { params: [], tags: 'ignore' },
  leader: { params: [], tags: 'ignore' },
  replica: { params: REPLICA_PARAMS, tags: 'apply' },
  read_only: { params: REPLICA_PARAMS, tags: 'apply' },
  synchronous: { params: REPLICA_PARAMS, tags: 'apply' },
  read_only_sync: { params: REPLICA_PARAMS, tags: 'apply' },
  quorum: { params: REPLICA_PARAMS, tags: 'apply' },
  read_only_quorum: { params: REPLICA_PARAMS, tags: 'apply' },
  asynchronous: { params: REPLICA_PARAMS, tags: 'apply' },
  health: { params: [], tags: 'apply' },
  liveness: { params: [], tags: 'refuse' },
  readiness: { params: ['lag', 'mode'], tags: 'refuse' },
};

const REPLICATION_STATES = ['streaming', 'in archive recovery'] as const;
const MODES = ['apply', 'write'] as const;

/** The query, checked: every parameter known for the endpoint and well-formed. */
interface ParsedQuery {
  readonly lag: number | null;
  readonly replicationState: string | null;
  readonly mode: 'apply' | 'write';
  readonly tags: readonly (readonly [string, string])[];
}

/**
 * Checks the query of one endpoint. An unknown parameter, an invalid `lag`, `mode` or
 * `replication_state`, or a single-valued parameter given twice is refused (a load
 * balancer typo must not pass silently): ValidationError code `invalid_query` naming it.
 */
export function parseHealthQuery(endpoint: HealthEndpoint, query: HealthQuery): ParsedQuery {
  const accepts = ACCEPTS[endpoint];
  const problems: Problem[] = [];
  const tags: (readonly [string, string])[] = [];
  let lag: number | null = null;
  let replicationState: string | null = null;
  let mode: 'apply' | 'write' = 'apply';
  for (const [name, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const values: readonly string[] = typeof raw === 'string' ? [raw] : raw;
    if (name.startsWith('tag_') && name.length > 4 && accepts.tags !== 'refuse') {
      if (accepts.tags === 'apply') for (const v of values) tags.push([name.slice(4), v]);
      continue;
    }
    if (!(accepts.params as readonly string[]).includes(name)) {
      const known = [...accepts.params, ...(accepts.tags === 'refuse' ? [] : ['tag_<name>'])];
      problems.push({ path: name, message: `unknown parameter for this endpoint; expected ${known.length ? `one of ${known.join(', ')}` : 'no parameters'}` });
      continue;
    }
    if (values.length !== 1) {
      problems.push({ path: name, message: `expected one value, got ${values.length}` });
      continue;
    }
    const value = values[0]!;
    if (name === 'lag') {
      try {
        lag = parseSize(value, 'lag');
      } catch (e) {
        if (e instanceof ValidationError) problems.push(...e.problems);
        else throw e;
      }
    } else if (name === 'replication_state') {
      if ((REPLICATION_STATES as readonly string[]).includes(value)) replicationState = value;
      else problems.push({ path: name, message: `expected one of ${REPLICATION_STATES.map((s) => JSON.stringify(s)).join(', ')}, got ${JSON.stringify(value)}` });
    } else if (name === 'mode') {
      if ((MODES as readonly string[]).includes(value)) mode = value as 'apply' | 'write';
      else problems.push({ path: name, message: `expected "apply" or "write", got ${JSON.stringify(value)}` });
    }
  }
  if (problems.length) throw new ValidationError(problems, 'invalid_query');
  return { lag, replicationState, mode, tags };
}

/** "Holds the leader lock": refreshed the leader key less than ttl ago (the lock's expiry is still ahead). */
export function holdsLeaderLock(snap: NodeSnapshot, now: number): boolean {
  return snap.leaderLockExpiresAt !== null && now < snap.leaderLockExpiresAt;
}

/** The synchronous checks trust the sync key only from a DCS view younger than ttl. */
function freshClusterView(snap: NodeSnapshot, now: number): boolean {
  return snap.clusterReadAt !== null && now - snap.clusterReadAt < snap.config.ttl * 1000;
}

/**
 * Bytes this node is behind the leader: the DCS status key's optime minus the node's
 * replayed (`apply`) or received (`write`) position. null when either is unknown.
 */
export function replicationLag(snap: NodeSnapshot, mode: 'apply' | 'write' = 'apply'): number | null {
  const optime = snap.cluster?.status?.optime ?? null;
  const own = mode === 'write' ? snap.facts.receivedLocation : snap.facts.replayedLocation;
  if (optime === null || own === null) return null;
  return Math.max(0, optime - own);
}

function lagWithin(snap: NodeSnapshot, max: number | null, mode: 'apply' | 'write'): boolean {
  if (max === null) return true;
  const lag = replicationLag(snap, mode);
  return lag !== null && lag <= max;
}

/** A boolean or numeric tag compares as its lowercase string (`true`, `1`). */
function tagText(v: TagValue): string {
  return typeof v === 'string' ? v : String(v).toLowerCase();
}

function tagsMatch(snap: NodeSnapshot, wanted: ParsedQuery['tags']): boolean {
  return wanted.every(([name, value]) => {
    const have = snap.node.tags[name];
    return have !== undefined && tagText(have) === value;
  });
}

/**
 * The server runs and answers. A silent one (frozen, stalled on I/O) keeps the state `running`
 * (its postmaster lives: not a crash) but no serving role: a load balancer must not send to it.
 */
const running = (snap: NodeSnapshot) => snap.status.state === 'running' && SERVING_ROLES.has(snap.status.role);
const SERVING_ROLES: ReadonlySet<string> = new Set(['primary', 'replica', 'standby_leader']);
/** A new cluster not yet registered after its post_bootstrap script may yet be undone: nothing is routed to it. */
const finished = (snap: NodeSnapshot) => snap.status.bootstrap_unfinished === undefined;
/** A running primary holding the lock: not one that is stopping (a switchover's demotion has begun). */
const isPrimary = (snap: NodeSnapshot, now: number) => running(snap) && snap.status.role === 'primary' && holdsLeaderLock(snap, now) && finished(snap);
/** The lock holder, whatever its server does meanwhile (a restart, a demotion under way): the lock is what routes to it. */
const isLeader = (snap: NodeSnapshot, now: number) => holdsLeaderLock(snap, now) && finished(snap);
/** The leader serving reads: a running primary, or the running leader of a standby cluster. */
const leaderServesReads = (snap: NodeSnapshot, now: number) =>
  isPrimary(snap, now) || (running(snap) && snap.status.role === 'standby_leader' && holdsLeaderLock(snap, now));
/**
 * A node that may serve reads: neither may it hold WAL the leader lacks, nor wait for an
 * operator to rebuild its data directory.
 */
const trustworthy = (snap: NodeSnapshot) => snap.status.position_unconfirmed === undefined && snap.status.reinitialize_required === undefined;
/** A running replica whose WAL is known to be a prefix of the leader's and that is in service. */
const isRunningReplica = (snap: NodeSnapshot) => running(snap) && snap.status.role === 'replica' && trustworthy(snap);

/** A replica that takes read traffic under the query's filters (`noloadbalance` keeps it out of every read check). */
function replicaServes(snap: NodeSnapshot, q: ParsedQuery): boolean {
  return (
    isRunningReplica(snap) &&
    !tagIsTrue(snap.node.tags, 'noloadbalance') &&
    (q.replicationState === null || snap.status.replication_state === q.replicationState) &&
    lagWithin(snap, q.lag, 'apply')
  );
}

const isSync = (snap: NodeSnapshot, q: ParsedQuery, now: number) => replicaServes(snap, q) && snap.status.sync_standby === true && freshClusterView(snap, now);
const isQuorum = (snap: NodeSnapshot, q: ParsedQuery, now: number) => replicaServes(snap, q) && snap.status.quorum_standby === true && freshClusterView(snap, now);
const isAsync = (snap: NodeSnapshot, q: ParsedQuery, now: number) =>
  replicaServes(snap, q) && snap.status.sync_standby !== true && snap.status.quorum_standby !== true && freshClusterView(snap, now);

function liveness(snap: NodeSnapshot, now: number): boolean {
  if (snap.config.pause) return true;
  const limitSeconds = snap.status.role === 'primary' ? snap.config.ttl : 2 * snap.config.ttl;
  return now - snap.lastLoopAt <= limitSeconds * 1000;
}

function readiness(snap: NodeSnapshot, q: ParsedQuery, now: number): boolean {
  if (isLeader(snap, now)) return true;
  // A node tagged nostream replicates by restoring the archive.
  const state = snap.status.replication_state;
  const replicating = state === 'streaming' || (state === 'in archive recovery' && noStream(snap.node.tags));
  return isRunningReplica(snap) && replicating && lagWithin(snap, q.lag ?? snap.config.maximum_lag_on_failover, q.mode);
}

/**
 * The health check of one endpoint (the API's table of health checks): 200 when it holds, else 503.
 * Pure: reads only the snapshot, the query and `now` (epoch ms). Throws ValidationError
 * code `invalid_query` (HTTP 400) naming a bad parameter.
 */
export function checkHealth(endpoint: HealthEndpoint, snap: NodeSnapshot, query: HealthQuery, now: number): 200 | 503 {
  const q = parseHealthQuery(endpoint, query);
  const ok = ((): boolean => {
    switch (endpoint) {
      case 'primary':
        return isPrimary(snap, now);
      case 'standby_leader':
        return snap.status.role === 'standby_leader' && holdsLeaderLock(snap, now);
      case 'leader':
        return isLeader(snap, now);
      case 'replica':
        return replicaServes(snap, q);
      case 'read_only':
        return leaderServesReads(snap, now) || replicaServes(snap, q);
      case 'synchronous':
        return isSync(snap, q, now);
      case 'read_only_sync':
        return leaderServesReads(snap, now) || isSync(snap, q, now);
      case 'quorum':
        return isQuorum(snap, q, now);
      case 'read_only_quorum':
        return leaderServesReads(snap, now) || isQuorum(snap, q, now);
      case 'asynchronous':
        return isAsync(snap, q, now);
      case 'health':
        return running(snap) && trustworthy(snap);
      case 'liveness':
        return liveness(snap, now);
      case 'readiness':
        return readiness(snap, q, now);
    }
  })();
  // Tag filters narrow every check that takes them, the leader's read answers included (a filter by location).
  return ok && tagsMatch(snap, q.tags) ? 200 : 503;
}
