import { expect } from 'chai';
import { parseExposition, sampleCount } from './exposition-parser.js';

describe('test support: the strict exposition parser', () => {
  it('parses families, labels with escapes, special values and histograms', () => {
    const f = parseExposition(
      [
        '# HELP a_total Things',
        '# TYPE a_total counter',
        'a_total{x="1",y="q\\"\\\\\\n"} 3',
        'a_total{x="2"} 4 1700000000000',
        '# TYPE h histogram',
        'h_bucket{le="1"} 1',
        'h_bucket{le="+Inf"} 2',
        'h_sum 3',
        'h_count 2',
        'g NaN',
        'g2 -Inf',
        '',
      ].join('\n'),
    );
    expect(f.get('a_total')!.samples[0]!.labels['y']).to.equal('q"\\\n');
    expect(f.get('h')!.samples).to.have.length(4);
    expect(sampleCount(f)).to.equal(8);
  });

  const bad: [string, string, RegExp][] = [
    ['duplicate series', 'a 1\na 2\n', /duplicate series/],
    ['duplicate series with labels in another order', 'a{x="1",y="2"} 1\na{y="2",x="1"} 2\n', /duplicate series/],
    ['second HELP', '# HELP a x\n# HELP a y\na 1\n', /second HELP/],
    ['second TYPE', '# TYPE a gauge\n# TYPE a gauge\na 1\n', /second TYPE/],
    ['TYPE after samples', 'a 1\n# TYPE a gauge\n', /after its samples/],
    ['split family', 'a{x="1"} 1\nb 1\na{x="2"} 1\n', /continues after another family/],
    ['invalid name', 'a-b 1\n', /expected a space/],
    ['invalid label name', 'a{1x="1"} 1\n', /invalid label name/],
    ['reserved label', 'a{__x="1"} 1\n', /reserved label/],
    ['bad escape', 'a{x="\\t"} 1\n', /invalid escape/],
    ['bad value', 'a 1,5\n', /invalid sample value/],
    ['missing value', 'a\n', /expected a space/],
    ['unknown type', '# TYPE a thing\n', /unknown type/],
    ['no final newline', 'a 1', /newline/],
    ['histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\n', /\+Inf/],
    ['histogram counts decreasing', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\n', /decrease/],
    ['negative counter', '# TYPE c counter\nc -1\n', /negative counter/],
    ['bad escape in HELP', '# HELP a x \\t\na 1\n', /invalid escape in HELP/],
  ];
  for (const [what, text, re] of bad) {
    it(`rejects ${what}`, () => {
      expect(() => parseExposition(text)).to.throw(re);
    });
  }
});
