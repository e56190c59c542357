import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config';

/** The message loadConfig refuses `env` with (fails the test if it does not refuse). */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  expect.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('config: every bad setting is refused with a message naming it and what is wrong', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-config-test-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('DATABASE_URL that is not a URL, or not a PostgreSQL one, without echoing the value', () => {
    const notUrl = refusal({ DATABASE_URL: 'notaurl' });
    expect(notUrl).to.match(/^DATABASE_URL is not a URL/).and.include('postgres://');
    expect(notUrl).not.to.include('notaurl');
    const mysql = refusal({ DATABASE_URL: 'mysql://root:secret@db/app' });
    expect(mysql).to.match(/^DATABASE_URL must start with postgres:\/\/ or postgresql:\/\/, got mysql:/);
    expect(mysql, 'a password in the value is never repeated').not.to.include('secret');
  });

  it('accepts the PostgreSQL URL forms the driver takes', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/gw' }).databaseUrl).to.equal('postgres://u:p@db:5432/gw');
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@127.0.0.1/gw?sslmode=disable' }).databaseUrl).to.equal('postgresql://u@127.0.0.1/gw?sslmode=disable');
    expect(loadConfig({}).databaseUrl).to.equal(undefined);
  });

  it('CHANNELS_FILE that does not exist is reported as missing, not as invalid JSON', () => {
    const missing = path.join(dir, 'no-such-channels.json');
    expect(refusal({ CHANNELS_FILE: missing })).to.equal(`CHANNELS_FILE ${missing} cannot be read: no such file`);
    expect(refusal({ CHANNELS_FILE: dir })).to.equal(`CHANNELS_FILE ${dir} cannot be read: is a directory, not a file`);
  });

  it('CHANNELS_FILE with bad JSON, and CHANNELS entries, name the setting and the entry', () => {
    const file = path.join(dir, 'channels.json');
    fs.writeFileSync(file, '[{"name": ');
    expect(refusal({ CHANNELS_FILE: file })).to.match(new RegExp(`^CHANNELS_FILE ${file} is not valid JSON: `));
    expect(refusal({ CHANNELS: '{}' })).to.equal('CHANNELS must be a non-empty JSON array of channels');
    expect(refusal({ CHANNELS: '[42]' })).to.equal('CHANNELS[0] must be an object with name and base_url');
    expect(refusal({ CHANNELS: '[{"name":"default","base_url":"ftp://x"}]' })).to.equal('CHANNELS[0].base_url must be an http(s) URL');
    expect(refusal({ CHANNELS: '[{"name":"default","base_url":"http://"}]' })).to.equal('CHANNELS[0].base_url must be an http(s) URL');
    expect(refusal({ CHANNELS: '[{"name":"a","base_url":"http://a"},{"name":"a","base_url":"http://b"}]' })).to.equal('CHANNELS[1].name: channel a is listed twice');
  });

  it('CATALOG_FILE that cannot be read, and PUBLIC_BASE_URL that is not an http(s) URL', () => {
    const missing = path.join(dir, 'catalog.json');
    expect(refusal({ CATALOG_FILE: missing })).to.equal(`CATALOG_FILE ${missing} cannot be read: no such file`);
    expect(refusal({ PUBLIC_BASE_URL: 'gateway.example.com' })).to.match(/^PUBLIC_BASE_URL must be an http\(s\) URL/);
  });

  it('numbers, booleans and choices name the setting, the allowed values and what was given', () => {
    expect(refusal({ PORT: 'eighty' })).to.equal('PORT must be an integer from 0 to 65535, got "eighty"');
    expect(refusal({ SHUTDOWN_GRACE_MS: '-1' })).to.match(/^SHUTDOWN_GRACE_MS must be an integer from 0 /);
    expect(refusal({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' })).to.equal('WEBHOOK_ALLOW_PRIVATE_TARGETS must be true or false, got "yes"');
    expect(refusal({ EVENT_STORE: 'mysql' })).to.equal('EVENT_STORE must be one of postgres, eventstoredb, got "mysql"');
  });
});
