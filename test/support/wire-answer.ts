import { expect } from 'chai';
import { UpstreamError } from '../../src/upstreams/errors';
import type { WireAnswer } from '../../src/upstreams/wire';

/**
 * A provider's answer as a channel's transport hands it to an adapter (src/upstreams/wire.ts): a
 * JSON body (or text as given), lower-cased headers, and json() of a non-JSON body refused as the
 * transport refuses it (502, `protocol`).
 */
export function wireAnswer(status: number, body: unknown, headers: Record<string, string> = {}): WireAnswer {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  return {
    status,
    headers,
    bytes: () => new TextEncoder().encode(text),
    text: () => text,
    json: () => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new UpstreamError(502, 'the answer is not JSON', null, 'protocol');
      }
    },
  };
}

/** The UpstreamError that `run` throws (or its promise rejects with); fails the test when it throws none. */
export async function upstreamErrorOf(run: () => unknown): Promise<UpstreamError> {
  try {
    await run();
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  return expect.fail('expected an UpstreamError');
}
