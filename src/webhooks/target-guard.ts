import dns from 'node:dns';
import net from 'node:net';
import { parseHttpUrl } from '../http/urls';
import { buildConnector } from 'undici';

/**
 * Callback URLs are chosen by customers, so a delivery must not become a way to reach the
 * gateway's own network (SSRF). Every address a host resolves to is checked at connect time (the
 * address checked is the address dialled, so DNS rebinding cannot swap it afterwards), and so is
 * a host written as an address, which never goes through a lookup (see guardedConnector).
 */
// Two lists: Node checks an IPv4 address against IPv4-mapped IPv6 rules too, so one list holding
// ::ffff:0:0/96 would refuse every IPv4 address, public ones included.
const blockedV4 = new net.BlockList();
const blockedV6 = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blockedV4.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96],
  // Forms that carry an IPv4 address inside an IPv6 one (IPv4-compatible, NAT64, 6to4): a gateway
  // has no business calling out through them, and checking the embedded address is easy to get wrong.
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
] as const) {
  blockedV6.addSubnet(prefix, bits, 'ipv6');
}

/** Whether an address (IPv4 or IPv6, as a resolver or the URL parser writes it) is one a delivery must not reach. */
export function isPrivateAddress(address: string): boolean {
  return net.isIPv6(address) ? blockedV6.check(address, 'ipv6') : blockedV4.check(address, 'ipv4');
}

export class ForbiddenTargetError extends Error {
  constructor(host: string) {
    super(net.isIP(host) ? `callback address ${host} is a private or loopback address` : `callback host ${host} resolves to a private or loopback address`);
    this.name = 'ForbiddenTargetError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A dns.lookup replacement for the delivery agent that refuses private addresses unless allowed. */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      if (!allowPrivate && list.some((a) => isPrivateAddress(a.address))) return callback(new ForbiddenTargetError(hostname) as NodeJS.ErrnoException, []);
      if (options.all) return callback(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

type Connector = ReturnType<typeof buildConnector>;

/**
 * The connector for an outgoing agent that may not reach private addresses unless allowed: a
 * hostname is checked by guardedLookup, and a host that is already an address (`127.0.0.1`,
 * `[::1]`, `[::ffff:7f00:1]`, and the decimal, hex and octal forms the URL parser normalizes to
 * those) is checked here, since Node dials it without any lookup.
 */
export function guardedConnector(allowPrivate: boolean, options: { timeout: number }): Connector {
  const connect = buildConnector({ ...options, lookup: guardedLookup(allowPrivate) as never });
  if (allowPrivate) return connect;
  return (opts, callback) => {
    const host = opts.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && isPrivateAddress(host)) return callback(new ForbiddenTargetError(host), null);
    return connect(opts, callback);
  };
}

/** The same check up front, so a task with a forbidden callback is refused at creation (400). */
export async function checkCallbackTarget(url: string, allowPrivate: boolean): Promise<string | null> {
  const parsed = parseHttpUrl(url);
  if (!parsed) return `${url.length > 200 ? `${url.slice(0, 200)}…` : url} is not an absolute http(s) URL`;
  if (allowPrivate) return null;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return isPrivateAddress(host) ? `callback_url points at a private or loopback address` : null;
  try {
    const addresses = await dns.promises.lookup(host, { all: true });
    return addresses.some((a) => isPrivateAddress(a.address)) ? `callback_url host ${host} resolves to a private or loopback address` : null;
  } catch {
    // A host that does not resolve now may later; the delivery will record the failure.
    return null;
  }
}
