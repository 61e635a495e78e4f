import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { onCleanup } from './cleanup.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Compiles src/ with tsconfig.build.json (and bundles each command, as the build does) into a throw-away copy of the package (bin/,
 * collectors/, package.json, a link to node_modules) and returns its folder. Its launchers
 * then run the compiled JavaScript, as an installed package does, without the tsx loader
 * that the checkout's launchers use when no dist/ exists. The checkout's own dist/ is left
 * alone: other work in the checkout must keep running the sources.
 */
export async function compiledCopy(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-dist-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  for (const part of ['bin', 'collectors', 'package.json']) cpSync(join(repoRoot, part), join(dir, part), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', join(dir, 'dist'), '--sourceMap', 'false'], {
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (e) {
    // Type errors in files being edited still leave JavaScript behind (noEmitOnError is off).
    const out = (e as { stdout?: string }).stdout ?? '';
    if (!out.includes('error TS')) throw e;
  }
  // The one-file bundles the launchers run, as `npm run build` makes them.
  await promisify(execFile)(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts', 'bundle-entries.ts'), '--dist', join(dir, 'dist')], { cwd: repoRoot });
  return dir;
}
