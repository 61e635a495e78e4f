import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startScript, type RunningScript, type ScriptOptions } from '../../../../src/adapters/process/script-process.js';

/** Alive: signal 0 reaches it and it is no zombie (an orphan waits for a reaper that may be slow, or none in a container). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('adapters/process: startScript ends with the script, not with its pipes', function () {
  this.timeout(10_000);
  const dir = mkdtempSync(join(tmpdir(), 'warden-script-'));
  const pidFile = join(dir, 'pids');
  /** Process groups of the scripts started by the test, and pids of their background children, killed after it. */
  let groups: number[] = [];

  function start(command: string, o: Partial<ScriptOptions> = {}): RunningScript {
    const s = startScript(command, { name: 'warden-test', timeoutMs: 5000, killGraceMs: 200, ...o });
    void s.pid.then((pid) => pid !== null && groups.push(pid));
    return s;
  }

  /** The pids the script wrote (`echo $! >> pids`). */
  function children(): number[] {
    return existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
  }

  afterEach(() => {
    // By pid and by group only: a setsid child left its script's group, the others are in it.
    for (const pid of children()) for (const target of [pid, -pid]) try { process.kill(target, 'SIGKILL'); } catch { /* gone */ }
    for (const pgid of groups) try { process.kill(-pgid, 'SIGKILL'); } catch { /* gone */ }
    groups = [];
    rmSync(pidFile, { force: true });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a script that exits 0 leaving a child in the background is done at once, with what it printed before', async () => {
    const t0 = Date.now();
    const exit = await start(`echo before; echo warn >&2; sleep 30 & echo $! >> ${pidFile}; exit 0`).done;
    expect(Date.now() - t0, 'not held until the timeout by the pipes its child keeps').to.be.below(1000);
    expect(exit).to.include({ code: 0, signal: null, timedOut: false, spawnError: null });
    expect(exit.output.split('\n').sort()).to.deep.equal(['before', 'warn']);
    const [pid] = children();
    expect(alive(pid!), 'the child it left is not killed').to.equal(true);
  });

  it('likewise when the child left the process group (setsid), out of reach of a kill', async () => {
    const t0 = Date.now();
    const exit = await start(`echo fenced; setsid sleep 30 & echo $! >> ${pidFile}; exit 0`, { timeoutMs: 1000 }).done;
    expect(Date.now() - t0).to.be.below(900);
    expect(exit).to.include({ code: 0, timedOut: false, output: 'fenced' });
    expect(alive(children()[0]!)).to.equal(true);
  });

  it('the exit code is the script’s own, whatever its children do', async () => {
    const exit = await start(`sleep 30 & echo $! >> ${pidFile}; echo no >&2; exit 4`).done;
    expect(exit).to.include({ code: 4, timedOut: false, output: 'no' });
  });

  it('a child that writes after its script ended is not killed by a closed pipe, nor by a later kill()', async () => {
    const s = start(`(sleep 0.4; echo late; echo late >&2; exec sleep 30) & echo $! >> ${pidFile}; echo early; exit 0`);
    const exit = await s.done;
    expect(exit).to.include({ code: 0, output: 'early' });
    s.kill(); // the script is gone: nothing of its group is signalled
    await sleep(800);
    expect(alive(children()[0]!), 'wrote to its stdout and stderr and lives on').to.equal(true);
  });

  it('a script that does not exit is still killed at the timeout, with its children', async () => {
    const t0 = Date.now();
    const s = start(`echo started; sleep 30 & echo $! >> ${pidFile}; sleep 30`, { timeoutMs: 300 });
    const exit = await s.done;
    expect(Date.now() - t0).to.be.below(2000);
    expect(exit).to.include({ code: null, signal: 'SIGTERM', timedOut: true, output: 'started' });
    await sleep(50);
    expect(alive(children()[0]!), 'its background child shares its fate').to.equal(false);
  });

  it('and the kill ends the wait even when a setsid child it started keeps the pipes', async () => {
    const t0 = Date.now();
    const exit = await start(`setsid sleep 30 & echo $! >> ${pidFile}; sleep 30`, { timeoutMs: 300 }).done;
    expect(Date.now() - t0).to.be.below(2000);
    expect(exit).to.include({ signal: 'SIGTERM', timedOut: true });
  });

  /**
   * Runs `command` through startScript in a process of its own (the agent), which exits 300 ms
   * later without waiting for it: what the script writes afterwards finds the agent gone.
   * Resolves with the script's pid.
   */
  async function agentExitsEarly(command: string): Promise<number> {
    const main = join(dir, 'early-exit.mts');
    const source = resolve('src/adapters/process/script-process.ts');
    writeFileSync(
      main,
      `import { startScript } from ${JSON.stringify(source)};\n` +
        `const s = startScript(${JSON.stringify(command)}, { name: 'warden-test', timeoutMs: 30000 });\n` +
        `setTimeout(async () => { console.log(await s.pid); process.exit(0); }, 300);\n`,
    );
    const out = await new Promise<string>((done, fail) => execFile(process.execPath, ['--import', 'tsx', main], { timeout: 8000 }, (error, stdout) => (error ? fail(error) : done(stdout))));
    return Number(out.trim());
  }

  it('a script that writes after the agent stopped reading (the agent exited) is not killed by SIGPIPE: it runs to its end and exits 0', async () => {
    const status = join(dir, 'status');
    const inner = join(dir, 'late-writer.sh');
    // Writes after the agent is gone, more than any pipe holds (a megabyte), to stdout and stderr.
    writeFileSync(inner, '#!/bin/sh\necho early\nsleep 0.7\necho late\necho late >&2\nhead -c 1000000 /dev/zero\nhead -c 1000000 /dev/zero >&2\nexit 0\n');
    chmodSync(inner, 0o755);
    groups.push(await agentExitsEarly(`${inner}; echo "exit $?" > ${status}`));
    const t0 = Date.now();
    while (!existsSync(status) && Date.now() - t0 < 6000) await sleep(50);
    // 141 (128 + SIGPIPE) when the write after the agent's exit killed it.
    expect(readFileSync(status, 'utf8').trim()).to.equal('exit 0');
  });

  it("a child that outlives its script does not keep the agent's process from exiting", async () => {
    const main = join(dir, 'main.mts');
    const source = resolve('src/adapters/process/script-process.ts');
    writeFileSync(main, `import { startScript } from ${JSON.stringify(source)};\nconst e = await startScript('echo hi; sleep 30 & echo $! >> ${pidFile}; exit 0', { name: 'x', timeoutMs: 5000 }).done;\nconsole.log(e.code, e.output);\n`);
    const t0 = Date.now();
    const stdout = await new Promise<string>((done, fail) =>
      execFile(process.execPath, ['--import', 'tsx', main], { timeout: 8000 }, (error, out) => (error ? fail(error) : done(out))),
    );
    expect(stdout.trim()).to.equal('0 hi');
    expect(Date.now() - t0).to.be.below(6000);
    expect(alive(children()[0]!)).to.equal(true);
  });
});
