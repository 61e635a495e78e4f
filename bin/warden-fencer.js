#!/usr/bin/env -S node --max-semi-space-size=2 --v8-pool-size=1
// Launcher of the fencer (started by the agent): the compiled code when `npm run build` produced it, else the TypeScript sources through tsx.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'app', 'fencer', 'main.js');

let mod;
if (existsSync(compiled)) {
  mod = await import(pathToFileURL(compiled).href);
} else {
  const { tsImport } = await import('tsx/esm/api');
  mod = await tsImport(pathToFileURL(join(root, 'src', 'app', 'fencer', 'main.ts')).href, {
    parentURL: import.meta.url,
    tsconfig: join(root, 'tsconfig.json'),
  });
}

process.exit(await mod.main(process.argv.slice(2)));
