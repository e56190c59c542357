import { expect } from 'chai';
import { ApiError } from '../../src/http/errors';
import { validator } from '../../src/http/validation';

/** Every request schema's `date-time` is an RFC 3339 instant that a JavaScript Date can hold. */
describe('the date-time format of request schemas', () => {
  const parse = validator<{ at: string }>({ type: 'object', properties: { at: { type: 'string', format: 'date-time' } }, required: ['at'], additionalProperties: false });
  const refusal = (at: string) => {
    try {
      parse({ at });
    } catch (err) {
      return err;
    }
    return null;
  };

  it('accepts instants with an offset, in either case, with fractions', () => {
    for (const at of ['2026-11-01T00:00:00+08:00', '2026-06-30T23:59:59Z', '2026-06-30t23:59:59.123456z', '2026-06-30T23:59:59-00:30']) {
      expect(parse({ at }).at, at).to.equal(at);
    }
  });

  it('refuses a leap second (which would become an Invalid Date in a handler) and impossible dates with 400 naming the field', () => {
    for (const at of ['2026-06-30T23:59:60Z', '2016-12-31T23:59:60+00:00', '2026-02-30T00:00:00Z', '2026-06-30T23:59:59']) {
      const err = refusal(at);
      expect(err, at).to.be.instanceOf(ApiError);
      expect(err, at).to.include({ status: 400, code: 'invalid_request' });
      expect((err as ApiError).options.param, at).to.equal('at');
    }
  });
});
