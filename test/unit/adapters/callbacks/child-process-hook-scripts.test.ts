import { expect } from 'chai';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildProcessHookScripts } from '../../../../src/adapters/callbacks/child-process-hook-scripts.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import type { HookName } from '../../../../src/ports/hook-scripts.js';

describe('adapters/callbacks: ChildProcessHookScripts', function () {
  this.timeout(10_000);
  const dir = mkdtempSync(join(tmpdir(), 'warden-hook-'));
  const out = join(dir, 'calls.txt');
  const script = join(dir, 'hook.sh');
  writeFileSync(script, `#!/bin/sh\necho "run $# $WARDEN_SECRET" >> ${out}\necho "fencing node1"\n[ "$1" = fail ] && { echo "ipmi unreachable" >&2; exit 2; }\n[ "$1" = hang ] && sleep 30\nexit 0\n`);
  chmodSync(script, 0o755);
  after(() => rmSync(dir, { recursive: true, force: true }));

  function hooks(commands: Partial<Record<HookName, string>>, failures: string[], logger = new MemoryLogger()) {
    return new ChildProcessHookScripts({ commands: () => commands, timeoutSeconds: () => 1, logger, onFailure: (name, why) => failures.push(`${name}: ${why}`), killGraceMs: 200 });
  }

  it('waits for the script, run with no arguments of its own and without the WARDEN_ variables; an unset hook does not run', async () => {
    process.env['WARDEN_SECRET'] = 'pw';
    const failures: string[] = [];
    const logger = new MemoryLogger();
    const h = hooks({ pre_promote: script }, failures, logger);
    try {
      expect(await h.run('pre_promote')).to.deep.equal({ ran: true, ok: true });
      expect(await h.run('before_stop')).to.deep.equal({ ran: false });
    } finally {
      delete process.env['WARDEN_SECRET'];
    }
    expect(readFileSync(out, 'utf8')).to.equal('run 0 \n');
    expect(failures).to.deep.equal([]);
    expect(logger.find('pre_promote script finished')[0]?.fields).to.deep.include({ output: 'fencing node1' });
  });

  it('post_bootstrap gets its call: the URL as its argument, the password and libpq options in its environment, and no time limit', async () => {
    const seen = join(dir, 'post-bootstrap.txt');
    const post = join(dir, 'post.sh');
    writeFileSync(post, `#!/bin/sh\nsleep 1.5\necho "$# $1 $PGPASSWORD $PGOPTIONS" > ${seen}\n`);
    chmodSync(post, 0o755);
    const failures: string[] = [];
    const h = new ChildProcessHookScripts({
      commands: () => ({ post_bootstrap: post }),
      timeoutSeconds: () => 1,
      callOf: (name) => (name === 'post_bootstrap' ? { args: ['postgresql://postgres@127.0.0.1:5433/postgres'], env: { PGPASSWORD: 'pw', PGOPTIONS: '-c synchronous_commit=local' }, untimed: true } : {}),
      logger: new MemoryLogger(),
      onFailure: (name, why) => failures.push(`${name}: ${why}`),
    });
    expect(await h.run('post_bootstrap'), 'ran past callback_timeout').to.deep.equal({ ran: true, ok: true });
    expect(readFileSync(seen, 'utf8')).to.equal('1 postgresql://postgres@127.0.0.1:5433/postgres pw -c synchronous_commit=local\n');
    expect(failures).to.deep.equal([]);
  });

  it('a non-zero exit, a timeout (the script and its children killed) and a missing program are failures, with the output', async () => {
    const failures: string[] = [];
    const failing = await hooks({ pre_promote: `${script} fail` }, failures).run('pre_promote');
    expect(failing).to.deep.equal({ ran: true, ok: false, why: 'exited with code 2: fencing node1\nipmi unreachable' });
    const t0 = Date.now();
    const hung = await hooks({ before_stop: `${script} hang` }, failures).run('before_stop');
    expect(Date.now() - t0).to.be.below(3500);
    expect(hung.ran && !hung.ok && hung.why).to.match(/^timed out after 1 s and was killed: fencing node1/);
    const missing = await hooks({ pre_promote: join(dir, 'missing.sh') }, failures).run('pre_promote');
    expect(missing.ran && !missing.ok && missing.why).to.match(/^exited with code 127/);
    expect(failures.map((f) => f.split(':')[0])).to.deep.equal(['pre_promote', 'before_stop', 'pre_promote']);
  });

  it('a script is over when it exits: a child it leaves in the background (setsid too) neither holds nor fails pre_promote, and lives on', async () => {
    const pids = join(dir, 'hook-pids.txt');
    const failures: string[] = [];
    try {
      for (const background of ['sleep 30', 'setsid sleep 30']) {
        const t0 = Date.now();
        const outcome = await hooks({ pre_promote: `echo fenced; ${background} & echo $! >> ${pids}; exit 0` }, failures).run('pre_promote');
        expect(outcome, background).to.deep.equal({ ran: true, ok: true });
        expect(Date.now() - t0, `${background}: not held until callback_timeout`).to.be.below(900);
      }
      const children = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
      expect(children).to.have.length(2);
      for (const pid of children) expect(() => process.kill(pid, 0), 'not killed').not.to.throw();
      expect(failures).to.deep.equal([]);
    } finally {
      for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) for (const target of [pid, -pid]) try { process.kill(target, 'SIGKILL'); } catch { /* gone */ }
    }
  });
});
