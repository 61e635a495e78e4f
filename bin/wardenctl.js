#!/usr/bin/env node
// Launcher of the admin CLI: the compiled code when built (installed packages are), else the TypeScript sources through tsx.
import { load } from './launch.js';

const mod = await load('ctl/main', 'wardenctl');
await mod.main();
