import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// The agent and the exporter parse their command line and files in a short-lived process, so
// the parsers (commander, yaml, ajv) never load in the long-running one; both start it here.

/** How to start the configuration process in `dir`: the compiled script, or the TypeScript source through tsx in a checkout. */
export function configProcessCommand(dir: string): string[] {
  const compiled = join(dir, 'config-process.js');
  if (existsSync(compiled)) return [compiled];
  // Resolved through require: the sources also run as CommonJS under the test runner, where import.meta has no resolve().
  return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, join(dir, 'config-process.ts')];
}

/**
 * Runs node with `argv` and decodes what the child wrote to file descriptor 3; its stdout and
 * stderr are the caller's (help, version, problems).
 */
export function runAnswerProcess<T>(argv: readonly string[], env: NodeJS.ProcessEnv, decode: (text: string) => T): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...argv], { env, stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdio[3]!.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text === '') return reject(new Error(`the configuration process exited with code ${code} without an answer`));
      try {
        resolve(decode(text));
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}
