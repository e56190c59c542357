import net from 'node:net';

/**
 * The one address rule for every URL a client hands the gateway (callbacks, media and file links):
 * which hosts are public. A host the URL parser wrote as an address is checked against the blocked
 * ranges below (the parser has already turned `2130706433`, `0x7f.1`, `0177.0.0.1` and `127.1` into
 * `127.0.0.1`, and `[::ffff:127.0.0.1]` into `[::ffff:7f00:1]`); a name is checked by its form,
 * since names like `localhost`, `vm` or `printer.local` are resolved by the local network, never
 * by public DNS. What a public name resolves to is the fetcher's check (the webhooks' connector).
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

/** Whether an address (IPv4 or IPv6, as a resolver or the URL parser writes it) is not a public one. */
export function isPrivateAddress(address: string): boolean {
  return net.isIPv6(address) ? blockedV6.check(address, 'ipv6') : blockedV4.check(address, 'ipv4');
}

/** Special-use suffixes (RFC 6761, 6762, 8375 and ICANN's .internal) that public DNS never answers for; `.localhost` is localhost's. */
const LOCAL_SUFFIXES = ['local', 'internal', 'home.arpa', 'test', 'invalid'] as const;

/**
 * Why a host (as the URL parser or a connector writes it, brackets and a trailing dot allowed) is
 * not a public one, as a phrase (`a loopback, private or link-local address`, `localhost`, `a single-label
 * name`, `a .internal name`); null when it may be public. Names are compared lower-cased, with one
 * trailing dot removed (`localhost.` is `localhost`).
 */
export function nonPublicHost(hostname: string): string | null {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  if (net.isIP(host)) return isPrivateAddress(host) ? 'a loopback, private or link-local address' : null;
  const labels = host.split('.');
  if (labels.some((label) => label === '')) return 'a name with an empty label';
  if (host === 'localhost' || host.endsWith('.localhost')) return 'localhost';
  if (labels.length === 1) return 'a single-label name';
  const suffix = LOCAL_SUFFIXES.find((s) => host.endsWith(`.${s}`));
  return suffix ? `a .${suffix} name` : null;
}
