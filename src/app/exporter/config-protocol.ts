import type { BuildInfo } from '../../domain/collectors/self-metrics.js';
import type { Problem, ValidationErrorCode } from '../../domain/errors.js';
import type { LoadedCollectors } from './config-files.js';
import type { ExporterOptions } from './options.js';
import type { ExporterFiles } from './run.js';
import { decodeWire, encodeWire } from '../config-wire.js';

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

/** The answer as the configuration process writes it (see encodeWire: non-finite numbers and `$` keys kept). */
export function encodeConfig(answer: ConfigAnswer): string {
  return encodeWire(answer);
}

/** The inverse of encodeConfig. */
export function decodeConfig(text: string): ConfigAnswer {
  return decodeWire(text) as ConfigAnswer;
}
