import type { Problem } from '../../errors.js';
import { RESERVED_TAGS, tagIsTrue, type TagValue } from './node.js';

/** A member's tags as written in YAML (or published in its member key). */
type Tags = Readonly<Record<string, TagValue>>;

/** Default `failover_priority` and `sync_priority` of a member that does not set them. */
export const DEFAULT_TAG_PRIORITY = 1;

/** A whole-number tag (`2`, or `"2"` from an environment variable or another member's key); null when absent or not a whole number. */
export function integerTag(tags: Tags, key: string): number | null {
  const v = tags[key];
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : null;
  if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) return Number(v);
  return null;
}

/**
 * Whether a member may ever become the leader. An explicit `nofailover` decides; without it,
 * `failover_priority: 0` means the same as `nofailover: true` (Patroni's rule, so mixed
 * clusters read each other's tags alike).
 */
export function canLead(tags: Tags): boolean {
  const priority = integerTag(tags, 'failover_priority');
  if (tags['nofailover'] !== undefined) return !tagIsTrue(tags, 'nofailover');
  return priority === null || priority > 0;
}

/** Why a member may never lead, as logs and refusals say it ('tagged nofailover' or 'failover_priority 0'). */
export function noLeadReason(tags: Tags): string {
  return tags['nofailover'] !== undefined ? 'tagged nofailover' : 'tagged failover_priority 0';
}

/** A member's failover priority: 0 when it may never lead, else its `failover_priority` tag (default 1). */
export function failoverPriority(tags: Tags): number {
  if (!canLead(tags)) return 0;
  return Math.max(0, integerTag(tags, 'failover_priority') ?? DEFAULT_TAG_PRIORITY);
}

/** A member's synchronous priority: 0 (never synchronous) when tagged `nosync` or `nostream`, else its `sync_priority` (default 1). */
export function syncPriority(tags: Tags): number {
  if (tagIsTrue(tags, 'nosync') || tagIsTrue(tags, 'nostream')) return 0;
  return Math.max(0, integerTag(tags, 'sync_priority') ?? DEFAULT_TAG_PRIORITY);
}

/** The member named in `replicatefrom` (cascading replication), or null. */
export function replicateFrom(tags: Tags): string | null {
  const v = tags['replicatefrom'];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

/** Tagged `nostream`: no streaming replication, WAL comes from the archive only (restore_command). */
export function noStream(tags: Tags): boolean {
  return tagIsTrue(tags, 'nostream');
}

/** Tag values that are written as booleans (`true`, `"yes"`, `1`...) and read with tagIsTrue. */
function isBooleanLike(v: unknown): boolean {
  if (v === undefined || typeof v === 'boolean') return true;
  if (typeof v === 'number') return v === 0 || v === 1;
  return typeof v === 'string' && ['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'].includes(v.toLowerCase());
}

/**
 * What a node's own topology tags contradict (checked when its local file is loaded): a
 * priority that is not a whole number >= 0, `nofailover` against `failover_priority`,
 * `replicatefrom` naming the node itself or combined with `nostream` (which streams from
 * nobody). Paths are `tags.<name>`.
 */
export function topologyTagProblems(tags: Tags, ownName: string): Problem[] {
  const out: Problem[] = [];
  for (const key of ['failover_priority', 'sync_priority']) {
    const v = tags[key];
    if (v === undefined) continue;
    const n = integerTag(tags, key);
    if (n === null || n < 0) out.push({ path: `tags.${key}`, message: `expected a whole number >= 0, got ${JSON.stringify(v)}` });
  }
  for (const key of ['nofailover', 'nosync', 'nostream', 'clonefrom', 'noloadbalance']) {
    if (!isBooleanLike(tags[key])) out.push({ path: `tags.${key}`, message: `expected true or false, got ${JSON.stringify(tags[key])}` });
  }
  const contradiction = (flag: string, key: string, never: string) => {
    const priority = integerTag(tags, key);
    if (priority === null || priority < 0 || tags[flag] === undefined || !isBooleanLike(tags[flag])) return;
    const set = tagIsTrue(tags, flag);
    if (set && priority > 0) {
      out.push({ path: `tags.${key}`, message: `contradicts ${flag}: true (a node that ${never} has priority 0): remove one of them, got ${priority}` });
    } else if (!set && priority === 0) {
      out.push({ path: `tags.${key}`, message: `contradicts ${flag}: false (priority 0 means the node ${never}): remove ${flag} or give a priority >= 1, got 0` });
    }
  };
  contradiction('nofailover', 'failover_priority', 'never leads');
  contradiction('nosync', 'sync_priority', 'is never synchronous');
  for (const key of Object.keys(tags)) {
    const meant = nearTagName(key);
    if (meant !== null) out.push({ path: `tags.${key}`, message: `not a tag Warden knows, and close to ${meant} (a typo? it would do nothing); a tag of your own needs a name further from Warden's` });
  }
  const from = tags['replicatefrom'];
  if (from !== undefined) {
    if (typeof from !== 'string' || !/^[A-Za-z0-9._-]+$/.test(from)) {
      out.push({ path: 'tags.replicatefrom', message: `expected a member name (letters, digits, ".", "_" or "-"), got ${JSON.stringify(from)}` });
    } else if (from === ownName) {
      out.push({ path: 'tags.replicatefrom', message: `expected another member than this node itself, got ${JSON.stringify(from)}` });
    } else if (noStream(tags)) {
      out.push({ path: 'tags.replicatefrom', message: `nostream is set: this node streams from nobody, so replicatefrom cannot apply, got ${JSON.stringify(from)}` });
    }
  }
  return out;
}

/** The tags Warden acts on; any other tag is the operator's own, shown but not interpreted. */
const KNOWN_TAGS = [...RESERVED_TAGS, 'replicatefrom', 'failover_priority', 'sync_priority'];

/** The known tag `key` is one or two typing errors away from (not itself), or null. */
function nearTagName(key: string): string | null {
  if (KNOWN_TAGS.includes(key as (typeof KNOWN_TAGS)[number])) return null;
  // Tag names are read as written: NoSync is not nosync.
  const k = key.toLowerCase();
  return KNOWN_TAGS.find((t) => editDistance(k, t) <= 2) ?? null;
}

/** Levenshtein distance (insertions, deletions, substitutions) of two short strings. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}
