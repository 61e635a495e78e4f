#!/usr/bin/env node
// Launcher of the exporter: the compiled code when built (installed packages are), else the TypeScript sources through tsx.
import { load } from './launch.js';

const mod = await load('exporter/main', 'warden-exporter');
const code = await mod.main(process.argv.slice(2), process.env);
process.exit(code);
