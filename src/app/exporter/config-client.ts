import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configProcessCommand, runAnswerProcess } from '../config-process-runner.js';
import { ValidationError } from '../../domain/errors.js';
import type { LoadedCollectors } from './config-files.js';
import { decodeConfig, type ConfigAnswer } from './config-protocol.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Runs the configuration process (see config-process.ts) with `args` and reads its answer from
 * file descriptor 3; its stdout and stderr are the exporter's (help, listings, problems).
 */
export function runConfigProcess(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<ConfigAnswer> {
  return runAnswerProcess([...configProcessCommand(HERE), ...args], env, decodeConfig);
}

/** Reads one collector configuration under `namespace` in the configuration process (for /reload); throws ValidationError as loading in process would. */
export async function loadCollectorsApart(path: string, namespace: string): Promise<LoadedCollectors> {
  const a = await runConfigProcess(['collectors', path, namespace]);
  if (a.kind === 'collectors') return a.collectors;
  if (a.kind === 'invalid') throw new ValidationError(a.problems, a.code);
  throw new Error(`unexpected answer ${a.kind} from the configuration process`);
}
