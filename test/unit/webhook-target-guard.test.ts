import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WebhookSender } from '../../src/webhooks/deliver';
import { checkCallbackTarget } from '../../src/webhooks/target-guard';
import { NON_PUBLIC_HOSTS } from '../support/address-spellings';

describe('webhook target guard', () => {
  describe('checkCallbackTarget, at creation', () => {
    it('refuses a name only a local network resolves, after lower-casing and one trailing dot, unless private targets are allowed', async () => {
      expect(await checkCallbackTarget('http://localhost.:8080/x', false)).to.equal('callback host localhost. is not a public name (localhost), so it may reach a private or loopback address');
      expect(await checkCallbackTarget('http://VM.:8080/x', false)).to.equal('callback host vm. is not a public name (a single-label name), so it may reach a private or loopback address');
      expect(await checkCallbackTarget('https://hooks.corp.internal/x', false)).to.equal('callback host hooks.corp.internal is not a public name (a .internal name), so it may reach a private or loopback address');
      expect(await checkCallbackTarget('http://[::ffff:127.0.0.1]/x', false)).to.equal('callback address ::ffff:7f00:1 is a private or loopback address');
      for (const [host] of NON_PUBLIC_HOSTS) expect(await checkCallbackTarget(`http://${host}/hook`, true), host).to.equal(null);
    });
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
      `http://localhost.:${p}/hook`,
      `https://127.0.0.1:${p}/hook`,
    ];

    it('refuses at delivery every host the creation check refuses, by the same rule and with the same message', async () => {
      const s = sender(false);
      try {
        for (const [host] of NON_PUBLIC_HOSTS) {
          const url = `http://${host}/hook`;
          const refusal = await checkCallbackTarget(url, false);
          expect(refusal, url).to.be.a('string');
          expect(await s.send(url, '{}', null), url).to.deep.include({ ok: false, statusCode: null, error: refusal });
        }
      } finally {
        await s.close();
      }
    });

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
