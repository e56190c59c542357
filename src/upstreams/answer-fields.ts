/** Reading a provider's JSON answer field by field, as the bot-chat adapters do (src/upstreams/<protocol>/). */
import { UpstreamError } from './errors';

/** The value as an object's fields; empty for anything else, so a missing member reads as absent. */
export function recordOf(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A count of tokens as a provider reports one: a non-negative safe integer. */
export function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** An answer that does not read as the provider's protocol: the provider's fault (502). */
export function protocolError(channel: string, what: string): UpstreamError {
  return new UpstreamError(502, `channel ${channel} answered with ${what}`, null, 'protocol');
}
