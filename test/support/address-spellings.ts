/**
 * Hosts as a client may write them in a URL's authority, for the tests of the one address rule
 * (src/http/public-address.ts), its endpoints and the fuzz suite. Each non-public one is paired with
 * the phrase the rule names it by.
 */
export const NON_PUBLIC_HOSTS: readonly (readonly [host: string, why: string])[] = [
  // Loopback, private, link-local, unspecified, in the spellings the URL parser normalizes.
  ['127.0.0.1', 'address'],
  ['127.8.9.10:8443', 'address'],
  ['127.1', 'address'],
  ['2130706433', 'address'],
  ['017700000001', 'address'],
  ['0x7f000001', 'address'],
  ['0x7f.1', 'address'],
  ['0177.0.0.1', 'address'],
  ['127.000.000.001', 'address'],
  ['127.0.0.1.', 'address'],
  ['%31%32%37.0.0.1', 'address'],
  ['１２７.０.０.１', 'address'],
  ['0', 'address'],
  ['0.0.0.0', 'address'],
  ['10.1.2.3', 'address'],
  ['172.16.5.4', 'address'],
  ['192.168.1.20', 'address'],
  ['100.64.0.1', 'address'],
  ['169.254.169.254', 'address'],
  ['[::1]', 'address'],
  ['[::]', 'address'],
  ['[0:0:0:0:0:0:0:1]', 'address'],
  ['[fe80::1]', 'address'],
  ['[fd00::5]', 'address'],
  ['[::ffff:127.0.0.1]', 'address'],
  ['[::ffff:7f00:1]', 'address'],
  ['[::ffff:169.254.169.254]', 'address'],
  ['[::127.0.0.1]', 'address'],
  ['[64:ff9b::a9fe:a9fe]', 'address'],
  ['[2002:7f00:1::1]', 'address'],
  // Names only a local network resolves.
  ['localhost', 'localhost'],
  ['LOCALHOST', 'localhost'],
  ['localhost.', 'localhost'],
  ['media.localhost', 'localhost'],
  ['media.localhost.', 'localhost'],
  ['vm', 'a single-label name'],
  ['vm.', 'a single-label name'],
  ['printer.local', 'a .local name'],
  ['metadata.google.internal', 'a .internal name'],
  ['DB.Internal.', 'a .internal name'],
  ['router.home.arpa', 'a .home.arpa name'],
  ['site.test', 'a .test name'],
  ['site.invalid', 'a .invalid name'],
  ['localhost..', 'a name with an empty label'],
  ['a..example.com', 'a name with an empty label'],
];

/** Hosts the rule lets through (what they resolve to is the fetcher's check). */
export const PUBLIC_HOSTS: readonly string[] = [
  'example.com',
  'cdn.example.com.',
  'localhost.example.com',
  'internal.example.com',
  'mytest.com',
  '8.8.8.8',
  '172.32.0.1',
  '[2606:4700:4700::1111]',
];

/** The phrase of a non-public host's refusal: `address` stands for the one of every blocked address. */
export function refusalPhrase(why: string): string {
  return why === 'address' ? 'a loopback, private or link-local address' : why;
}
