import type { Problem } from '../../domain/errors.js';
import type { LocalConfig } from './local-config-types.js';

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

/** JSON with the non-finite numbers YAML allows (.inf, .nan) kept. */
export function encodeAnswer(answer: AgentConfigAnswer): string {
  return JSON.stringify(answer, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? { $number: String(v) } : v));
}

/** The inverse of encodeAnswer. */
export function decodeAnswer(text: string): AgentConfigAnswer {
  return JSON.parse(text, (_k, v: unknown) => (v && typeof v === 'object' && '$number' in v && Object.keys(v).length === 1 ? Number((v as { $number: string }).$number) : v)) as AgentConfigAnswer;
}
