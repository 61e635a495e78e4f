import { expect } from 'chai';
import { childEnvironment } from '../../../../src/adapters/process/child-environment.js';
import { runCommand } from '../../../../src/adapters/database/run-command.js';

describe('the environment of processes the agent starts', () => {
  it("keeps the agent's environment but its WARDEN_ variables (passwords among them), and adds the extra ones", () => {
    const env = { PATH: '/bin', LANG: 'C', WARDEN_DB_SUPERUSER_PASSWORD: 'su', WARDEN_RESTAPI_PASSWORD: 'api' };
    expect(childEnvironment({ PGPASSWORD: 'x' }, env)).to.deep.equal({ PATH: '/bin', LANG: 'C', PGPASSWORD: 'x' });
  });

  it('a command run by the database adapter does not see them', async () => {
    process.env['WARDEN_TEST_SECRET'] = 'leak';
    try {
      const { stdout } = await runCommand('/usr/bin/env', [], { runAs: null, timeoutMs: 5000 });
      expect(stdout).not.to.include('WARDEN_TEST_SECRET');
      expect(stdout).to.include('PATH=');
    } finally {
      delete process.env['WARDEN_TEST_SECRET'];
    }
  });
});
