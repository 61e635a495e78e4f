import { expect } from 'chai';
import { plainTextAnswer } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';

describe('etcd gateway: an answer that is not JSON says what etcd said', () => {
  it('quotes the text, and explains the CN refusal of a TLS setup with authentication', () => {
    expect(plainTextAnswer(400, 'CommonName of client sending a request against gateway will be ignored and not used as expected\n')).to.equal(
      'etcd answered 400: CommonName of client sending a request against gateway will be ignored and not used as expected: with authentication on, etcd refuses a client certificate that has a common name (CN) on its JSON gateway; give etcd3.cert a certificate without a CN (the etcd user is etcd3.username)',
    );
    expect(plainTextAnswer(502, '<html>\n bad gateway </html>')).to.equal('etcd answered 502: <html> bad gateway </html>');
    expect(plainTextAnswer(500, '  ')).to.equal('etcd answered 500 with an empty body');
  });
});
