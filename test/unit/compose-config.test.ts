import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * `docker-compose config` validates docker-compose.yml without a Docker engine (Debian's
 * docker-compose package; .ci/run installs it). Without the tool this fails: it never skips.
 */
describe('docker-compose.yml validates with docker-compose config', function () {
  this.timeout(60_000);

  async function compose(args: string[], env: Record<string, string> = {}) {
    try {
      return await run('docker-compose', ['-f', path.join(ROOT, 'docker-compose.yml'), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('docker-compose is not installed: apt-get install docker-compose (.ci/run does)');
      throw err;
    }
  }

  it('is valid, with and without the eventstoredb profile', async () => {
    const { stdout, stderr } = await compose(['config', '-q']);
    expect(stdout).to.equal('');
    expect(stderr).to.not.match(/error/i);
    const withProfile = await compose(['--profile', 'eventstoredb', 'config', '-q'], { EVENT_STORE: 'eventstoredb' });
    expect(withProfile.stdout).to.equal('');
  });

  it('names two gateways behind the load balancer, sharing the secrets, with readiness health checks', async () => {
    const { stdout } = await compose(['config', '--services']);
    const services = stdout.trim().split('\n').sort();
    expect(services).to.include.members(['gateway-1', 'gateway-2', 'lb', 'postgres', 'object-store', 'object-store-bucket']);
    const { stdout: resolved } = await compose(['config'], { ADMIN_TOKEN: 'shared-admin', URL_SIGNING_SECRET: 'shared-signing' });
    for (const gateway of ['gateway-1', 'gateway-2']) {
      const block = resolved.slice(resolved.indexOf(`  ${gateway}:`));
      const body = block.slice(0, nextService(block));
      expect(body).to.include('ADMIN_TOKEN: shared-admin').and.include('URL_SIGNING_SECRET: shared-signing').and.include('/readyz');
      // Files in the object store, whose bucket exists before the gateway starts.
      expect(body).to.include('FILE_STORE: s3').and.include('S3_ENDPOINT: http://object-store:9000').and.match(/object-store-bucket:\n\s+condition: service_completed_successfully/);
    }
    const esdb = resolved.slice(resolved.indexOf('  eventstoredb:'));
    expect(esdb.slice(0, nextService(esdb)), 'EventStoreDB only with its profile').to.match(/profiles:\n\s+- eventstoredb/);
  });
});

/** Where the next top-level service starts in a `config` dump that begins with one. */
function nextService(block: string): number {
  const lines = block.split('\n');
  let offset = lines[0]!.length + 1;
  for (const line of lines.slice(1)) {
    if (/^  \S/.test(line)) return offset;
    offset += line.length + 1;
  }
  return block.length;
}
