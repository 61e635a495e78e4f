import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanProcesses } from '../../../../src/adapters/database/proc-scan.js';

describe('adapters/database: scanning /proc a few processes at a time', function () {
  this.timeout(20_000);
  let dir: string;
  let sleepers: ChildProcess[] = [];
  beforeEach(() => (dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-proc-scan-test-')))));
  afterEach(() => {
    for (const s of sleepers) s.kill('SIGKILL');
    sleepers = [];
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the processes a pick names (real processes working in a directory), in ascending pid order', async () => {
    sleepers = [0, 1, 2].map(() => spawn('sleep', ['30'], { cwd: dir, stdio: 'ignore' }));
    const found = await scanProcesses(async (pid) => ((await readlink(`/proc/${pid}/cwd`).catch(() => null)) === dir ? pid : null));
    expect(found).to.deep.equal(sleepers.map((s) => s.pid!).sort((a, b) => a - b));
  });

  it('asks about every process once, never about more than 8 at a time', async () => {
    // Enough processes that an unbounded scan would have them all in flight together.
    sleepers = Array.from({ length: 40 }, () => spawn('sleep', ['30'], { stdio: 'ignore' }));
    const before = (await readdir('/proc')).filter((e) => /^\d+$/.test(e)).length;
    const asked = new Set<number>();
    let twice = 0;
    let inFlight = 0;
    let most = 0;
    const found = await scanProcesses(async (pid) => {
      if (asked.has(pid)) twice++;
      asked.add(pid);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      return pid % 2 === 0 ? pid : null;
    });
    expect(twice).to.equal(0);
    expect(most).to.equal(8);
    // Processes may start and end elsewhere meanwhile: about as many as /proc listed.
    expect(asked.size).to.be.greaterThan(before - 20);
    expect(found).to.deep.equal([...asked].filter((p) => p % 2 === 0));
  });
});
