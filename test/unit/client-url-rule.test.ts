import { expect } from 'chai';
import { isPrivateAddress, nonPublicHost } from '../../src/http/public-address';
import { clientUrlProblem } from '../../src/http/urls';
import { NON_PUBLIC_HOSTS, PUBLIC_HOSTS, refusalPhrase } from '../support/address-spellings';

describe('the address rule of every client URL', () => {
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


  describe('nonPublicHost, on hosts as the URL parser writes them', () => {
    for (const [host, why] of NON_PUBLIC_HOSTS) {
      it(`refuses ${host} as ${refusalPhrase(why)}`, () => expect(nonPublicHost(new URL(`https://${host}/`).hostname)).to.equal(refusalPhrase(why)));
    }
    for (const host of PUBLIC_HOSTS) it(`lets ${host} through`, () => expect(nonPublicHost(new URL(`https://${host}/`).hostname)).to.equal(null));
  });

  describe('clientUrlProblem', () => {
    const https = { httpsOnly: true, allowPrivateTargets: false };

    it('names the field and what the host is, for every spelling of a non-public host', () => {
      for (const [host, why] of NON_PUBLIC_HOSTS) {
        expect(clientUrlProblem(`https://${host}/a.png`, 'url', https), host).to.equal(`url must be a publicly reachable https URL, not ${refusalPhrase(why)}`);
      }
    });

    it('lets a public https URL through, and every host when private targets are allowed', () => {
      for (const host of PUBLIC_HOSTS) expect(clientUrlProblem(`https://${host}/a.png`, 'url', https), host).to.equal(null);
      for (const [host] of NON_PUBLIC_HOSTS) expect(clientUrlProblem(`https://${host}/a.png`, 'url', { ...https, allowPrivateTargets: true }), host).to.equal(null);
    });

    it('takes http only where the field does, and refuses what is not an absolute http(s) URL', () => {
      expect(clientUrlProblem('http://example.com/a.png', 'url', https)).to.equal('url must be a publicly reachable https URL');
      expect(clientUrlProblem('http://example.com/a.mp3', 'file_url', { httpsOnly: false, allowPrivateTargets: false })).to.equal(null);
      expect(clientUrlProblem('http://10.0.0.1/a.mp3', 'file_url', { httpsOnly: false, allowPrivateTargets: false })).to.equal(
        'file_url must be a publicly reachable http(s) URL, not a loopback, private or link-local address',
      );
      for (const value of ['not a url', 'ftp://example.com/a.png', 'file:///etc/passwd', 'https://a:99999/', 'https://[::1/', '//example.com/a.png']) {
        expect(clientUrlProblem(value, 'url', { httpsOnly: false, allowPrivateTargets: true }), value).to.equal('url must be a publicly reachable http(s) URL');
      }
    });

    it('names what else the field takes', () => {
      expect(clientUrlProblem('https://localhost/a.png', 'content[0].image_url.url', { ...https, alternative: 'asset://<id>' })).to.equal(
        'content[0].image_url.url must be a publicly reachable https URL (or asset://<id>), not localhost',
      );
    });
  });
});
