// What the launchers in bin/ run: the build's one-file bundle of a command when it is current,
// else the compiled entry (a bundle older than it is stale: tsc ran again without bundling).
import { expect } from 'chai';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('launchers: which build of a command they run', () => {
  let dir: string;
  let load: (entry: string, command: string) => Promise<{ which: string }>;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warden-launch-'));
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'dist', 'app', 'cmd'), { recursive: true });
    // A copy of the real launcher module: it finds the package from its own location.
    copyFileSync(join(root, 'bin', 'launch.js'), join(dir, 'bin', 'launch.js'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module","version":"0.0.0"}');
    writeFileSync(join(dir, 'dist', 'app', 'cmd', 'main.js'), "export const which = 'compiled';\n");
    ({ load } = (await import(pathToFileURL(join(dir, 'bin', 'launch.js')).href)) as { load: typeof load });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const setTimes = (file: string, seconds: number) => utimesSync(file, seconds, seconds);

  it('the compiled entry when there is no bundle', async () => {
    expect((await load('cmd/main', 'cmd')).which).to.equal('compiled');
  });

  it('the bundle when it is as new as the compiled entry or newer (an installed package has equal times)', async () => {
    const bundle = join(dir, 'dist', 'app', 'cmd', 'main.bundle.js');
    writeFileSync(bundle, "export const which = 'bundle';\n");
    setTimes(join(dir, 'dist', 'app', 'cmd', 'main.js'), 1_000_000);
    setTimes(bundle, 1_000_000);
    expect((await load('cmd/main', 'cmd')).which).to.equal('bundle');
  });

  it('the compiled entry when the bundle is older than it', async () => {
    const bundle = join(dir, 'dist', 'app', 'cmd', 'main.bundle.js');
    writeFileSync(bundle, "export const which = 'stale bundle';\n");
    setTimes(bundle, 1_000_000);
    setTimes(join(dir, 'dist', 'app', 'cmd', 'main.js'), 2_000_000);
    expect((await load('cmd/main', 'cmd')).which).to.equal('compiled');
  });
});
