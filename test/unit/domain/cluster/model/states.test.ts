import { expect } from 'chai';
import { DATABASE_STATES, parseState, stateMetricHelp, stateNumber, stateText } from '../../../../../src/domain/cluster/model/states.js';

/** The API's table (permanent numbers) with their documented strings. */
const TABLE: [number, string, string][] = [
  [0, 'initdb', 'initializing new cluster'],
  [1, 'initdb_failed', 'initdb failed'],
  [2, 'custom_bootstrap', 'running custom bootstrap script'],
  [3, 'custom_bootstrap_failed', 'custom bootstrap failed'],
  [4, 'creating_replica', 'creating replica'],
  [5, 'running', 'running'],
  [6, 'starting', 'starting'],
  [7, 'bootstrap_starting', 'starting after custom bootstrap'],
  [8, 'start_failed', 'start failed'],
  [9, 'restarting', 'restarting'],
  [10, 'restart_failed', 'restart failed'],
  [11, 'stopping', 'stopping'],
  [12, 'stopped', 'stopped'],
  [13, 'stop_failed', 'stop failed'],
  [14, 'crashed', 'crashed'],
];

describe('domain/cluster/states: database states', () => {
  it('has exactly the 15 states of the seed, numbered 0..14', () => {
    expect(DATABASE_STATES.map((s) => [s.value, s.name, s.text])).to.deep.equal(TABLE);
  });

  for (const [value, name, text] of TABLE) {
    it(`${value} = ${name} ("${text}")`, () => {
      expect(stateNumber(name)).to.equal(value);
      expect(stateNumber(text)).to.equal(value);
      expect(stateText(name as Parameters<typeof stateText>[0])).to.equal(text);
      expect(parseState(text)).to.equal(name);
      expect(parseState(name)).to.equal(name);
    });
  }

  it('an unknown state is -1 / undefined', () => {
    expect(stateNumber('exploded')).to.equal(-1);
    expect(parseState('exploded')).to.equal(undefined);
  });

  it('the metric HELP spells the whole mapping', () => {
    const help = stateMetricHelp();
    expect(help).to.include('0=initdb, 1=initdb_failed, 2=custom_bootstrap');
    expect(help).to.include('14=crashed');
    expect(help).to.include('unknown=-1');
  });
});
