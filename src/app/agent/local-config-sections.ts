import type { ParameterValue } from '../../domain/cluster/config/config.js';
import type { ReplicaMethod } from '../../adapters/database/pg-replica-methods.js';
import type { CustomBootstrap } from '../../adapters/database/pg-custom-bootstrap.js';
import { LOCAL_CONFIG_SCHEMA } from './local-config-schema.js';

// The method sections of a configuration already checked (local-config-methods.ts checks them
// in the configuration process): the running agent reads them here without loading ajv.

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys of the `db` section itself (anything else with a command is a replica creation method). */
export const KNOWN_DB_KEYS: readonly string[] = Object.keys(LOCAL_CONFIG_SCHEMA.properties.db.properties);
/** Keys of the `bootstrap` section itself (anything else with a command is a custom bootstrap method). */
export const KNOWN_BOOTSTRAP_KEYS: readonly string[] = Object.keys(LOCAL_CONFIG_SCHEMA.properties.bootstrap.properties);

/** The replica creation methods a (valid) local `db` section defines. */
export function replicaMethodsOf(db: object): Record<string, ReplicaMethod> {
  const known = new Set(KNOWN_DB_KEYS);
  return Object.fromEntries(Object.entries(db).filter(([k, v]) => !known.has(k) && isObject(v) && 'command' in v)) as Record<string, ReplicaMethod>;
}

/** The custom bootstrap of a (valid) local `bootstrap` section; null when it runs initdb. */
export function customBootstrapOf(bootstrap: object): CustomBootstrap | null {
  const b = bootstrap as Json;
  const name = b['method'];
  if (typeof name !== 'string' || name === 'initdb' || !isObject(b[name])) return null;
  const m = b[name] as Json;
  return {
    name,
    command: String(m['command']),
    ...(m['no_params'] === true ? { no_params: true } : {}),
    ...(m['keep_existing_recovery_conf'] === true ? { keep_existing_recovery_conf: true } : {}),
    ...(isObject(m['recovery_conf']) ? { recovery_conf: m['recovery_conf'] as Record<string, ParameterValue> } : {}),
  };
}
