import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readlinkSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launcherDirPrefix, removeLauncherDirsOfGoneProcesses } from '../../../../src/adapters/process/launcher-dirs.js';

/** A pid that named a process a moment ago and names none now. */
function deadPid(): number {
  const r = spawnSync('/bin/sh', ['-c', 'echo $$']);
  return Number(String(r.stdout).trim());
}

describe('adapters/process: launcher directories of processes killed before their exit are removed by the next one', function () {
  this.timeout(20_000);
  const ns = /\d+/.exec(readlinkSync('/proc/self/ns/pid'))![0];
  let tmp: string;
  beforeEach(() => (tmp = mkdtempSync(join(tmpdir(), 'warden-launcher-dirs-test-'))));
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('names its directory with its pid namespace and pid', () => {
    expect(launcherDirPrefix()).to.equal(`warden-launcher-${ns}-${process.pid}-`);
  });

  it('removes those of gone processes, with their files; keeps live ones, other namespaces, links, other names', async () => {
    const dead = deadPid();
    const sleeper = spawn('sleep', ['30']);
    try {
      const goneDir = join(tmp, `warden-launcher-${ns}-${dead}-Ab12Cd`);
      mkdirSync(goneDir);
      writeFileSync(join(goneDir, 'launcher.sh'), 'x');
      writeFileSync(join(goneDir, '3.out'), 'y');
      const kept = [
        `warden-launcher-${ns}-${sleeper.pid}-Zz99Yy`, // alive
        `warden-launcher-${ns}-${process.pid}-Qq11Ww`, // this process
        `warden-launcher-1${ns}-${dead}-Ab12Cd`, // another pid namespace
        'warden-launcher-Xy12Zw', // the name of earlier versions: whose it was is unknown
        `warden-launcher-test-${dead}-a`,
      ];
      for (const name of kept) mkdirSync(join(tmp, name));
      // A link named like a gone process's directory: not followed, not removed.
      const target = mkdtempSync(join(tmp, 'target-'));
      writeFileSync(join(target, 'keep'), 'z');
      symlinkSync(target, join(tmp, `warden-launcher-${ns}-${dead}-Link00`));
      // A file so named: not a directory.
      writeFileSync(join(tmp, `warden-launcher-${ns}-${dead}-File00`), '');

      expect(await removeLauncherDirsOfGoneProcesses(tmp)).to.deep.equal([goneDir]);
      expect(existsSync(goneDir)).to.equal(false);
      for (const name of kept) expect(existsSync(join(tmp, name)), name).to.equal(true);
      expect(existsSync(join(target, 'keep'))).to.equal(true);
      expect(readdirSync(tmp)).to.include.members([`warden-launcher-${ns}-${dead}-Link00`, `warden-launcher-${ns}-${dead}-File00`]);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a process killed with SIGKILL after running a command leaves its directory; the next launcher removes it', async () => {
    const env = { ...process.env, TMPDIR: tmp };
    const script = `import { sharedLauncher } from ${JSON.stringify(resolve('src/adapters/process/shell-launcher.ts'))};
      const r = await sharedLauncher().launch('/bin/true', []).done;
      if (r.code !== 0) process.exit(3);
      process.kill(process.pid, 'SIGKILL');`;
    const first = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env, encoding: 'utf8' });
    expect(first.signal, first.stderr).to.equal('SIGKILL');
    const left = readdirSync(tmp).filter((n) => n.startsWith(`warden-launcher-${ns}-${first.pid}-`));
    expect(left).to.have.length(1);

    // The next one removes it once it starts its own launcher, and its own goes at its exit.
    const second = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script.replace("process.kill(process.pid, 'SIGKILL');", 'await new Promise((r) => setTimeout(r, 500));')], { env, encoding: 'utf8' });
    expect(second.status, second.stderr).to.equal(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('warden-launcher-'))).to.deep.equal([]);
  });
});
