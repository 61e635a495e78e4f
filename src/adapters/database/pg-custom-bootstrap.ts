import type { ParameterValue } from '../../domain/cluster/config/config.js';

/** A custom bootstrap method (`bootstrap.method` naming `bootstrap.<name>`): creates the new cluster's data instead of initdb. */
export interface CustomBootstrap {
  /** The method's name (for logs). */
  readonly name: string;
  /** Run through /bin/sh as the server's OS user, with `--scope` and `--datadir` unless no_params. */
  readonly command: string;
  readonly no_params?: boolean;
  /** Keep the recovery.signal (and settings) the command left, and recover with them until the server promotes. */
  readonly keep_existing_recovery_conf?: boolean;
  /** Recovery settings (restore_command, recovery_target_*...) to recover with until the server promotes. */
  readonly recovery_conf?: Readonly<Record<string, ParameterValue>>;
}

/** The arguments of a custom bootstrap command. */
export function bootstrapParams(method: CustomBootstrap, scope: string, dataDir: string): string[] {
  return method.no_params ? [] : [`--scope=${scope}`, `--datadir=${dataDir}`];
}

/**
 * The recovery settings a custom bootstrap recovers with: recovery_conf with
 * `recovery_target_action` promote (the only action after which the server is a usable
 * primary: pause waits forever, shutdown would restart past the target without
 * recovery.signal); null without recovery_conf.
 */
export function bootstrapRecoverySettings(method: CustomBootstrap): Record<string, ParameterValue> | null {
  if (!method.recovery_conf) return null;
  return { ...method.recovery_conf, recovery_target_action: 'promote' };
}
