import { expect } from 'chai';
import { parseYamlText } from '../../../src/app/yaml-read.js';

/** Aliases name the last anchor before them in document order, as YAML says, found in the one pass over the nodes. */
describe('configuration YAML: aliases and anchors', () => {
  const value = (text: string) => {
    const r = parseYamlText(text);
    expect(r.issues, text).to.deep.equal([]);
    return r.value;
  };
  const issues = (text: string) => parseYamlText(text).issues.map((i) => `${i.line}:${i.col} ${i.message}`);

  it('an alias names the last anchor of its name before it, in mappings, lists and keys alike', () => {
    expect(value('a: &x 1\nb: &x 2\nc: *x\n')).to.deep.equal({ a: 1, b: 2, c: 2 });
    expect(value('a: &x 1\nb: *x\nc: &x 2\nd: *x\n')).to.deep.equal({ a: 1, b: 1, c: 2, d: 2 });
    expect(value('- &x [1]\n- {k: *x}\n- &x 3\n- *x\n')).to.deep.equal([[1], { k: [1] }, 3, 3]);
    expect(value('m: {p: &x 1, q: 2}\nn: [*x, {r: *x}]\n')).to.deep.equal({ m: { p: 1, q: 2 }, n: [1, { r: 1 }] });
    expect(value('&x k: v\nother: *x\n')).to.deep.equal({ k: 'v', other: 'k' });
  });

  it('an anchor later in the same mapping or list is not before the alias', () => {
    expect(issues('a: *x\nb: &x 1\n')).to.deep.equal(['1:4 alias *x has no anchor &x before it']);
    expect(issues('- *x\n- &x 1\n')).to.deep.equal(['1:3 alias *x has no anchor &x before it']);
    expect(issues('a: {b: *x}\nc: {d: &x 1}\n')).to.deep.equal(['1:8 alias *x has no anchor &x before it']);
  });

  it('an alias inside the node its anchor names is refused; one after that node is not', () => {
    expect(issues('a: &x {b: [*x]}\n')).to.deep.equal(['1:12 alias *x is inside the node its anchor names: it would contain itself']);
    expect(value('a: &x {b: [1]}\nc: *x\n')).to.deep.equal({ a: { b: [1] }, c: { b: [1] } });
  });
});
