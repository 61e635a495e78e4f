import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Package root: the same depth from src/app/agent and dist/app/agent. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The agent's version, from package.json. */
export function svcVersion(): string {
  try {
    return String((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version ?? '0.0.0');
  } catch {
    return '0.0.0';
  }
}
