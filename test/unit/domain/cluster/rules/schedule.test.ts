import { expect } from 'chai';
import { WardenError } from '../../../../../src/domain/errors.js';
import {
  NONE_SCHEDULED,
  SCHEDULE_ERROR_STATUS,
  cancelRestart,
  cancelSwitchover,
  isDue,
  isStale,
  parseScheduleTime,
  restartScheduleFrom,
  scheduleRestart,
  scheduleSwitchover,
  scheduleVerdict,
  switchoverScheduleFromKey,
  type RestartSchedule,
  type SwitchoverSchedule,
} from '../../../../../src/domain/cluster/rules/schedule.js';
import { NOW } from '../fixtures.js';

const IN_AN_HOUR = '2030-01-01T01:00:00+00:00';
const AT = NOW + 3_600_000;
const running = { paused: false, now: NOW };
const paused = { paused: true, now: NOW };

function errorOf(fn: () => unknown): WardenError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(WardenError);
    return e as WardenError;
  }
  throw new Error('did not throw');
}

describe('domain/cluster/schedule: the seed table, transition by transition', () => {
  it('none scheduled --POST /switchover with scheduled_at, not paused--> switchover scheduled', () => {
    const next = scheduleSwitchover(NONE_SCHEDULED, { leader: 'node1', candidate: 'node2', scheduledAt: IN_AN_HOUR }, running);
    expect(next).to.deep.equal({ kind: 'scheduled', at: AT, scheduledAt: IN_AN_HOUR, from: 'node1', to: 'node2' });
  });

  it('none scheduled --POST /switchover with scheduled_at while paused--> refused (paused, 400), state unchanged', () => {
    const e = errorOf(() => scheduleSwitchover(NONE_SCHEDULED, { leader: 'node1', candidate: null, scheduledAt: IN_AN_HOUR }, paused));
    expect(e.code).to.equal('paused');
    expect(e.message).to.include('maintenance mode');
    expect(SCHEDULE_ERROR_STATUS.paused).to.equal(400);
  });

  it('switchover scheduled --DELETE /switchover--> none scheduled', () => {
    const scheduled: SwitchoverSchedule = { kind: 'scheduled', at: AT, scheduledAt: IN_AN_HOUR, from: 'node1', to: null };
    expect(cancelSwitchover(scheduled)).to.deep.equal({ kind: 'none' });
  });

  it('none scheduled --DELETE /switchover--> not_scheduled (404)', () => {
    expect(errorOf(() => cancelSwitchover(NONE_SCHEDULED)).code).to.equal('not_scheduled');
    expect(SCHEDULE_ERROR_STATUS.not_scheduled).to.equal(404);
  });

  it('switchover scheduled --POST /switchover with scheduled_at--> already_scheduled (delete it first)', () => {
    const scheduled = scheduleSwitchover(NONE_SCHEDULED, { leader: 'node1', candidate: null, scheduledAt: IN_AN_HOUR }, running);
    const e = errorOf(() => scheduleSwitchover(scheduled, { leader: 'node1', candidate: null, scheduledAt: IN_AN_HOUR }, running));
    expect(e.code).to.equal('already_scheduled');
  });

  it('none scheduled --POST /restart with schedule--> restart scheduled', () => {
    const next = scheduleRestart(NONE_SCHEDULED, { schedule: IN_AN_HOUR, restart_pending: true, role: 'replica' }, running);
    expect(next).to.deep.equal({ kind: 'scheduled', at: AT, restart: { schedule: IN_AN_HOUR, restart_pending: true, role: 'replica' } });
  });

  it('restart scheduled --POST /restart with schedule--> already_scheduled (409)', () => {
    const scheduled = scheduleRestart(NONE_SCHEDULED, { schedule: IN_AN_HOUR }, running);
    const e = errorOf(() => scheduleRestart(scheduled, { schedule: IN_AN_HOUR }, running));
    expect(e.code).to.equal('already_scheduled');
    expect(SCHEDULE_ERROR_STATUS.already_scheduled).to.equal(409);
  });

  it('none scheduled --POST /restart with schedule while paused--> refused (paused, 400)', () => {
    expect(errorOf(() => scheduleRestart(NONE_SCHEDULED, { schedule: IN_AN_HOUR }, paused)).code).to.equal('paused');
  });

  it('restart scheduled --DELETE /restart--> none scheduled', () => {
    const scheduled: RestartSchedule = { kind: 'scheduled', at: AT, restart: { schedule: IN_AN_HOUR } };
    expect(cancelRestart(scheduled)).to.deep.equal({ kind: 'none' });
  });

  it('none scheduled --DELETE /restart--> not_scheduled (404)', () => {
    expect(errorOf(() => cancelRestart(NONE_SCHEDULED)).code).to.equal('not_scheduled');
  });

  it('the two machines are independent: a restart can be scheduled beside a switchover', () => {
    const sw = scheduleSwitchover(NONE_SCHEDULED, { leader: 'node1', candidate: null, scheduledAt: IN_AN_HOUR }, running);
    const rs = scheduleRestart(NONE_SCHEDULED, { schedule: IN_AN_HOUR }, running);
    expect([sw.kind, rs.kind]).to.deep.equal(['scheduled', 'scheduled']);
  });

  it('a bad timestamp refuses the transition with the field named', () => {
    const e = errorOf(() => scheduleRestart(NONE_SCHEDULED, { schedule: '2030-01-01T01:00:00' }, running));
    expect(e.code).to.equal('timezone_required');
    expect(e.message).to.match(/^schedule: /);
    expect(errorOf(() => scheduleSwitchover(NONE_SCHEDULED, { leader: 'a', candidate: null, scheduledAt: 'soon' }, running)).message).to.match(/^scheduled_at: /);
  });
});

describe('domain/cluster/schedule: parseScheduleTime', () => {
  const accepted: [string, number][] = [
    ['2030-01-01T01:00:00Z', AT],
    ['2030-01-01T01:00:00+00:00', AT],
    ['2030-01-01T03:00:00+02:00', AT],
    ['2029-12-31T20:00:00-05:00', AT],
    ['2030-01-01T03:00:00+0200', AT],
    ['2030-01-01 01:00:00Z', AT],
    ['2030-01-01T01:00Z', AT],
    ['2030-01-01T01:00:00.250Z', AT + 250],
    ['2030-01-01T00:00:00Z', NOW],
  ];
  for (const [text, ms] of accepted) {
    it(`accepts ${text}`, () => {
      expect(parseScheduleTime(text, NOW)).to.equal(ms);
    });
  }

  it('requires an explicit time zone (timezone_required)', () => {
    const e = errorOf(() => parseScheduleTime('2030-01-01T01:00:00', NOW));
    expect(e.code).to.equal('timezone_required');
    expect(e.message).to.include('"2030-01-01T01:00:00"');
    expect(e.message).to.include('time zone');
  });

  for (const text of ['tomorrow', '', '2030-13-01T00:00:00Z', '2030-02-30T00:00:00Z', '2030-01-01T24:00:00Z', '2030-01-01T01:00:00+25:00', '1893456000', '2030-01-01']) {
    it(`refuses ${JSON.stringify(text)} as unparseable (invalid_schedule, 422)`, () => {
      const e = errorOf(() => parseScheduleTime(text, NOW));
      expect(e.code).to.equal('invalid_schedule');
      expect(e.message).to.include(JSON.stringify(text));
    });
  }

  it('refuses a time in the past (schedule_in_past, 422)', () => {
    const e = errorOf(() => parseScheduleTime('2029-12-31T23:59:59Z', NOW));
    expect(e.code).to.equal('schedule_in_past');
    expect(e.message).to.include('2030-01-01T00:00:00.000Z');
    expect(SCHEDULE_ERROR_STATUS.schedule_in_past).to.equal(422);
    expect(SCHEDULE_ERROR_STATUS.invalid_schedule).to.equal(422);
  });
});

describe('domain/cluster/schedule: when a scheduled action runs', () => {
  it('isDue: from the scheduled moment on', () => {
    expect(isDue(AT, AT - 1)).to.equal(false);
    expect(isDue(AT, AT)).to.equal(true);
  });

  it('isStale: more than 1.5 loop_wait late', () => {
    expect(isStale(AT, AT + 15_000, 10)).to.equal(false);
    expect(isStale(AT, AT + 15_001, 10)).to.equal(true);
  });

  it('scheduleVerdict: wait, due, stale', () => {
    expect(scheduleVerdict(AT, AT - 1, 10)).to.equal('wait');
    expect(scheduleVerdict(AT, AT + 5_000, 10)).to.equal('due');
    expect(scheduleVerdict(AT, AT + 60_000, 10)).to.equal('stale');
  });
});

describe('domain/cluster/schedule: state from stored keys', () => {
  it('a failover key with scheduled_at is a scheduled switchover', () => {
    expect(switchoverScheduleFromKey({ leader: 'node1', member: 'node2', scheduledAt: IN_AN_HOUR, revision: '3' })).to.deep.equal({
      kind: 'scheduled', at: AT, scheduledAt: IN_AN_HOUR, from: 'node1', to: 'node2',
    });
  });

  it('no key, or an immediate request, is none scheduled', () => {
    expect(switchoverScheduleFromKey(null)).to.deep.equal(NONE_SCHEDULED);
    expect(switchoverScheduleFromKey({ leader: 'node1', member: 'node2', scheduledAt: null, revision: '3' })).to.deep.equal(NONE_SCHEDULED);
  });

  it('a scheduled restart in the member key is a scheduled restart', () => {
    expect(restartScheduleFrom({ schedule: IN_AN_HOUR })).to.deep.equal({ kind: 'scheduled', at: AT, restart: { schedule: IN_AN_HOUR } });
    expect(restartScheduleFrom(null)).to.deep.equal(NONE_SCHEDULED);
  });
});
