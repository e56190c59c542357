import { UpstreamError } from '../../src/upstreams/errors';
import type { WireAnswer } from '../../src/upstreams/wire';

/** A provider's answer as Channel.call gives it, for a protocol adapter's tests: `body` JSON-encoded unless a string. */
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
