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

  it('malformed CHANNELS is reported by its place, never quoting the text around it (a key may be there)', () => {
    const key = 'sk-secretKEY0123456789';
    // Node 20's parser quotes the text around an unexpected token; an unquoted key is one.
    expect(refusal({ CHANNELS: `[{"name":"default","base_url":"http://a","api_key":${key}}]` })).to.equal('CHANNELS is not valid JSON');
    expect(refusal({ CHANNELS: `[{"name":"default",\n "api_key":"${key}" "base_url":"http://a"}]` })).to.equal('CHANNELS is not valid JSON at line 2, column 37');
    for (const text of [`[{"api_key":${key}}]`, `[{"api_key":"${key}`, `[{"api_key":"${key}"x`, `[{"api_key":"${key.slice(0, 8)}\\u00zz${key.slice(8)}"}]`]) {
      const message = refusal({ CHANNELS: text });
      expect(message, text).to.match(/^CHANNELS is not valid JSON( at line \d+, column \d+)?$/);
      expect(message, text).not.to.include('secret');
    }
  });

  it('CHANNELS_FILE with bad JSON, and CHANNELS entries, name the setting and the entry', () => {
    const file = path.join(dir, 'channels.json');
    fs.writeFileSync(file, '[{"name": ');
    expect(refusal({ CHANNELS_FILE: file })).to.equal(`CHANNELS_FILE ${file} is not valid JSON`);
    expect(refusal({ CHANNELS: '{}' })).to.equal('CHANNELS must be a non-empty JSON array of channels');
    expect(refusal({ CHANNELS: '[42]' })).to.equal('CHANNELS[0] must be an object with name and base_url');
    expect(refusal({ CHANNELS: '[{"name":"default","base_url":"ftp://x"}]' })).to.equal('CHANNELS[0].base_url must be an http(s) URL');
    expect(refusal({ CHANNELS: '[{"name":"default","base_url":"http://"}]' })).to.equal('CHANNELS[0].base_url must be an http(s) URL');
    expect(refusal({ CHANNELS: '[{"name":"a","base_url":"http://a"},{"name":"a","base_url":"http://b"}]' })).to.equal('CHANNELS[1].name: channel a is listed twice');
    // The admin API's name rule: a `health-x` channel's stream would be channel x's health stream.
    for (const name of ['health-x', '-a', 'a/b', 'a b', 'x'.repeat(65)]) {
      expect(refusal({ CHANNELS: JSON.stringify([{ name, base_url: 'http://a' }]) }), name).to.match(/^CHANNELS\[0\]\.name must be 1 to 64 letters, digits, dots, underscores and hyphens, starting with a letter or digit, and not start with health-$/);
    }
    expect(loadConfig({ CHANNELS: JSON.stringify([{ name: 'Ark_2.eu-1', base_url: 'http://a' }, { name: 'healthy', base_url: 'http://a' }]) }).channels!.map((c) => c.name)).to.deep.equal(['Ark_2.eu-1', 'healthy']);
  });

  it('CHANNELS entries name a known protocol and one authentication it accepts, without echoing a credential', () => {
    const one = (entry: Record<string, unknown>) => JSON.stringify([{ name: 'c', base_url: 'https://p.example/v1', ...entry }]);
    expect(refusal({ CHANNELS: one({ protocol: 'grpc' }) })).to.equal('CHANNELS[0].protocol must be one of openai, ark, minimax, volcengine_openapi, coze, tavily, bocha, tingwu, volcengine_speech, volcengine_podcast');
    expect(refusal({ CHANNELS: one({ api_key: 'sk-TOPSECRET', headers: { 'x-api-key': 'k' } }) })).to.equal('CHANNELS[0]: give one of api_key, headers, volcengine and alibaba, not api_key and headers');
    expect(refusal({ CHANNELS: one({ protocol: 'tingwu', alibaba: { access_key_id: 'LTAI' } }) })).to.equal('CHANNELS[0].alibaba.access_key_secret must be a non-empty string');
    expect(refusal({ CHANNELS: one({ protocol: 'tingwu', alibaba: 'LTAI:secret' }) })).to.equal('CHANNELS[0].alibaba must be an object with access_key_id, access_key_secret');
    const keyAtTingwu = refusal({ CHANNELS: one({ protocol: 'tingwu', api_key: 'sk-TOPSECRET' }) });
    expect(keyAtTingwu).to.equal('CHANNELS[0]: a tingwu channel authenticates with alibaba (ACS3 request signing), not api_key');
    const signedAtArkByAlibaba = refusal({ CHANNELS: one({ protocol: 'ark', alibaba: { access_key_id: 'LTAI', access_key_secret: 'SK-TOPSECRET' } }) });
    expect(signedAtArkByAlibaba).to.equal('CHANNELS[0]: a ark channel authenticates with api_key, not alibaba (ACS3 request signing)');
    expect(keyAtTingwu + signedAtArkByAlibaba).not.to.include('TOPSECRET');
    expect(refusal({ CHANNELS: one({ headers: {} }) })).to.equal('CHANNELS[0].headers must be an object of header names to string values');
    expect(refusal({ CHANNELS: one({ headers: { 'bad name': 'v' } }) })).to.equal('CHANNELS[0].headers: "bad name" is not a header name');
    expect(refusal({ CHANNELS: one({ headers: { 'x-key': 7 } }) })).to.equal('CHANNELS[0].headers.x-key must be a string of printable ASCII');
    expect(refusal({ CHANNELS: one({ protocol: 'volcengine_openapi', volcengine: { access_key_id: 'AK', secret_access_key: 'SK', region: 'cn-beijing' } }) })).to.equal(
      'CHANNELS[0].volcengine.service must be a non-empty string',
    );
    const signedAtArk = refusal({ CHANNELS: one({ protocol: 'ark', volcengine: { access_key_id: 'AK', secret_access_key: 'SK-TOPSECRET', region: 'r', service: 's' } }) });
    expect(signedAtArk).to.equal('CHANNELS[0]: a ark channel authenticates with api_key, not volcengine (request signing)');
    expect(signedAtArk).not.to.include('TOPSECRET');
    expect(refusal({ CHANNELS: one({ protocol: 'volcengine_openapi', api_key: 'sk-TOPSECRET' }) })).to.equal(
      'CHANNELS[0]: a volcengine_openapi channel authenticates with volcengine (request signing), not api_key',
    );
    const speechWithKey = refusal({ CHANNELS: one({ protocol: 'volcengine_speech', api_key: 'sk-TOPSECRET' }) });
    expect(speechWithKey).to.equal('CHANNELS[0]: a volcengine_speech channel authenticates with headers, not api_key');
    expect(speechWithKey).not.to.include('TOPSECRET');
  });

  it('CHANNELS entries become channel configs: protocol (openai when absent) and the authentication strategy', () => {
    const channels = loadConfig({
      CHANNELS: JSON.stringify([
        { name: 'relay', base_url: 'https://api.openai.com/v1', api_key: 'sk-1' },
        { name: 'ark', protocol: 'ark', base_url: 'https://ark.cn-beijing.volces.com/api/v3', api_key: 'ark-1', timeout_ms: 5000, max_concurrency: 3 },
        { name: 'hdr', base_url: 'https://h.example/v1', headers: { 'X-Api-Key': 'k' } },
        { name: 'assets', protocol: 'volcengine_openapi', base_url: 'https://ark.cn-beijing.volcengineapi.com', volcengine: { access_key_id: 'AK', secret_access_key: 'SK', region: 'cn-beijing', service: 'ark' } },
        { name: 'tingwu', protocol: 'tingwu', base_url: 'https://tingwu.cn-beijing.aliyuncs.com', alibaba: { access_key_id: 'LTAI', access_key_secret: 'SK' } },
        { name: 'open', base_url: 'http://127.0.0.1:9/v1' },
      ]),
    }).channels!;
    expect(channels.map((c) => [c.name, c.protocol, c.auth])).to.deep.equal([
      ['relay', 'openai', { kind: 'bearer', apiKey: 'sk-1' }],
      ['ark', 'ark', { kind: 'bearer', apiKey: 'ark-1' }],
      ['hdr', 'openai', { kind: 'headers', headers: { 'x-api-key': 'k' } }],
      ['assets', 'volcengine_openapi', { kind: 'volcengine', credentials: { accessKeyId: 'AK', secretAccessKey: 'SK', region: 'cn-beijing', service: 'ark' } }],
      ['tingwu', 'tingwu', { kind: 'acs3', credentials: { accessKeyId: 'LTAI', accessKeySecret: 'SK' } }],
      ['open', 'openai', { kind: 'none' }],
    ]);
    expect(channels[1]).to.include({ timeout_ms: 5000, max_concurrency: 3 });
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

  it('routing pauses that defeat themselves: a 0 cooldown, a first pause past its cap', () => {
    expect(refusal({ CHANNEL_COOLDOWN_MS: '0' })).to.match(/^CHANNEL_COOLDOWN_MS must be an integer from 1 /);
    expect(refusal({ CHANNEL_MAX_COOLDOWN_MS: '0' })).to.match(/^CHANNEL_MAX_COOLDOWN_MS must be an integer from 1 /);
    expect(refusal({ CHANNEL_COOLDOWN_MS: '60000', CHANNEL_MAX_COOLDOWN_MS: '1000' })).to.equal('CHANNEL_COOLDOWN_MS (60000) must not exceed CHANNEL_MAX_COOLDOWN_MS (1000)');
    expect(refusal({ CHANNEL_CIRCUIT_OPEN_MS: '700000' })).to.equal('CHANNEL_CIRCUIT_OPEN_MS (700000) must not exceed CHANNEL_CIRCUIT_MAX_OPEN_MS (600000)');
    expect(loadConfig({ CHANNEL_COOLDOWN_MS: '1000', CHANNEL_MAX_COOLDOWN_MS: '1000', CHANNEL_CIRCUIT_OPEN_MS: '5', CHANNEL_CIRCUIT_MAX_OPEN_MS: '5' }).routing).to.deep.equal({
      cooldownMs: 1000,
      maxCooldownMs: 1000,
      failureThreshold: 5,
      openMs: 5,
      maxOpenMs: 5,
    });
  });

  it('RISK_OFFICIAL_DOMAINS, whose list moved to the catalog, is refused rather than ignored', () => {
    expect(refusal({ RISK_OFFICIAL_DOMAINS: 'court.gov.cn' })).to.match(/^RISK_OFFICIAL_DOMAINS is no longer read: .*risk-agent capabilities\.official_sources/);
    // An empty value sets nothing, as for every setting.
    expect(() => loadConfig({ RISK_OFFICIAL_DOMAINS: ' ' })).to.not.throw();
  });

  it('FILE_STORE: local by default; s3 needs a bucket, both keys or neither, and is never half-configured', () => {
    expect(loadConfig({}).fileStore).to.deep.equal({ kind: 'local' });
    expect(refusal({ FILE_STORE: 'gcs' })).to.equal('FILE_STORE must be one of local, s3, got "gcs"');
    expect(refusal({ FILE_STORE: 's3' })).to.match(/^FILE_STORE=s3 needs S3_BUCKET/);
    expect(refusal({ FILE_STORE: 's3', S3_BUCKET: 'Bad_Bucket' })).to.match(/^FILE_STORE=s3 needs S3_BUCKET: 3 to 63 lower-case/);
    const oneKey = refusal({ FILE_STORE: 's3', S3_BUCKET: 'files', S3_SECRET_ACCESS_KEY: 'sk-very-secret' });
    expect(oneKey).to.match(/^S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together/);
    expect(oneKey).not.to.include('sk-very-secret');
    expect(refusal({ S3_BUCKET: 'files', S3_SECRET_ACCESS_KEY: 'sk-very-secret' })).to.equal('S3_BUCKET, S3_SECRET_ACCESS_KEY are set but FILE_STORE is not s3');
    expect(refusal({ FILE_STORE: 's3', S3_BUCKET: 'files', S3_ENDPOINT: 'minio:9000' })).to.match(/^S3_ENDPOINT must be an http\(s\) URL/);
    expect(refusal({ FILE_STORE: 's3', S3_BUCKET: 'files', S3_KEY_PREFIX: '../up' })).to.match(/^S3_KEY_PREFIX must be path segments/);
    expect(refusal({ FILE_STORE: 's3', S3_BUCKET: 'files', S3_PART_BYTES: '1048576' })).to.match(/^S3_PART_BYTES must be an integer from 5242880/);
    expect(loadConfig({ FILE_STORE: 's3', S3_BUCKET: 'files' }).fileStore).to.deep.equal({
      kind: 's3',
      bucket: 'files',
      endpoint: undefined,
      region: 'us-east-1',
      credentials: undefined,
      forcePathStyle: false,
      keyPrefix: '',
      partBytes: 8 * 1_048_576,
    });
    const minio = loadConfig({
      FILE_STORE: 's3',
      S3_BUCKET: 'gateway-files',
      S3_ENDPOINT: 'http://object-store:9000',
      S3_REGION: 'cn-beijing',
      S3_ACCESS_KEY_ID: 'AKID',
      S3_SECRET_ACCESS_KEY: 'secret',
      S3_FORCE_PATH_STYLE: 'true',
      S3_KEY_PREFIX: 'prod/gateway',
    }).fileStore;
    expect(minio).to.deep.include({ endpoint: 'http://object-store:9000', region: 'cn-beijing', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, forcePathStyle: true, keyPrefix: 'prod/gateway/' });
  });
});
