import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WebhookSender } from '../../src/webhooks/deliver';
import { isPrivateAddress } from '../../src/webhooks/target-guard';

describe('webhook target guard', () => {
  describe('isPrivateAddress', () => {
    const privateOnes = [
      '127.0.0.1', '127.255.255.254', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
      '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
      '::', '::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1',
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::1',
    ];
    const publicOnes = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888'];
    for (const address of privateOnes) it(`refuses ${address}`, () => expect(isPrivateAddress(address)).to.equal(true));
    for (const address of publicOnes) it(`lets ${address} through`, () => expect(isPrivateAddress(address)).to.equal(false));
  });

  describe('WebhookSender at delivery time', () => {
    let server: Server;
    let port = 0;
    let received = 0;

    before(async () => {
      server = createServer((req, res) => {
        received++;
        req.resume();
        req.on('end', () => res.writeHead(200).end('ok'));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      port = (server.address() as AddressInfo).port;
    });
    beforeEach(() => (received = 0));
    after(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    const sender = (allowPrivateTargets: boolean) => new WebhookSender({ timeoutMs: 2000, allowPrivateTargets, clock: () => new Date() });

    it('delivers to loopback when private targets are allowed (the receiver is reachable)', async () => {
      const s = sender(true);
      try {
        const result = await s.send(`http://127.0.0.1:${port}/hook`, '{}', null);
        expect(result).to.deep.include({ ok: true, statusCode: 200, error: null });
        expect(received).to.equal(1);
      } finally {
        await s.close();
      }
    });

    // Every spelling of the receiver's loopback address; the URL parser normalizes the numeric
    // IPv4 forms to 127.0.0.1 and the mapped IPv6 form to [::ffff:7f00:1], which are never looked up.
    const forms = (p: number) => [
      `http://127.0.0.1:${p}/hook`,
      `http://127.1:${p}/hook`,
      `http://2130706433:${p}/hook`,
      `http://0x7f000001:${p}/hook`,
      `http://0x7f.0.0.1:${p}/hook`,
      `http://0177.0.0.1:${p}/hook`,
      `http://[::ffff:127.0.0.1]:${p}/hook`,
      `http://[::1]:${p}/hook`,
      `http://[::]:${p}/hook`,
      `http://0.0.0.0:${p}/hook`,
      `HTTP://LOCALHOST:${p}/hook`,
      `https://127.0.0.1:${p}/hook`,
    ];

    it('refuses every form of a private target when private targets are not allowed, as a failed attempt', async () => {
      const s = sender(false);
      try {
        for (const url of forms(port)) {
          const result = await s.send(url, '{}', null);
          expect(result, url).to.deep.include({ ok: false, statusCode: null });
          expect(result.error, url).to.match(/private or loopback address/);
        }
        expect(received, 'nothing reached the receiver').to.equal(0);
      } finally {
        await s.close();
      }
    });
  });
});
