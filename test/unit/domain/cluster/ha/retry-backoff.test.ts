import { expect } from 'chai';
import { decide } from '../../../../../src/domain/cluster/ha/decide.js';
import { EMPTY_MEMORY, NO_COMMANDS } from '../../../../../src/domain/cluster/ha/decision.js';
import { failureLogged, jobFailuresAfter, jobRetryDelayMs, MAX_RETRY_DELAY_MS, retryDelayMs } from '../../../../../src/domain/cluster/ha/retry-backoff.js';
import { nextLoggedRepeat } from '../../../../../src/domain/cluster/rules/repeat-log.js';
import { stoppedFacts } from '../../../../../src/domain/cluster/model/facts.js';
import { cluster, input, member, NOW, types } from './fixtures.js';

describe('decide(): a job that keeps failing backs off', () => {
  it('retries at the normal pace once, then doubles the wait, capped at five minutes', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 2000))).to.deep.equal([2000, 4000, 8000, 16_000, 32_000]);
    expect(retryDelayMs(1, 0)).to.equal(1000);
    expect(retryDelayMs(30, 10_000)).to.equal(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(10_000, 10_000)).to.equal(MAX_RETRY_DELAY_MS);
  });

  it('a copy or rewind whose source did not take a connection is tried again at least every ttl; other failures of those jobs wait up to five minutes', () => {
    expect(jobRetryDelayMs('create_replica_source_unreachable', 8, 2000, 30_000)).to.equal(30_000);
    expect(jobRetryDelayMs('rewind_source_unreachable', 12, 10_000, 30_000)).to.equal(30_000);
    expect(jobRetryDelayMs('create_replica_source_unreachable', 2, 2000, 30_000)).to.equal(4000);
    expect(jobRetryDelayMs('create_replica_failed', 8, 2000, 30_000)).to.equal(256_000);
    expect(jobRetryDelayMs('create_replica_failed', 12, 2000, 30_000)).to.equal(MAX_RETRY_DELAY_MS);
  });

  it('a job retried at the loop pace logs its first failure, a new error, then attempts 4, 16, 64', () => {
    const logged = (job: string) => Array.from({ length: 70 }, (_, i) => i + 1).filter((n) => failureLogged(job, n, false));
    expect(logged('stop')).to.deep.equal([1, 4, 16, 64]);
    expect(failureLogged('stop', 7, true)).to.equal(true);
    expect(logged('start')).to.have.length(70);
    expect([1, 3, 4, 15, 16, 64].map(nextLoggedRepeat)).to.deep.equal([4, 4, 16, 16, 64, 256]);
  });

  /** A node with an empty data directory and an empty cluster: it bootstraps. */
  const empty = (failures: { count: number; lastAt: number } | null, extra = {}) =>
    input({
      cluster: { ...cluster(null), initialize: null, members: [] },
      facts: stoppedFacts('stopped', false),
      memory: { ...EMPTY_MEMORY, jobFailures: failures ? [{ job: 'bootstrap', error: 'initdb: exited with code 1', ...failures }] : [] },
      ...extra,
    });

  it('a bootstrap that failed three times waits its delay, keeps the initialize key free, says why, then tries again', () => {
    expect(decide(empty(null)).job).to.equal('bootstrap');
    // loop_wait 10 s: after the third failure the next attempt comes 40 s later.
    const held = decide(empty({ count: 3, lastAt: NOW - 5000 }));
    expect(held.job).to.equal(null);
    expect(types(held)).to.deep.equal([]);
    expect(held.wakeAt).to.equal(NOW + 35_000);
    expect(held.message).to.match(/waiting 35 s before the next attempt \(bootstrap failed 3 times in a row; last error: initdb: exited with code 1\)$/);
    expect(held.publish.waitingFor).to.equal('the next attempt to bootstrap (failed 3 times in a row: initdb: exited with code 1)');
    expect(held.publish.backoff).to.deep.equal({ job: 'bootstrap', retryAt: NOW + 35_000 });
    expect(decide(empty({ count: 3, lastAt: NOW - 40_000 })).job).to.equal('bootstrap');
  });

  it('only the job that failed is held back, and never an operator command', () => {
    const otherJob = input({ facts: stoppedFacts('stopped', true), memory: { ...EMPTY_MEMORY, appliedParameters: '{}', jobFailures: [{ job: 'bootstrap', count: 5, lastAt: NOW, error: 'x' }] } });
    expect(decide(otherJob).job).to.equal('start');
    // A replica whose start keeps failing: held back; a restart the operator asks for is not.
    const c = cluster('node1', { members: [member('node1', { role: 'primary' }), member('node2'), member('node3')] });
    const failing = { ...EMPTY_MEMORY, appliedParameters: '{}', jobFailures: [{ job: 'start', count: 4, lastAt: NOW - 1000, error: 'pg_ctl: could not start server' }] };
    const held = decide(input({ cluster: c, facts: stoppedFacts('start_failed', true), memory: failing }));
    expect(types(held)).to.deep.equal([]);
    expect(held.message).to.match(/waiting 79 s before the next attempt/);
    const asked = decide(input({ cluster: c, facts: stoppedFacts('start_failed', true), memory: failing, commands: { ...NO_COMMANDS, restart: { id: 7, conditions: {} } } }));
    // The restart is the start, now, answered once it ran (not refused as a start "in progress").
    expect(asked.job).to.equal('start');
    expect(types(asked).slice(-2)).to.deep.equal(['start', 'resolveCommand']);
    expect(asked.actions.at(-1)).to.deep.equal({ type: 'resolveCommand', id: 7, ok: true, message: 'started on request' });
    expect(asked.message).to.match(/starting on request$/);
    const timed = decide(input({ cluster: c, facts: stoppedFacts('start_failed', true), memory: failing, commands: { ...NO_COMMANDS, restart: { id: 7, conditions: { timeout: 90 } } } }));
    expect(timed.actions.find((a) => a.type === 'start')).to.deep.include({ timeoutMs: 90_000 });
    // A refused restart is said, and the start still waits its turn.
    const refused = decide(input({ cluster: c, facts: stoppedFacts('start_failed', true), memory: failing, commands: { ...NO_COMMANDS, restart: { id: 7, conditions: { role: 'primary' } } } }));
    expect(types(refused)).to.deep.equal(['resolveCommand']);
    expect(refused.actions[0]).to.deep.include({ ok: false, error: 'restart_conditions_not_met' });
    expect(refused.message).to.match(/waiting 79 s before the next attempt/);
  });

  it('two jobs that fail by turns keep their own counts, and each is held back by its own', () => {
    let failures = jobFailuresAfter([], 'start', 'pg_ctl: could not start server', NOW - 30_000);
    failures = jobFailuresAfter(failures, 'rewind', 'pg_rewind: source and target clusters are from different systems', NOW - 20_000);
    failures = jobFailuresAfter(failures, 'start', 'pg_ctl: could not start server', NOW - 10_000);
    failures = jobFailuresAfter(failures, 'rewind', 'pg_rewind: source and target clusters are from different systems', NOW - 1000);
    expect(failures.map((f) => [f.job, f.count])).to.deep.equal([
      ['start', 2],
      ['rewind', 2],
    ]);
    // The start failed twice, last 10 s ago: with loop_wait 10 s it waits 20 s after that.
    const c = cluster('node1', { members: [member('node1', { role: 'primary' }), member('node2'), member('node3')] });
    const held = decide(input({ cluster: c, facts: stoppedFacts('start_failed', true), memory: { ...EMPTY_MEMORY, appliedParameters: '{}', jobFailures: failures } }));
    expect(held.message).to.match(/waiting 10 s before the next attempt \(start failed 2 times in a row/);
    // A success removes only that job's entry.
    expect(jobFailuresAfter(failures, 'start', null, NOW).map((f) => f.job)).to.deep.equal(['rewind']);
    expect(jobFailuresAfter(failures, 'follow', null, NOW)).to.equal(failures);
    // A failure long after the last one is a first failure again.
    expect(jobFailuresAfter(failures, 'start', 'x', NOW - 10_000 + 2 * MAX_RETRY_DELAY_MS).find((f) => f.job === 'start')!.count).to.equal(3);
    expect(jobFailuresAfter(failures, 'start', 'x', NOW + 3 * MAX_RETRY_DELAY_MS).find((f) => f.job === 'start')!.count).to.equal(1);
  });

  it('a leader whose crashed primary does not start keeps refreshing its key while it waits', () => {
    const c = cluster('node2', { members: [member('node1'), member('node2', { role: 'primary' }), member('node3')] });
    const memory = { ...EMPTY_MEMORY, appliedParameters: '{}', lastRole: 'primary' as const, primaryStartAt: NOW - 20_000, jobFailures: [{ job: 'start', count: 2, lastAt: NOW - 1000, error: 'x' }] };
    const d = decide(input({ cluster: c, facts: stoppedFacts('crashed', true), memory, lockDeadline: NOW + 20_000 }));
    expect(types(d)).to.deep.equal(['refreshLeader']);
  });
});
