import { ValidationError, type Problem } from '../errors.js';
import {
  COLLECTOR_DEFAULTS,
  familyName,
  isValueUsage,
  type NamingMode,
  labelName,
  type CollectorDefinition,
  type MetricColumn,
  type PredicateQuery,
  type Usage,
  USAGES,
} from './collector.js';
import { describeValue, schemaProblems } from './definition-schema.js';
import { parseDurationMs } from './duration.js';
import { isValidLabelName, isValidMetricName } from './metric-naming.js';
import { parseTag, parseTags, roleRestriction } from './tags.js';

/** One parsed configuration document (a YAML file) and where it came from. */
export interface DefinitionDocument {
  readonly source: string;
  readonly doc: unknown;
}

/** Outcome of parsing: the valid definitions and every problem found. */
export interface ParsedDefinitions {
  readonly collectors: readonly CollectorDefinition[];
  readonly problems: readonly Problem[];
}

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function durationField(raw: Raw, field: string, path: string, fallback: number, problems: Problem[]): number {
  if (raw[field] === undefined) return fallback;
  const ms = parseDurationMs(raw[field]);
  if (ms === null) {
    problems.push({ path: `${path}.${field}`, message: `invalid duration ${describeValue(raw[field])} (expected e.g. 10s, 100ms, 1m or a number of seconds)` });
    return fallback;
  }
  return ms;
}

/** The longest collector timeout. */
const MAX_TIMEOUT_MS = 24 * 3_600_000;

const UNIT = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
const MODES: readonly NamingMode[] = ['conventions', 'legacy'];

function metricColumns(key: string, raw: Raw, problems: Problem[]): MetricColumn[] {
  const items = Array.isArray(raw['metrics']) ? raw['metrics'] : [];
  const cols: MetricColumn[] = [];
  items.forEach((item, i) => {
    if (!isObject(item) || Object.keys(item).length !== 1) return;
    const [column, spec] = Object.entries(item)[0]!;
    if (!isObject(spec)) return;
    const path = `${key}.metrics[${i}].${column}`;
    const usage = spec['usage'] as Usage;
    const col: MetricColumn = {
      column,
      usage,
      ...(typeof spec['rename'] === 'string' ? { rename: spec['rename'] } : {}),
      ...(typeof spec['description'] === 'string' ? { description: spec['description'] } : {}),
      ...(typeof spec['scale'] === 'number' ? { scale: spec['scale'] } : {}),
      ...(typeof spec['default'] === 'number' ? { default: spec['default'] } : {}),
      ...(Array.isArray(spec['bucket']) ? { bucket: spec['bucket'] as number[] } : {}),
      ...(typeof spec['unit'] === 'string' ? { unit: spec['unit'] } : {}),
      ...(typeof spec['legacy_rename'] === 'string' ? { legacyRename: spec['legacy_rename'] } : {}),
    };
    if (col.unit !== undefined && !UNIT.test(col.unit)) problems.push({ path: `${path}.unit`, message: `invalid unit ${JSON.stringify(col.unit)} (lower-case words joined by _, e.g. seconds, bytes)` });
    const valueOnly = (['scale', 'default', 'bucket', 'unit', 'legacy_rename'] as const).filter((f) => spec[f] !== undefined);
    // Said of LABEL and DISCARD columns; another usage is refused by the schema.
    if (usage === 'LABEL' || usage === 'DISCARD') {
      for (const f of valueOnly) problems.push({ path: `${path}.${f}`, message: `only value columns (GAUGE, COUNTER, HISTOGRAM) take ${f}, this one is ${usage}` });
    }
    if (usage === 'HISTOGRAM') {
      if (!col.bucket) problems.push({ path: `${path}.bucket`, message: 'a HISTOGRAM column needs bucket: its ascending upper bounds' });
      else if (col.bucket.some((b, j) => j > 0 && b <= col.bucket![j - 1]!)) {
        problems.push({ path: `${path}.bucket`, message: `bucket bounds must be strictly ascending, got ${describeValue(col.bucket)}` });
      }
    } else if (col.bucket && isValueUsage(usage)) {
      problems.push({ path: `${path}.bucket`, message: `only HISTOGRAM columns take bucket, this one is ${usage}` });
    }
    if (spec['scale'] === 0) problems.push({ path: `${path}.scale`, message: 'scale 0 would zero every value' });
    cols.push(col);
  });
  return cols;
}

function checkColumns(key: string, name: string, cols: readonly MetricColumn[], problems: Problem[]): void {
  const seenColumns = new Set<string>();
  const seenLabels = new Set<string>();
  cols.forEach((col, i) => {
    const path = `${key}.metrics[${i}].${col.column}`;
    if (seenColumns.has(col.column)) problems.push({ path, message: `column ${col.column} is declared twice` });
    seenColumns.add(col.column);
    if (col.usage === 'LABEL') {
      const label = labelName(col);
      if (!isValidLabelName(label)) problems.push({ path, message: `invalid label name ${JSON.stringify(label)} (letters, digits and _, not starting with a digit or __)` });
      else if (seenLabels.has(label)) problems.push({ path, message: `duplicate label name ${label}` });
      seenLabels.add(label);
    }
  });
  // Names must be valid and distinct under both namings: either may be switched on. A column
  // already reported under the conventions is not reported again for the legacy names.
  const reported = new Set<string>();
  const report = (p: Problem) => {
    if (reported.has(p.path)) return;
    reported.add(p.path);
    problems.push(p);
  };
  for (const mode of MODES) {
    const seenFamilies = new Map<string, string>();
    const which = mode === 'legacy' ? ' (legacy naming)' : '';
    cols.forEach((col, i) => {
      if (!isValueUsage(col.usage)) return;
      const path = `${key}.metrics[${i}].${col.column}`;
      const family = familyName({ name }, col, mode);
      // An invalid prefix is reported once, on the name field, not again for every column; the
      // column's own part (rename, unit) is still checked, with a valid prefix in its place.
      if (!isValidMetricName(family)) {
        const own = isValidMetricName(name) ? family : familyName({ name: 'x' }, col, mode);
        if (!isValidMetricName(own) && (mode === 'conventions' || col.legacyRename !== undefined)) report({ path, message: isValidMetricName(name) ? `invalid metric name ${JSON.stringify(family)}${which}` : `invalid metric name part ${JSON.stringify(own.slice(2))}${which}` });
      } else if (seenFamilies.has(family)) report({ path, message: `duplicate metric name ${family}${which} (also from column ${seenFamilies.get(family)})` });
      seenFamilies.set(family, col.column);
    });
    for (const col of cols.filter((c) => c.usage === 'HISTOGRAM')) {
      const family = familyName({ name }, col, mode);
      for (const suffix of ['_bucket', '_sum', '_count']) {
        const other = seenFamilies.get(family + suffix);
        if (other) report({ path: `${key}.metrics.${other}`, message: `metric name ${family + suffix}${which} collides with the series of histogram ${family}` });
      }
    }
  }
  // A column with an unknown usage is already reported; it may well have been meant as a value.
  if (cols.length > 0 && cols.every((c) => USAGES.includes(c.usage)) && !cols.some((c) => isValueUsage(c.usage))) {
    problems.push({ path: `${key}.metrics`, message: 'no metric column: at least one column must be GAUGE, COUNTER or HISTOGRAM' });
  }
  if (seenLabels.has('le') && cols.some((c) => c.usage === 'HISTOGRAM')) {
    problems.push({ path: `${key}.metrics`, message: 'label name le is reserved for histogram buckets' });
  }
}

function predicates(key: string, raw: Raw, problems: Problem[]): PredicateQuery[] {
  const list = Array.isArray(raw['predicate_queries']) ? raw['predicate_queries'] : [];
  const out: PredicateQuery[] = [];
  const names = new Set<string>();
  list.forEach((p, i) => {
    if (!isObject(p) || typeof p['name'] !== 'string' || typeof p['predicate_query'] !== 'string') return;
    const path = `${key}.predicate_queries[${i}]`;
    if (names.has(p['name'])) problems.push({ path: `${path}.name`, message: `duplicate predicate name ${p['name']}` });
    names.add(p['name']);
    out.push({ name: p['name'], query: p['predicate_query'], ttlMs: durationField(p, 'ttl', path, COLLECTOR_DEFAULTS.predicateTtlMs, problems) });
  });
  return out;
}

/** Parses and validates one raw collector definition; problems are appended, never thrown. */
export function parseDefinition(key: string, raw: unknown, source: string, problems: Problem[]): CollectorDefinition | null {
  const before = problems.length;
  if (!isValidMetricName(key)) problems.push({ path: key, message: `invalid collector name ${JSON.stringify(key)} (letters, digits, _ and :, not starting with a digit)` });
  if (!isObject(raw)) {
    problems.push({ path: key, message: `expected a collector definition (a mapping with query and metrics), got ${describeValue(raw)}` });
    return null;
  }
  problems.push(...schemaProblems(key, raw));
  const name = typeof raw['name'] === 'string' ? raw['name'] : key;
  if (name !== key && !isValidMetricName(name)) problems.push({ path: `${key}.name`, message: `invalid metric prefix ${JSON.stringify(name)}` });
  const ttlMs = durationField(raw, 'ttl', key, COLLECTOR_DEFAULTS.ttlMs, problems);
  const timeoutMs = durationField(raw, 'timeout', key, COLLECTOR_DEFAULTS.timeoutMs, problems);
  if (raw['timeout'] !== undefined && timeoutMs === 0) problems.push({ path: `${key}.timeout`, message: 'timeout must be greater than 0' });
  // The server takes a statement_timeout up to 2^31-1 ms, and a client-side deadline beyond that fires at once.
  else if (timeoutMs > MAX_TIMEOUT_MS) problems.push({ path: `${key}.timeout`, message: `timeout must be at most 24h, got ${describeValue(raw['timeout'])}` });
  // 0 is pg_exporter's spelling of "no bound" (its zero value): a max_version of 0 must not mean "never".
  const min = typeof raw['min_version'] === 'number' && raw['min_version'] !== 0 ? raw['min_version'] : undefined;
  const max = typeof raw['max_version'] === 'number' && raw['max_version'] !== 0 ? raw['max_version'] : undefined;
  if (min !== undefined && max !== undefined && min >= max) {
    problems.push({ path: `${key}.max_version`, message: `max_version (exclusive) must be greater than min_version, got ${min}-${max}` });
  }
  const tagTexts = Array.isArray(raw['tags']) ? raw['tags'].filter((t): t is string => typeof t === 'string') : [];
  tagTexts.forEach((t, i) => {
    const parsed = parseTag(t);
    if (typeof parsed === 'string') problems.push({ path: `${key}.tags[${i}]`, message: parsed });
  });
  const tags = parseTags(tagTexts);
  if (tags.some((t) => t.kind === 'primary') && tags.some((t) => t.kind === 'replica')) {
    problems.push({ path: `${key}.tags`, message: 'a collector cannot be both primary-only and replica-only' });
  }
  const cols = metricColumns(key, raw, problems);
  checkColumns(key, name, cols, problems);
  const preds = predicates(key, raw, problems);
  if (problems.length > before) return null;
  return {
    key,
    name,
    desc: typeof raw['desc'] === 'string' ? raw['desc'] : '',
    query: (raw['query'] as string).trim(),
    ttlMs,
    timeoutMs,
    ...(min !== undefined ? { minVersion: min } : {}),
    ...(max !== undefined ? { maxVersion: max } : {}),
    tags: tagTexts,
    fatal: raw['fatal'] === true,
    skip: raw['skip'] === true,
    predicateQueries: preds,
    metrics: cols,
    source,
  };
}

function overlaps(a: CollectorDefinition, b: CollectorDefinition): boolean {
  const lo = Math.max(a.minVersion ?? 0, b.minVersion ?? 0);
  const hi = Math.min(a.maxVersion ?? Infinity, b.maxVersion ?? Infinity);
  if (lo >= hi) return false;
  const ra = roleRestriction(parseTags(a.tags));
  const rb = roleRestriction(parseTags(b.tags));
  return !(ra && rb && ra !== rb);
}

/**
 * Metric families of collectors that take a name the exporter itself writes (`<ns>_up`,
 * `<ns>_version`, `<ns>_in_recovery`, `<ns>_exporter_*`, `process_*`, `nodejs_*`): the
 * exposition would hold the family twice, and Prometheus refuses the whole scrape.
 */
export function reservedNameProblems(defs: readonly CollectorDefinition[], namespace: string): Problem[] {
  const exact = new Set([`${namespace}_up`, `${namespace}_version`, `${namespace}_in_recovery`]);
  const prefixes = [`${namespace}_exporter_`, 'process_', 'nodejs_'];
  const problems: Problem[] = [];
  for (const def of defs) {
    if (def.skip) continue;
    for (const col of def.metrics) {
      if (!isValueUsage(col.usage)) continue;
      for (const mode of MODES) {
        const family = familyName(def, col, mode);
        const base = family.replace(/_total$/, '');
        if (exact.has(base) || prefixes.some((p) => base.startsWith(p))) {
          problems.push({ path: `${def.key}.metrics.${col.column}`, message: `metric ${family} is a name the exporter writes itself (${[...exact].join(', ')}, ${prefixes.map((p) => `${p}*`).join(', ')}): rename the collector or the column` });
          break;
        }
      }
    }
  }
  return problems;
}

/** Metric families produced by two collectors that can run on the same server would collide (under either naming): each is a problem. */
function crossProblems(defs: readonly CollectorDefinition[]): Problem[] {
  const problems: Problem[] = [];
  const reported = new Set<string>();
  for (const mode of MODES) {
    const byFamily = new Map<string, CollectorDefinition[]>();
    for (const def of defs) {
      if (def.skip) continue;
      for (const col of def.metrics) {
        if (!isValueUsage(col.usage)) continue;
        const family = familyName(def, col, mode);
        const others = byFamily.get(family) ?? [];
        const clash = others.find((o) => overlaps(o, def));
        const path = `${def.key}.metrics.${col.column}`;
        if (clash && !reported.has(path)) {
          reported.add(path);
          const which = mode === 'legacy' ? ' (legacy naming)' : '';
          problems.push({ path, message: `metric ${family}${which} is also produced by collector ${clash.key} on overlapping versions and roles` });
        }
        others.push(def);
        byFamily.set(family, others);
      }
    }
  }
  return problems;
}

/**
 * Parses documents in order; a later document's collector replaces an earlier one of the same
 * key (keeping its place). Returns every valid definition and every problem found.
 */
export function parseDefinitionDocuments(docs: readonly DefinitionDocument[]): ParsedDefinitions {
  const problems: Problem[] = [];
  const byKey = new Map<string, CollectorDefinition>();
  for (const { source, doc } of docs) {
    if (doc === null || doc === undefined) continue;
    if (!isObject(doc)) {
      problems.push({ path: source, message: `expected a mapping of collector names to definitions, got ${describeValue(doc)}` });
      continue;
    }
    for (const [key, raw] of Object.entries(doc)) {
      const local: Problem[] = [];
      const def = parseDefinition(key, raw, source, local);
      problems.push(...local.map((p) => ({ path: p.path, message: `${p.message} [${source}]` })));
      if (def) byKey.set(key, def);
    }
  }
  const collectors = [...byKey.values()];
  problems.push(...crossProblems(collectors));
  return { collectors, problems };
}

/** Like parseDefinitionDocuments, but throws a ValidationError (code invalid_collectors) listing every problem. */
export function loadDefinitions(docs: readonly DefinitionDocument[]): readonly CollectorDefinition[] {
  const { collectors, problems } = parseDefinitionDocuments(docs);
  if (problems.length > 0) throw new ValidationError(problems, 'invalid_collectors');
  if (collectors.length === 0) throw new ValidationError([{ path: '', message: 'no collector defined' }], 'invalid_collectors');
  return collectors;
}
