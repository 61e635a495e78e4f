import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChildProcessCallbackRunner } from '../../../../src/adapters/callbacks/child-process-callback-runner.js';
import type { CallbackAction } from '../../../../src/ports/callbacks.js';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';

describe('adapters/callbacks: ChildProcessCallbackRunner', function () {
  this.timeout(10_000);
  const dir = mkdtempSync(join(tmpdir(), 'warden-cb-'));
  const out = join(dir, 'calls.txt');
  const script = join(dir, 'cb.sh');
  writeFileSync(script, `#!/bin/sh\necho "$@" >> ${out}\n[ "$1" = on_stop ] && exit 3\n[ "$1" = on_restart ] && sleep 5\nexit 0\n`);
  chmodSync(script, 0o755);
  after(() => rmSync(dir, { recursive: true, force: true }));

  function runner(commands: Partial<Record<CallbackAction, string>>, failures: string[]) {
    return new ChildProcessCallbackRunner({
      commands: () => commands,
      timeoutSeconds: () => 1,
      scope: 'demo',
      logger: new NullLogger(),
      onFailure: (action, role, why) => failures.push(`${action} ${role}: ${why}`),
      killGraceMs: 200,
    });
  }

  it("calls the command Patroni's way: <command> <action> <role> <cluster name>, in the background", async () => {
    const failures: string[] = [];
    const r = runner({ on_role_change: `${script} --extra`, on_start: script }, failures);
    r.run('on_role_change', 'primary');
    await r.idle();
    r.run('on_start', 'replica');
    r.run('on_reload', 'replica'); // not configured: nothing runs
    await r.idle();
    expect(readFileSync(out, 'utf8').trim().split('\n')).to.deep.equal(['--extra on_role_change primary demo', 'on_start replica demo']);
    expect(failures).to.deep.equal([]);
  });

  it('a failing command, a timeout and a missing program are reported', async () => {
    const failures: string[] = [];
    const r = runner({ on_stop: script, on_restart: script, on_reload: join(dir, 'missing.sh') }, failures);
    r.run('on_stop', 'primary');
    await r.idle();
    const t0 = Date.now();
    r.run('on_restart', 'primary');
    await r.idle();
    expect(Date.now() - t0).to.be.below(3500);
    r.run('on_reload', 'replica');
    await r.idle();
    expect(failures[0]).to.equal('on_stop primary: exited with code 3');
    expect(failures[1]).to.match(/^on_restart primary: timed out after 1 s/);
    expect(failures[2]).to.match(/^on_reload replica: exited with code 127/);
  });

  it('an on_stop that outlives the agent (its shutdown waits a few seconds at most) and writes after the agent exited runs to its end', async () => {
    const progress = join(dir, 'on-stop-progress.txt');
    const onStop = join(dir, 'on-stop.sh');
    // A script that announces itself, is still at work when the agent exits, then reports more, on stdout and stderr.
    writeFileSync(onStop, `#!/bin/sh\necho "stopping $1 $2 $3"\nsleep 0.8\necho "started: $$" >> ${progress}\necho "still stopping"\necho "a warning" >&2\nseq 1 200000\necho "wrote" >> ${progress}\nexit 0\n`);
    chmodSync(onStop, 0o755);
    const main = join(dir, 'agent.mts');
    const source = resolve('src/adapters/callbacks/child-process-callback-runner.ts');
    writeFileSync(
      main,
      `import { ChildProcessCallbackRunner } from ${JSON.stringify(source)};\n` +
        `const logger = { debug() {}, info() {}, warn() {}, error() {}, child() { return logger; } };\n` +
        `const r = new ChildProcessCallbackRunner({ commands: () => ({ on_stop: ${JSON.stringify(onStop)} }), timeoutSeconds: () => 30, scope: 'demo', logger, onFailure: () => undefined });\n` +
        `r.run('on_stop', 'primary');\n` +
        // The agent's exit after its shutdown grace, the callback still running.
        `await Promise.race([r.idle(), new Promise((done) => setTimeout(done, 300))]);\n` +
        `process.exit(0);\n`,
    );
    await new Promise<void>((done, fail) => execFile(process.execPath, ['--import', 'tsx', main], { timeout: 8000 }, (error) => (error ? fail(error) : done())));
    const t0 = Date.now();
    while (!/wrote/.test(existsSync(progress) ? readFileSync(progress, 'utf8') : '') && Date.now() - t0 < 6000) await sleep(50);
    // Killed by SIGPIPE at its first write after the agent's exit, it never got to "wrote".
    expect(readFileSync(progress, 'utf8')).to.match(/^started: \d+\nwrote\n$/);
  });

  it('a callback that exits leaving a child in the background is finished at once, not timed out', async () => {
    const pids = join(dir, 'cb-pids.txt');
    const failures: string[] = [];
    try {
      const r = runner({ on_start: `setsid sleep 30 & echo $! >> ${pids}; sleep 30 & echo $! >> ${pids}; exit 0` }, failures);
      const t0 = Date.now();
      r.run('on_start', 'primary');
      await r.idle();
      expect(Date.now() - t0).to.be.below(900);
      expect(failures).to.deep.equal([]);
    } finally {
      for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) for (const target of [pid, -pid]) try { process.kill(target, 'SIGKILL'); } catch { /* gone */ }
    }
  });
});
