import { versionInRange, OPEN_MAX_VERSION, type CollectorDefinition, type NamingMode } from './collector.js';
import { compileCollector, type CompiledCollector } from './samples.js';
import { isClusterLevel, parseTags, roleRestriction, type Tag } from './tags.js';

/** The server role as the exporter sees it. */
export type ServerRole = 'primary' | 'replica';

/** What planning needs to know about the server. */
export interface ServerFacts {
  /** server_version_num, e.g. 150004. */
  readonly version: number;
  readonly role: ServerRole;
}

/** What planning needs to know about one monitored database. */
export interface DatabaseFacts {
  readonly name: string;
  readonly extensions: ReadonlySet<string>;
}

/** Everything that decides which collectors run where. */
export interface PlanInput {
  readonly server: ServerFacts;
  /** The database of the connection URL (cluster-level collectors run only here). */
  readonly main: DatabaseFacts;
  /** Other databases found by auto-discovery (after include/exclude). */
  readonly others: readonly DatabaseFacts[];
  /** Tags given to the exporter with --tag. */
  readonly exporterTags: ReadonlySet<string>;
  /** How metric names are made (default: the conventions). */
  readonly naming?: NamingMode;
}

/** Whether a collector runs on this server, and why not when it does not. */
export type CollectorStatus =
  | { readonly active: true; readonly label: 'Active' | 'Active (primary only)' | 'Active (replica only)' }
  | { readonly active: false; readonly reason: string };

/** One collector's place in a plan. */
export interface PlannedCollector {
  readonly def: CollectorDefinition;
  readonly compiled: CompiledCollector;
  readonly status: CollectorStatus;
  /** Runs once on the main database (tag cluster) rather than on every database. */
  readonly clusterLevel: boolean;
  /** Databases it runs on (empty when inactive). */
  readonly targets: readonly string[];
}

/** Which collectors run on which databases, for one server version and role. */
export interface Plan {
  readonly server: ServerFacts;
  /** Every configured collector, in configuration order. */
  readonly collectors: readonly PlannedCollector[];
  /** The active ones, in the same order. */
  readonly active: readonly PlannedCollector[];
  /** Main database first, then the discovered ones. */
  readonly databases: readonly string[];
}

/** `<min>-<max>` as /explain prints it; open bounds print as 0 and OPEN_MAX_VERSION. */
export function versionRangeText(def: Pick<CollectorDefinition, 'minVersion' | 'maxVersion'>): string {
  return `${def.minVersion ?? 0}-${def.maxVersion ?? OPEN_MAX_VERSION}`;
}

function serverLevelReason(def: CollectorDefinition, tags: readonly Tag[], input: PlanInput): string | null {
  if (def.skip) return 'skip';
  if (!versionInRange(def, input.server.version)) return `server version ${input.server.version} outside ${versionRangeText(def)}`;
  const role = roleRestriction(tags);
  if (role && role !== input.server.role) return `${role} only; server is a ${input.server.role}`;
  for (const t of tags) {
    if (t.kind === 'custom' && !input.exporterTags.has(t.name)) return `tag ${t.name} not given to the exporter`;
    if (t.kind === 'not' && input.exporterTags.has(t.name)) return `exporter has tag ${t.name}`;
  }
  return null;
}

function databaseFits(tags: readonly Tag[], db: DatabaseFacts): boolean {
  return tags.every((t) => (t.kind === 'extension' ? db.extensions.has(t.name) : t.kind === 'dbname' ? db.name === t.name : true));
}

function databaseReason(tags: readonly Tag[]): string {
  const ext = tags.filter((t) => t.kind === 'extension').map((t) => t.name);
  const db = tags.filter((t) => t.kind === 'dbname').map((t) => t.name);
  const parts = [...ext.map((e) => `extension ${e} not installed`), ...db.map((d) => `database ${d} not monitored`)];
  return parts.length === 1 ? parts[0]! : `no database with ${parts.join(' and ')}`;
}

const compiledCache: Record<NamingMode, WeakMap<CollectorDefinition, CompiledCollector>> = { conventions: new WeakMap(), legacy: new WeakMap() };

function compiled(def: CollectorDefinition, mode: NamingMode): CompiledCollector {
  let c = compiledCache[mode].get(def);
  if (!c) compiledCache[mode].set(def, (c = compileCollector(def, mode)));
  return c;
}

/** Decides, for each collector, whether it runs on this server and on which databases. */
export function planCollectors(defs: readonly CollectorDefinition[], input: PlanInput): Plan {
  const all = [input.main, ...input.others];
  const collectors = defs.map((def): PlannedCollector => {
    const tags = parseTags(def.tags);
    const clusterLevel = isClusterLevel(tags);
    const base = { def, compiled: compiled(def, input.naming ?? 'conventions'), clusterLevel };
    const reason = serverLevelReason(def, tags, input);
    if (reason) return { ...base, status: { active: false, reason }, targets: [] };
    const targets = (clusterLevel ? [input.main] : all).filter((db) => databaseFits(tags, db)).map((db) => db.name);
    if (targets.length === 0) return { ...base, status: { active: false, reason: databaseReason(tags) }, targets };
    const role = roleRestriction(tags);
    const label = role === 'primary' ? 'Active (primary only)' : role === 'replica' ? 'Active (replica only)' : 'Active';
    return { ...base, status: { active: true, label }, targets };
  });
  return { server: input.server, collectors, active: collectors.filter((c) => c.status.active), databases: all.map((d) => d.name) };
}
