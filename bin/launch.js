// Shared by the launchers: loads an entry point from the compiled package (dist/, what an
// installed package runs), else from the TypeScript sources through tsx (a checkout that was
// not built). Neither: one clear line and exit code 1, instead of a module-not-found trace.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The package's version, for `--version` of launchers that answer it themselves. */
export function packageVersion() {
  try {
    return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Imports `app/<entry>` (e.g. `ctl/main`): the build's one-file bundle of it when there is one
 * at least as new as the compiled file (a process holds less than with ~300 modules loaded
 * one by one), else the compiled file, else the sources through tsx.
 */
export async function load(entry, command) {
  const compiled = join(root, 'dist', 'app', `${entry}.js`);
  const bundle = join(root, 'dist', 'app', `${entry}.bundle.js`);
  if (existsSync(compiled)) return import(pathToFileURL(isCurrentBundle(bundle, compiled) ? bundle : compiled).href);
  const source = join(root, 'src', 'app', `${entry}.ts`);
  let tsx = null;
  if (existsSync(source)) {
    try {
      tsx = await import('tsx/esm/api');
    } catch {
      tsx = null;
    }
  }
  if (!tsx) {
    process.stderr.write(`${command}: this copy of Warden was not built (${compiled} is missing): run "npm run build" in ${root}, or install a package made with "npm pack"\n`);
    process.exit(1);
  }
  // The project's tsconfig (decorators), whatever the working directory.
  return tsx.tsImport(pathToFileURL(source).href, { parentURL: import.meta.url, tsconfig: join(root, 'tsconfig.json') });
}

// A bundle older than the compiled file is stale (tsc ran again without the bundling step).
function isCurrentBundle(bundle, compiled) {
  try {
    return statSync(bundle).mtimeMs >= statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
}
