import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configProcessCommand, runAnswerProcess } from '../config-process-runner.js';
import { decodeAnswer, type AgentConfigAnswer } from './config-protocol.js';
import { LocalConfigError, type LocalConfig } from './local-config-types.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Runs the configuration process (config-process.ts) with `args` and reads its answer from
 * file descriptor 3; its stdout and stderr are the agent's (help, version, problems).
 */
export function runConfigProcess(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<AgentConfigAnswer> {
  return runAnswerProcess([...configProcessCommand(HERE), ...args], env as NodeJS.ProcessEnv, decodeAnswer);
}

/** Reads the local configuration file in the configuration process (a reload); throws LocalConfigError as loading in process would. */
export async function loadConfigApart(path: string, env: Readonly<Record<string, string | undefined>>): Promise<LocalConfig> {
  const a = await runConfigProcess(['reload', path], env);
  if (a.kind === 'config') return a.config;
  if (a.kind === 'invalid') throw new LocalConfigError(a.source, a.problems);
  throw new Error(`unexpected answer ${a.kind} from the configuration process`);
}
