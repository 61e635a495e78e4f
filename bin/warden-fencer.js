#!/usr/bin/env -S node --max-semi-space-size=2 --v8-pool-size=1
// Launcher of the fencer (started by the agent): the compiled code when built (installed packages are), else the TypeScript sources through tsx.
import { load, packageVersion } from './launch.js';

// Answered here, so every command of the package has --version without touching the fencer itself.
if (process.argv.slice(2).some((a) => a === '--version' || a === '-V')) {
  process.stdout.write(`warden-fencer ${packageVersion()}\n`);
  process.exit(0);
}

const mod = await load('fencer/main', 'warden-fencer');

process.exit(await mod.main(process.argv.slice(2)));
