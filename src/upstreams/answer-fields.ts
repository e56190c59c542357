/** Reading a provider's JSON answer field by field, as every protocol's adapters do (src/upstreams/<protocol>/). */
import { nonPublicHost } from '../http/public-address';
import { parseHttpUrl } from '../http/urls';
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

/**
 * Whether the gateway may download a link a provider answered (its output file): `https` on a public
 * host by the address rule of client URLs (src/http/public-address.ts), or a link on the channel's
 * own origin, which is as trusted as the channel the operator configured (a simulated or private
 * provider's). Anything else could point the gateway at its own network.
 */
export function isFetchableProviderLink(value: string, channelOrigin: string | undefined): boolean {
  const url = parseHttpUrl(value);
  if (!url) return false;
  if (channelOrigin !== undefined && url.origin === channelOrigin) return true;
  return url.protocol === 'https:' && nonPublicHost(url.hostname) === null;
}

/** A link a provider answered that the gateway passes to clients (a card's): an http(s) URL as sent, null for any other scheme. */
export function clientLink(value: unknown): string | null {
  return typeof value === 'string' && parseHttpUrl(value) ? value : null;
}
