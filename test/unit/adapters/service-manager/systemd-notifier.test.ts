import { expect } from 'chai';
import { SystemdNotifier } from '../../../../src/adapters/service-manager/systemd-notifier.js';

describe('SystemdNotifier', () => {
  it('does nothing without NOTIFY_SOCKET', async () => {
    const calls: string[][] = [];
    const n = new SystemdNotifier({}, undefined, async (_f, args) => void calls.push([...args]));
    expect(n.enabled).to.equal(false);
    await n.ready('x');
    expect(calls).to.deep.equal([]);
  });

  it('sends READY, RELOADING (with MONOTONIC_USEC), STOPPING and STATUS through systemd-notify, in order, with only the socket in the environment', async () => {
    const calls: { file: string; args: string[]; env: NodeJS.ProcessEnv }[] = [];
    const n = new SystemdNotifier({ NOTIFY_SOCKET: '/run/systemd/notify', SECRET: 'x' }, undefined, async (file, args, env) => {
      await new Promise((r) => setTimeout(r, args[0] === 'READY=1' ? 5 : 0));
      calls.push({ file, args: [...args], env });
    });
    void n.ready('up');
    void n.reloading();
    void n.status('primary');
    await n.stopping('bye');
    expect(calls.map((c) => c.args[0])).to.deep.equal(['READY=1', 'RELOADING=1', 'STATUS=primary', 'STOPPING=1']);
    expect(calls[0]!.args).to.deep.equal(['READY=1', 'STATUS=up']);
    expect(calls[1]!.args[1]).to.match(/^MONOTONIC_USEC=\d+$/);
    expect(calls[0]!.file).to.equal('systemd-notify');
    expect(calls[0]!.env['NOTIFY_SOCKET']).to.equal('/run/systemd/notify');
    expect(calls[0]!.env).not.to.have.property('SECRET');
  });

  it('reports a failing helper and never throws', async () => {
    const errors: string[] = [];
    const n = new SystemdNotifier({ NOTIFY_SOCKET: '@x' }, (e) => errors.push(e), async () => {
      throw new Error('spawn systemd-notify ENOENT');
    });
    await n.ready();
    await n.stopping();
    expect(errors).to.deep.equal(['spawn systemd-notify ENOENT', 'spawn systemd-notify ENOENT']);
  });
});
