import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
