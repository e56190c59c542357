import { expect } from 'chai';
import { UpstreamError } from '../../src/upstreams/errors';
import type { WireAnswer } from '../../src/upstreams/wire';

/** A provider's answer as Channel.call hands it to an adapter: `body` as JSON (a string as it is); json() of a body that is not JSON throws as the transport's does. */
export function answer(status: number, body: unknown, headers: Record<string, string> = {}): WireAnswer {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    status,
    headers: { 'content-type': 'application/json', ...headers },
    bytes: () => Buffer.from(text, 'utf8'),
    text: () => text,
    json: () => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new UpstreamError(502, 'the test answer is not JSON', null, 'protocol');
      }
    },
  };
}

/** The UpstreamError `fn` throws (failing the test when it throws none, or something else). */
export function thrown(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  expect.fail('expected an UpstreamError');
}
