import { expect } from 'chai';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import type { Fencer } from '../../../../src/ports/fencer.js';
import { singleNodePrimary } from './single-node-loop.js';

/** A fencer that is attached and guards nothing (what it would stop does not matter here). */
const ATTACHED: Fencer = { attach: async () => true, guard: () => undefined, unguard: () => undefined, detach: async () => undefined, handover: async () => false, status: () => ({ state: 'idle', reason: null }) };

describe('the agent says when the cluster\'s timings leave its fencer too short a window', () => {
  it('ttl 20 and loop_wait 15 with safety_margin 5: said at the first loop, reminded rarely, naming the setting and the fix', async () => {
    const logger = new MemoryLogger();
    const { loop, clock } = await singleNodePrimary(0, { bootstrapDcs: { ttl: 20, loop_wait: 15, retry_timeout: 2 }, safetyMargin: 5, logger, fencer: ATTACHED });
    for (let i = 0; i < 5; i++) {
      await clock.advance(15_000);
      await loop.tickOnce();
    }
    const said = logger.lines.filter((l) => l.level === 'warn' && l.msg.startsWith('the fencer would stop this node as a healthy primary'));
    expect(said.map((l) => l.msg)).to.deep.equal([
      'the fencer would stop this node as a healthy primary; said again at the 4th time in a row or when the error changes',
      'the fencer would stop this node as a healthy primary (4 times in a row over 45 s); said again at the 16th time in a row or when the error changes',
    ]);
    expect(String(said[0]!.fields['error'])).to.match(/^watchdog\.safety_margin: expected less than ttl - loop_wait \(20 - 15 = 5 s\), got 5: .*raise ttl$/);
  });

  it('the default timings (ttl 30, loop_wait 10) with safety_margin 5: nothing said; the member key carries the margin (configuration changes that would fence it are refused)', async () => {
    const logger = new MemoryLogger();
    const { loop, store } = await singleNodePrimary(0, { logger, fencer: ATTACHED });
    await loop.tickOnce();
    expect(logger.messages().filter((m) => m.startsWith('the fencer would stop'))).to.deep.equal([]);
    expect((await store.read()).members.find((m) => m.name === 'node1')?.safetyMargin).to.equal(5);
  });

  it('no fencer and no watchdog device: nothing acts on the margin, nothing said, no margin published', async () => {
    const logger = new MemoryLogger();
    const { loop, store } = await singleNodePrimary(0, { bootstrapDcs: { ttl: 20, loop_wait: 15, retry_timeout: 2 }, safetyMargin: 5, logger });
    await loop.tickOnce();
    expect(logger.messages().filter((m) => m.startsWith('the fencer would stop'))).to.deep.equal([]);
    expect((await store.read()).members.find((m) => m.name === 'node1')).to.not.have.property('safetyMargin');
  });
});
