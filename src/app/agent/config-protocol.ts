import type { Problem } from '../../domain/errors.js';
import type { LocalConfig } from './local-config-types.js';
import { decodeWire, encodeWire } from '../config-wire.js';

/** What the agent's configuration process answers. */
export type AgentConfigAnswer =
  /** Exit with this code after writing `stdout` and `stderr` (help, version, --validate-config, problems). */
  | { readonly kind: 'exit'; readonly code: number; readonly stdout: string; readonly stderr: string }
  /** The configuration the agent starts with. */
  | { readonly kind: 'start'; readonly configPath: string; readonly config: LocalConfig }
  /** The configuration file read again (a reload). */
  | { readonly kind: 'config'; readonly config: LocalConfig }
  /** A configuration file with problems (a reload). */
  | { readonly kind: 'invalid'; readonly source: string; readonly problems: readonly Problem[] };

/** The answer as the configuration process writes it (see encodeWire: non-finite numbers and `$` keys kept). */
export function encodeAnswer(answer: AgentConfigAnswer): string {
  return encodeWire(answer);
}

/** The inverse of encodeAnswer. */
export function decodeAnswer(text: string): AgentConfigAnswer {
  return decodeWire(text) as AgentConfigAnswer;
}
