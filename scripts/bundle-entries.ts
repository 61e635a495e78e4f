/**
 * Bundles each compiled command (`dist/app/<entry>.js`) with the modules it imports into
 * `dist/app/<entry>.bundle.js`, minified, beside the compiled file; the launchers in bin/ run
 * the bundle when it is there. Run by `npm run build` after tsc; `--dist DIR` bundles another
 * compiled copy (the benchmarks').
 *
 * Why: V8 keeps the source text of every module a process loads (Function.prototype.toString
 * needs it) and a bytecode and scope record per module; the agent loads ~300 files. One
 * minified file per command took the idle agent's live heap from 12.7 to ~9 MiB and its
 * private memory by ~5 MiB (docs/performance.md). The compiled files stay as they are for
 * those who embed the library.
 */
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const distArg = process.argv.indexOf('--dist');
const dist = join(distArg > 0 ? process.argv[distArg + 1]! : join(dirname(fileURLToPath(import.meta.url)), '..', 'dist'), 'app');
const ENTRIES = ['agent/main', 'fencer/main', 'exporter/main', 'ctl/main'];

// The bundle is an ES module: CommonJS dependencies inside it call require() for Node's own
// modules, which an ES module does not have.
const REQUIRE_SHIM = "import { createRequire as __wardenCreateRequire } from 'node:module'; const require = __wardenCreateRequire(import.meta.url);";

for (const entry of ENTRIES) {
  const file = join(dist, `${entry}.js`);
  if (!existsSync(file)) throw new Error(`bundle: ${file} is missing: run tsc first`);
  // One build per command, written to the command's own folder: code that finds files next to
  // itself through import.meta.url (the configuration process, the fencer's launcher, the
  // package's version) finds them from the bundle as from the compiled file.
  const result = await build({
    entryPoints: [file],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    // Error classes name themselves after their class (new.target.name): names are kept.
    keepNames: true,
    // Modules imported on demand (the configuration parser, loaded again on a reload) stay in
    // files of their own, so the long-running process never holds their source.
    splitting: true,
    outdir: dirname(file),
    entryNames: '[name].bundle',
    chunkNames: '[name].bundle-chunk-[hash]',
    banner: { js: REQUIRE_SHIM },
    // pg's optional native binding, required only when asked for.
    external: ['pg-native'],
    logLevel: 'warning',
    metafile: true,
  });
  const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  console.log(`bundled ${entry}: ${Object.keys(result.metafile.outputs).length} file(s), ${(bytes / 1024).toFixed(0)} KiB`);
}
