#!/usr/bin/env node
// Launcher: the compiled agent when `npm run build` produced it, else the TypeScript sources through tsx.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'app', 'agent', 'main.js');

let mod;
if (existsSync(compiled)) {
  mod = await import(pathToFileURL(compiled).href);
} else {
  const { tsImport } = await import('tsx/esm/api');
  // The project's tsconfig (experimental decorators for Inversify), whatever the working directory.
  mod = await tsImport(pathToFileURL(join(root, 'src', 'app', 'agent', 'main.ts')).href, {
    parentURL: import.meta.url,
    tsconfig: join(root, 'tsconfig.json'),
  });
}

const code = await mod.main(process.argv.slice(2), process.env);
process.exit(code);
