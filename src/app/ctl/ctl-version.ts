import { readFileSync } from 'node:fs';

/** This package's version (package.json two levels above src/app/ctl and dist/app/ctl alike). */
export function ctlVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
