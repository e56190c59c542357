import { expect } from 'chai';
import { UpstreamError } from '../../src/upstreams/errors';
import type { WireAnswer } from '../../src/upstreams/wire';

/** A provider's answer as Channel.call gives it, for a protocol adapter's tests: `body` JSON-encoded unless a string; json() of a body that is not JSON throws as the transport's does. */
export function wireAnswer(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): WireAnswer {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    status,
    headers,
    text: () => text,
    bytes: () => new TextEncoder().encode(text),
    json: () => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new UpstreamError(502, 'the provider answered with invalid JSON', null, 'protocol');
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
