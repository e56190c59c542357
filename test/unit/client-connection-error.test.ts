import { expect } from 'chai';
import { isClientConnectionError } from '../../src/http/app';

/** Koa's error event: a client's broken connection or message is logged as such, anything else as the gateway's fault. */
describe("Koa's error event: the client's failures told from the gateway's", () => {
  it("takes Node's HTTP parser errors and a broken connection for the client's", () => {
    for (const code of ['HPE_INVALID_EOF_STATE', 'HPE_HEADER_OVERFLOW', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']) {
      expect(isClientConnectionError(Object.assign(new Error('x'), { code })), code).to.equal(true);
    }
  });

  it('takes any other error for a fault of the gateway', () => {
    for (const err of [new Error('boom'), new TypeError('x is undefined'), Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), null, 'text']) {
      expect(isClientConnectionError(err), String(err)).to.equal(false);
    }
  });
});
