#!/usr/bin/env -S node --max-semi-space-size=1 --v8-pool-size=1
// Launcher of the exporter: the compiled code when built (installed packages are), else the TypeScript sources through tsx.
//
// The shebang's flags are close to the agent's (bin/warden.js says why): `--max-semi-space-size=1`
// caps V8's young generation, which start-up and a burst of scrapes would otherwise grow to
// 2 x 16 MiB and keep (1 rather than the agent's 2: 2 MiB less private memory after a minute of
// 16 scrapers, scrapes/s unchanged within the noise), and `--v8-pool-size=1` runs one V8 background thread instead of four (each keeps its
// own malloc arena). They apply when this file is executed (`warden-exporter --url ...`, the
// installed bin); `node bin/warden-exporter.js` skips them, so service files that call node
// themselves should pass them too.
import { load } from './launch.js';

// pg decides at load time whether it runs on Cloudflare Workers: without a `navigator` global
// (Node 20) it builds a `Response`, which loads undici and compiles its WebAssembly parser, memory
// the exporter never uses. A navigator shaped like Node 21's, present only while the modules
// load, keeps pg on its plain Node path (as in the agent's launcher).
const shimNavigator = globalThis.navigator === undefined;
if (shimNavigator) {
  Object.defineProperty(globalThis, 'navigator', {
    value: { userAgent: `Node.js/${process.versions.node.split('.')[0]}` },
    configurable: true,
    writable: true,
  });
}

let mod;
try {
  mod = await load('exporter/main', 'warden-exporter');
} finally {
  if (shimNavigator) delete globalThis.navigator;
}

const code = await mod.main(process.argv.slice(2), process.env);
process.exit(code);
