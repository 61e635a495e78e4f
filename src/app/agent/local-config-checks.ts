import { accessSync, constants, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { Problem } from '../../domain/errors.js';
import type { LocalConfig } from './local-config.js';

/** Programs the agent runs from `db.bin_dir`. */
const DB_PROGRAMS = ['postgres', 'pg_ctl', 'initdb', 'pg_basebackup', 'pg_controldata'] as const;

function readable(path: string): string | null {
  try {
    accessSync(path, constants.R_OK);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

/**
 * What `warden --validate-config` checks on this host beyond the file itself: the TLS and
 * CA files can be read, `db.bin_dir` holds the PostgreSQL programs, the data directory's
 * parent exists, the log file's directory exists. Each problem names the key.
 */
export function hostProblems(config: LocalConfig): Problem[] {
  const out: Problem[] = [];
  const files: [string, string | undefined][] = [
    ['restapi.certfile', config.restapi.certfile],
    ['restapi.keyfile', config.restapi.keyfile],
    ['restapi.cafile', config.restapi.cafile],
    ['etcd3.cacert', config.etcd3.cacert],
    ['etcd3.cert', config.etcd3.cert],
    ['etcd3.key', config.etcd3.key],
  ];
  for (const [path, file] of files) {
    if (file === undefined) continue;
    const why = readable(file);
    if (why) out.push({ path, message: `expected a readable file, got ${JSON.stringify(file)} (${why})` });
  }
  for (const program of [...DB_PROGRAMS, ...(config.bootstrap.dcs['db'] && (config.bootstrap.dcs['db'] as Record<string, unknown>)['use_pg_rewind'] === true ? ['pg_rewind'] : [])]) {
    const file = join(config.db.bin_dir, program);
    try {
      accessSync(file, constants.X_OK);
    } catch {
      out.push({ path: 'db.bin_dir', message: `expected the PostgreSQL programs in ${config.db.bin_dir}, got no executable ${program}` });
    }
  }
  const parent = dirname(config.db.data_dir);
  try {
    if (!statSync(parent).isDirectory()) out.push({ path: 'db.data_dir', message: `expected ${parent} to be a directory` });
  } catch {
    out.push({ path: 'db.data_dir', message: `expected the parent directory ${parent} to exist, got nothing there` });
  }
  if (config.log.file !== null) {
    const dir = dirname(config.log.file);
    try {
      statSync(dir);
    } catch {
      // The logger creates a missing directory; say so only when it cannot be created where its parent is missing too.
      try {
        statSync(dirname(dir));
      } catch {
        out.push({ path: 'log.file', message: `expected ${dir} (or its parent) to exist, got nothing there` });
      }
    }
  }
  return out;
}

const SECRET_KEYS = new Set(['password', 'keyfile_password']);

/** The effective configuration (defaults and environment applied) as YAML, with passwords masked. */
export function effectiveConfigYaml(config: LocalConfig): string {
  const mask = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(mask);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET_KEYS.has(k) && typeof x === 'string' ? '********' : mask(x)]));
  };
  return stringify(mask(config));
}
