import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { tempDir } from '../../src/db/database';
import { persistentSecret } from '../../src/secrets';

const run = promisify(execFile);

describe('persistent secrets', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('gateway-secret-');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prefers the configured value and writes nothing', () => {
    expect(persistentSecret('configured', dir, 'token', 'adm_')).to.equal('configured');
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('generates once, reports it once, and reads it back afterwards', () => {
    const generated: string[] = [];
    const first = persistentSecret(undefined, dir, 'token', 'adm_', (secret) => generated.push(secret));
    const second = persistentSecret(undefined, dir, 'token', 'adm_', (secret) => generated.push(secret));
    expect(first).to.match(/^adm_[A-Za-z0-9_-]{32}$/);
    expect(second).to.equal(first);
    expect(generated).to.deep.equal([first]);
    expect(fs.readdirSync(dir)).to.deep.equal(['token']);
    expect(fs.statSync(path.join(dir, 'token')).mode & 0o777).to.equal(0o600);
  });

  it('gives every process the same secret when several start together on one data directory', async () => {
    const script = `const { persistentSecret } = require(${JSON.stringify(path.resolve('src/secrets.ts'))});
      process.stdout.write(persistentSecret(undefined, ${JSON.stringify(dir)}, 'shared', 'sig_'));`;
    const outputs = await Promise.all(Array.from({ length: 6 }, () => run(process.execPath, ['-r', 'tsx/cjs', '-e', script])));
    const secrets = new Set(outputs.map((o) => o.stdout));
    expect(secrets.size).to.equal(1);
    expect(fs.readFileSync(path.join(dir, 'shared'), 'utf8').trim()).to.equal([...secrets][0]);
    // No drafts are left behind.
    expect(fs.readdirSync(dir)).to.deep.equal(['shared']);
  });
});
