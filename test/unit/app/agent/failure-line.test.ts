import { expect } from 'chai';
import { failureLine } from '../../../../src/app/agent/failure-line.js';

describe('failureLine: a failure in one line keeps the server log reason', () => {
  it('keeps the FATAL line an error quotes after its first line, without timestamp and PID', () => {
    const error = [
      'start: the server exited during start-up; server log:',
      '2026-11-28 14:01:02.003 UTC [123] LOG:  starting PostgreSQL 15.20',
      '2026-11-28 14:01:02.004 UTC [123] FATAL:  invalid value for parameter "shared_buffers": "bogus"',
      '2026-11-28 14:01:02.005 UTC [123] LOG:  database system is shut down',
    ].join('\n');
    expect(failureLine(error)).to.equal('start: the server exited during start-up: FATAL: invalid value for parameter "shared_buffers": "bogus"');
    expect(failureLine('promote: still in recovery after 300000 ms')).to.equal('promote: still in recovery after 300000 ms');
    expect(failureLine('a\nb')).to.equal('a');
  });
});
