import { ValidationError, type Problem } from '../errors.js';
import { compileSchema, problemsOf } from './definition-schema.js';
import { constLabelNameProblem } from './metric-naming.js';
import type { TargetKind } from './pgbouncer.js';

/** One named target of the targets file, validated (files it names are read by the exporter). */
export interface TargetDefinition {
  readonly name: string;
  /** The connection URL, or the file holding it. */
  readonly url?: string;
  readonly urlFile?: string;
  /** A file holding the password, put into the URL. */
  readonly passwordFile?: string;
  /** Absent: pgbouncer when the URL's database is `pgbouncer`, else postgres. */
  readonly kind?: TargetKind;
  readonly autoDiscovery: boolean;
  readonly includeDatabases: readonly string[];
  readonly excludeDatabases: readonly string[];
  readonly constLabels: readonly (readonly [string, string])[];
  /** Collector configuration of this target (file or folder); absent: the exporter's set for its kind. */
  readonly config?: string;
}

const NAME = '^[A-Za-z0-9][A-Za-z0-9_.-]*$';

const TARGETS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['targets'],
  properties: {
    targets: {
      type: 'object',
      propertyNames: { pattern: NAME },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          url: { type: 'string', minLength: 1 },
          url_file: { type: 'string', minLength: 1 },
          password_file: { type: 'string', minLength: 1 },
          kind: { enum: ['postgres', 'pgbouncer'] },
          auto_discovery: { type: 'boolean' },
          include_databases: { type: 'array', items: { type: 'string', minLength: 1 } },
          exclude_databases: { type: 'array', items: { type: 'string', minLength: 1 } },
          const_labels: { type: 'object', additionalProperties: { type: 'string' } },
          config: { type: 'string', minLength: 1 },
        },
      },
    },
  },
} as const;

let validate: ReturnType<typeof compileSchema> | null = null;

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Why a connection URL cannot be used (the targets file's or a url_file's), or null. */
export function targetUrlProblem(url: string): string | null {
  try {
    const u = new URL(url);
    return /^postgres(ql)?:$/.test(u.protocol) ? null : `expected a postgres:// or postgresql:// URL, got scheme ${u.protocol}`;
  } catch {
    return 'not a valid URL (expected postgresql://user@host:port/database)';
  }
}

/**
 * The problems of a parsed targets file, and its targets as far as their shape is right: the
 * rules beyond the schema (url or url_file, the URL's scheme, constant label names) are
 * checked on every target, so that one start lists every problem.
 */
export function targetsProblems(raw: unknown, source: string): { readonly problems: Problem[]; readonly targets: TargetDefinition[] } {
  validate ??= compileSchema(TARGETS_SCHEMA);
  const problems: Problem[] = problemsOf(validate, source, raw);
  const out: TargetDefinition[] = [];
  const all = isObject(raw) && isObject(raw['targets']) ? raw['targets'] : {};
  for (const [name, t] of Object.entries(all)) {
    const path = `${source}.targets.${name}`;
    if (!isObject(t)) continue;
    const url = typeof t['url'] === 'string' ? t['url'] : undefined;
    const urlFile = typeof t['url_file'] === 'string' ? t['url_file'] : undefined;
    if (!url === !urlFile) problems.push({ path: `${path}.url`, message: 'give the connection as url or as url_file (one of them)' });
    const urlProblem = url ? targetUrlProblem(url) : null;
    if (urlProblem !== null) problems.push({ path: `${path}.url`, message: urlProblem });
    const labels = Object.entries(isObject(t['const_labels']) ? t['const_labels'] : {}).filter((e): e is [string, string] => typeof e[1] === 'string');
    for (const [k] of labels) {
      const problem = constLabelNameProblem(k);
      if (problem !== null) problems.push({ path: `${path}.const_labels.${k}`, message: problem });
    }
    // A target with a problem is not read further (its files, its collectors): its problems are listed.
    if (problems.some((p) => p.path === path || p.path.startsWith(`${path}.`))) continue;
    out.push({
      name,
      ...(url ? { url } : {}),
      ...(urlFile ? { urlFile } : {}),
      ...(typeof t['password_file'] === 'string' ? { passwordFile: t['password_file'] } : {}),
      ...(t['kind'] ? { kind: t['kind'] as TargetKind } : {}),
      autoDiscovery: t['auto_discovery'] === true,
      includeDatabases: strings(t['include_databases']),
      excludeDatabases: strings(t['exclude_databases']),
      constLabels: labels,
      ...(typeof t['config'] === 'string' ? { config: t['config'] } : {}),
    });
  }
  return { problems, targets: out };
}

/**
 * Validates a parsed targets file: `targets:` mapping names to a URL (or url_file, and a
 * password_file) and per-target discovery, labels, kind and collector configuration. Throws a
 * ValidationError (code invalid_config) listing every problem.
 */
export function parseTargets(raw: unknown, source: string): TargetDefinition[] {
  const { problems, targets } = targetsProblems(raw, source);
  if (problems.length > 0) throw new ValidationError(problems, 'invalid_config');
  return targets;
}
