import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { decodeAnswer, type AgentConfigAnswer } from './config-protocol.js';
import { LocalConfigError, type LocalConfig } from './local-config-types.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** How to start the configuration process: the compiled script, or the TypeScript source through tsx in a checkout. */
function command(): string[] {
  const compiled = join(HERE, 'config-process.js');
  if (existsSync(compiled)) return [compiled];
  // Resolved through require: the sources also run as CommonJS under the test runner, where import.meta has no resolve().
  return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, join(HERE, 'config-process.ts')];
}

/**
 * Runs the configuration process (config-process.ts) with `args` and reads its answer from
 * file descriptor 3; its stdout and stderr are the agent's (help, version, problems).
 */
export function runConfigProcess(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<AgentConfigAnswer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...command(), ...args], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdio[3]!.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text === '') return reject(new Error(`the configuration process exited with code ${code} without an answer`));
      try {
        resolve(decodeAnswer(text));
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}

/** Reads the local configuration file in the configuration process (a reload); throws LocalConfigError as loading in process would. */
export async function loadConfigApart(path: string, env: Readonly<Record<string, string | undefined>>): Promise<LocalConfig> {
  const a = await runConfigProcess(['reload', path], env);
  if (a.kind === 'config') return a.config;
  if (a.kind === 'invalid') throw new LocalConfigError(a.source, a.problems);
  throw new Error(`unexpected answer ${a.kind} from the configuration process`);
}
