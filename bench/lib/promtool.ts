import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PROMTOOL = '/usr/bin/promtool';

/** Problems `promtool check metrics` reports for an exposition (NaN when promtool is not installed: Debian package prometheus). */
export function promtoolCount(exposition: string): number {
  if (!existsSync(PROMTOOL)) return Number.NaN;
  const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '').length;
}
