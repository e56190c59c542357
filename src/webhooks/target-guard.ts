import dns from 'node:dns';
import net from 'node:net';
import { isPrivateAddress, nonPublicHost } from '../http/public-address';
import { parseHttpUrl } from '../http/urls';
import { buildConnector } from 'undici';

/**
 * Callback URLs are chosen by customers, so a delivery must not become a way to reach the
 * gateway's own network (SSRF). One rule decides, at creation (checkCallbackTarget) and at every
 * connection (guardedConnector) alike: the host as written must be public by the gateway's address
 * rule (src/http/public-address.ts: no private address in any spelling, no `localhost`, no
 * single-label or special-use name), and so must every address a name resolves to. At connect
 * time the address checked is the address dialled, so DNS rebinding cannot swap it afterwards.
 */

export class ForbiddenTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenTargetError';
  }
}

/** Why a delivery may not go to a host as written, before any lookup; null: look it up. */
function hostRefusal(hostname: string): string | null {
  const host = hostname.replace(/^\[|\]$/g, '');
  const why = nonPublicHost(host);
  if (why === null) return null;
  if (net.isIP(host)) return `callback address ${host} is a private or loopback address`;
  return `callback host ${host} is not a public name (${why}), so it may reach a private or loopback address`;
}

/** Why a delivery may not go to a host that resolved to these addresses; null: it may. */
function addressesRefusal(hostname: string, addresses: readonly dns.LookupAddress[]): string | null {
  return addresses.some((a) => isPrivateAddress(a.address)) ? `callback host ${hostname} resolves to a private or loopback address` : null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A dns.lookup replacement for an outgoing agent that refuses private addresses unless allowed. */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      const refusal = allowPrivate ? null : addressesRefusal(hostname, list);
      if (refusal) return callback(new ForbiddenTargetError(refusal) as NodeJS.ErrnoException, []);
      if (options.all) return callback(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

type Connector = ReturnType<typeof buildConnector>;

/**
 * The connector for an outgoing agent that may not reach private targets unless allowed: the host
 * as written is checked here (an address, which Node dials without any lookup, or a name the rule
 * refuses by its form), and the addresses a name resolves to by guardedLookup.
 */
export function guardedConnector(allowPrivate: boolean, options: { timeout: number }): Connector {
  const connect = buildConnector({ ...options, lookup: guardedLookup(allowPrivate) as never });
  if (allowPrivate) return connect;
  return (opts, callback) => {
    const refusal = hostRefusal(opts.hostname);
    if (refusal) return callback(new ForbiddenTargetError(refusal), null);
    return connect(opts, callback);
  };
}

/** The same check up front, so a task with a forbidden callback is refused at creation (400). */
export async function checkCallbackTarget(url: string, allowPrivate: boolean): Promise<string | null> {
  const parsed = parseHttpUrl(url);
  if (!parsed) return `${url.length > 200 ? `${url.slice(0, 200)}…` : url} is not an absolute http(s) URL`;
  if (allowPrivate) return null;
  const refusal = hostRefusal(parsed.hostname);
  if (refusal !== null || net.isIP(parsed.hostname.replace(/^\[|\]$/g, ''))) return refusal;
  try {
    return addressesRefusal(parsed.hostname, await dns.promises.lookup(parsed.hostname, { all: true }));
  } catch {
    // A public name that does not resolve now may later; the delivery will record the failure.
    return null;
  }
}
