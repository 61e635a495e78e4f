#!/usr/bin/env -S node --max-semi-space-size=1 --v8-pool-size=1
// Launcher of the agent: the compiled code when built (installed packages are), else the TypeScript sources through tsx.
//
// The shebang's flags cut the idle agent's RSS by ~35 MiB (docs/performance.md) at no
// measurable cost per API request: `--max-semi-space-size=1` caps V8's young generation
// (by default up to 2 x 16 MiB, which start-up fills and an idle agent keeps; 1 rather than 2
// also promotes fewer in-flight requests to the old generation under load: ~1.7 MiB less
// private memory after the health-check benchmark, req/s and p99 unchanged), and
// `--v8-pool-size=1` runs one V8 background thread instead of four (each keeps its own
// malloc arena). V8's compaction stays on: without it (`--no-compact`) the memory reducer's
// pauses after a burst of work were shorter (1-2 ms against up to 10), but a long load of
// every read endpoint left the old generation fragmented, ~20 MiB more private memory and
// still climbing after 40 minutes (docs/performance.md). They apply when this file is executed
// (`warden -c node.yml`, the installed bin); `node bin/warden.js` skips them, so service
// files that call node themselves should pass them too. Node 20 has no exec() to restart
// itself with them, and a launcher that ran the agent as a child process would add a process
// whose kill -9 leaves the agent running.
import { load } from './launch.js';

// pg decides at load time whether it runs on Cloudflare Workers: without a `navigator` global
// (Node 20; Node 21+ has one) it builds a `Response`, which loads undici and compiles its
// WebAssembly parser, ~10 MiB the agent never uses. A navigator shaped like Node 21's, present
// only while the agent's modules load, keeps pg on its plain Node path.
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
  mod = await load('agent/main', 'warden');
} finally {
  if (shimNavigator) delete globalThis.navigator;
}

const code = await mod.main(process.argv.slice(2), process.env);
process.exit(code);
