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

/**
 * Validates a parsed targets file: `targets:` mapping names to a URL (or url_file, and a
 * password_file) and per-target discovery, labels, kind and collector configuration. Throws a
 * ValidationError (code invalid_config) listing every problem.
 */
export function parseTargets(raw: unknown, source: string): TargetDefinition[] {
  validate ??= compileSchema(TARGETS_SCHEMA);
  const problems: Problem[] = problemsOf(validate, source, raw);
  if (problems.length > 0) throw new ValidationError(problems, 'invalid_config');
  const out: TargetDefinition[] = [];
  for (const [name, t] of Object.entries((raw as { targets: Record<string, Record<string, unknown>> }).targets)) {
    const path = `${source}.targets.${name}`;
    const url = t['url'] as string | undefined;
    if (!url === !t['url_file']) problems.push({ path: `${path}.url`, message: 'give the connection as url or as url_file (one of them)' });
    if (url) {
      try {
        const u = new URL(url);
        if (!/^postgres(ql)?:$/.test(u.protocol)) problems.push({ path: `${path}.url`, message: `expected a postgres:// or postgresql:// URL, got scheme ${u.protocol}` });
      } catch {
        problems.push({ path: `${path}.url`, message: 'not a valid URL (expected postgresql://user@host:port/database)' });
      }
    }
    const labels = Object.entries((t['const_labels'] as Record<string, string> | undefined) ?? {});
    for (const [k] of labels) {
      const problem = constLabelNameProblem(k);
      if (problem !== null) problems.push({ path: `${path}.const_labels.${k}`, message: problem });
    }
    out.push({
      name,
      ...(url ? { url } : {}),
      ...(t['url_file'] ? { urlFile: t['url_file'] as string } : {}),
      ...(t['password_file'] ? { passwordFile: t['password_file'] as string } : {}),
      ...(t['kind'] ? { kind: t['kind'] as TargetKind } : {}),
      autoDiscovery: t['auto_discovery'] === true,
      includeDatabases: (t['include_databases'] as string[] | undefined) ?? [],
      excludeDatabases: (t['exclude_databases'] as string[] | undefined) ?? [],
      constLabels: labels,
      ...(t['config'] ? { config: t['config'] as string } : {}),
    });
  }
  if (problems.length > 0) throw new ValidationError(problems, 'invalid_config');
  return out;
}
