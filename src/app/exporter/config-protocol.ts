import type { BuildInfo } from '../../domain/collectors/self-metrics.js';
import type { Problem, ValidationErrorCode } from '../../domain/errors.js';
import type { LoadedCollectors } from './config-files.js';
import type { ExporterOptions } from './options.js';
import type { ExporterFiles } from './run.js';

/** What the configuration process answers. */
export type ConfigAnswer =
  /** Exit with this code (help, version, dry-run, or problems already printed). */
  | { readonly kind: 'exit'; readonly code: number }
  /** Everything the exporter starts with. */
  | { readonly kind: 'start'; readonly options: ExporterOptions; readonly collectors: LoadedCollectors; readonly files: ExporterFiles; readonly build: BuildInfo }
  /** One collector configuration, read again. */
  | { readonly kind: 'collectors'; readonly collectors: LoadedCollectors }
  /** A configuration with problems. */
  | { readonly kind: 'invalid'; readonly code: ValidationErrorCode; readonly problems: readonly Problem[] };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * JSON with the non-finite numbers YAML allows (.inf, .nan) kept, as `{"$number": "Infinity"}`.
 * A key of the configuration that starts with `$` is sent as `$$...`: a user named `$number`
 * in basic_auth_users was read back as a number (NaN), and basic auth was off.
 */
export function encodeConfig(answer: ConfigAnswer): string {
  return JSON.stringify(answer, (_k, v: unknown) => {
    if (typeof v === 'number' && !Number.isFinite(v)) return { $number: String(v) };
    if (isPlainObject(v) && Object.keys(v).some((k) => k.startsWith('$'))) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.startsWith('$') ? `$${k}` : k, x]));
    return v;
  });
}

/** The inverse of encodeConfig. */
export function decodeConfig(text: string): ConfigAnswer {
  return JSON.parse(text, (_k, v: unknown) => {
    if (!isPlainObject(v)) return v;
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === '$number') return Number(v['$number']);
    return keys.some((k) => k.startsWith('$$')) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.startsWith('$$') ? k.slice(1) : k, x])) : v;
  }) as ConfigAnswer;
}
