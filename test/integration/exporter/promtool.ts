import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** promtool of the Debian package prometheus (installed by scripts/setup.sh). */
export const PROMTOOL = process.env.PROMTOOL ?? '/usr/bin/promtool';

/** The problems `promtool check metrics` finds in an exposition (one per line; none: empty). */
export function promtoolProblems(exposition: string): Promise<string[]> {
  if (!existsSync(PROMTOOL)) throw new Error(`${PROMTOOL} not found: run scripts/setup.sh (Debian package prometheus) or set PROMTOOL`);
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', () => resolve(out.split('\n').filter((l) => l.trim() !== '')));
    child.stdin.end(exposition);
  });
}
