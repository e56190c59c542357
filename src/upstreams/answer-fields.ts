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

/** Member names that hold links in a provider's free-form JSON (`url`, `image_url`, `jumpUrl`, `href`, `src`, `link`, `uri`, and their plurals). */
const LINK_MEMBER = /(url|uri|link|href|src)s?$/i;

/**
 * A provider's free-form JSON (a card) with every link member a client might open kept only when
 * it is an http(s) URL: a `javascript:`, `data:` or other scheme's link member is left out, at any
 * depth. Everything else is kept as the provider sent it.
 */
export function withHttpLinksOnly(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withHttpLinksOnly);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).flatMap(([name, member]): [string, unknown][] => {
      if (!LINK_MEMBER.test(name)) return [[name, withHttpLinksOnly(member)]];
      if (typeof member === 'string') return clientLink(member) === null ? [] : [[name, member]];
      if (Array.isArray(member)) return [[name, member.flatMap((item) => (typeof item !== 'string' ? [withHttpLinksOnly(item)] : clientLink(item) === null ? [] : [item]))]];
      return [[name, withHttpLinksOnly(member)]];
    }),
  );
}
