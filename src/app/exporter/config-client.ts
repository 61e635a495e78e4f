import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ValidationError } from '../../domain/errors.js';
import type { LoadedCollectors } from './config-files.js';
import { decodeConfig, type ConfigAnswer } from './config-protocol.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** How to start the configuration process: the compiled script, or the TypeScript source through tsx in a checkout. */
function command(): string[] {
  const compiled = join(HERE, 'config-process.js');
  if (existsSync(compiled)) return [compiled];
  return ['--import', import.meta.resolve('tsx'), join(HERE, 'config-process.ts')];
}

/**
 * Runs the configuration process (see config-process.ts) with `args` and reads its answer from
 * file descriptor 3; its stdout and stderr are the exporter's (help, listings, problems).
 */
export function runConfigProcess(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<ConfigAnswer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...command(), ...args], { env, stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdio[3]!.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text === '') return reject(new Error(`the configuration process exited with code ${code} without an answer`));
      try {
        resolve(decodeConfig(text));
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}

/** Reads one collector configuration in the configuration process (for /reload); throws ValidationError as loading in process would. */
export async function loadCollectorsApart(path: string): Promise<LoadedCollectors> {
  const a = await runConfigProcess(['collectors', path]);
  if (a.kind === 'collectors') return a.collectors;
  if (a.kind === 'invalid') throw new ValidationError(a.problems, a.code);
  throw new Error(`unexpected answer ${a.kind} from the configuration process`);
}
