import dns from 'node:dns';
import net from 'node:net';
import { parseHttpUrl } from '../http/urls';

/**
 * Callback URLs are chosen by customers, so a delivery must not become a way to reach the
 * gateway's own network (SSRF). Every address a host resolves to is checked at connect time (the
 * address checked is the address dialled, so DNS rebinding cannot swap it afterwards).
 */
const blocked = new net.BlockList();
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
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
  if (family === 'ipv6' && address.toLowerCase().startsWith('::ffff:')) {
    const v4 = address.slice(7);
    if (net.isIPv4(v4)) return blocked.check(v4, 'ipv4');
  }
  return blocked.check(address, family);
}

export class ForbiddenTargetError extends Error {
  constructor(host: string) {
    super(`callback host ${host} resolves to a private or loopback address`);
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
