import { expect } from 'chai';
import { decodeAnswer, encodeAnswer, type AgentConfigAnswer } from '../../../../src/app/agent/config-protocol.js';

describe('app/agent: the configuration process answer on the wire', () => {
  it('names starting with $ come back as names (a tag $number came back as the number 5), non-finite numbers as numbers', () => {
    const config = { name: 'node1', tags: { $number: '5', $$x: 'y', plain: 1 }, db: { parameters: { $number: 'on' } }, ratio: Infinity } as never;
    const answer: AgentConfigAnswer = { kind: 'config', config };
    expect(decodeAnswer(encodeAnswer(answer))).to.deep.equal(answer);
  });
});
