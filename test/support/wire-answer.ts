import { expect } from 'chai';
import { UpstreamError } from '../../src/upstreams/errors';
import type { WireAnswer } from '../../src/upstreams/wire';

/**
 * A provider's answer as a channel's transport hands it to an adapter (src/upstreams/wire.ts): a
 * JSON body (text as given; none when undefined), lower-cased headers, and json() of a body that is
 * not JSON refused as the transport refuses it (502, `protocol`).
 */
export function wireAnswer(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): WireAnswer {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
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

function asUpstreamError(err: unknown): UpstreamError {
  expect(err).to.be.instanceOf(UpstreamError);
  return err as UpstreamError;
}

/** The UpstreamError `fn` throws; fails the test when it throws none, or something else. */
export function thrown(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (err) {
    return asUpstreamError(err);
  }
  return expect.fail('expected an UpstreamError');
}

/** As thrown, for a call that may also reject. */
export async function upstreamErrorOf(run: () => unknown): Promise<UpstreamError> {
  try {
    await run();
  } catch (err) {
    return asUpstreamError(err);
  }
  return expect.fail('expected an UpstreamError');
}
