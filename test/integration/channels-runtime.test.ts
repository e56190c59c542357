import fs from 'node:fs';
import { expect } from 'chai';
import OpenAI from 'openai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { tempDir, type Database } from '../../src/db/database';
import { isChannelEvent } from '../../src/domain/channel/events';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { createTestDatabase } from '../support/database';
import { readToEnd } from '../support/event-log';
import { callJson, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { keyCheckingOpenAiProvider as openaiProvider } from '../support/key-checking-provider';
import type { RecordingServer } from '../support/recording-server';
import { waitFor } from '../support/wait';

const ADMIN_TOKEN = 'channels-runtime-admin-token';

/** Every credential value the test ever gives a channel; the search at the end looks for each. */
const SECRETS = {
  seeded: 'sk-seeded-aaaaaaaaaaaaaaaaaaaaaaaa',
  rotated: 'sk-rotated-bbbbbbbbbbbbbbbbbbbbbbb',
  created: 'sk-created-ccccccccccccccccccccccc',
  createdRotated: 'sk-created2-ddddddddddddddddddddd',
  refused: 'sk-refused-eeeeeeeeeeeeeeeeeeeeeee',
  headerValue: 'hdr-secret-fffffffffffffffffffffff',
  accessKeyId: 'AKLT-secret-id-ggggggggggggggggg',
  secretAccessKey: 'volc-secret-hhhhhhhhhhhhhhhhhhhhh',
} as const;

/**
 * Channels managed at run time across two gateway processes on one database: a rotation through
 * one takes effect in the other with the log's next notification, and no credential ever shows
 * in the log, the database, the processes' logs, /metrics or an admin answer.
 */
describe('channels managed at run time, across two gateway processes @integration', function () {
  this.timeout(180_000);

  let database: Database;
  let provider: RecordingServer;
  let dataDir: string;
  let gateways: GatewayProcess[] = [];
  /** Every admin answer of the test, as text. */
  const answers: string[] = [];
  const accepted: string[] = [SECRETS.seeded];

  const admin = async (gateway: GatewayProcess, method: string, path: string, body?: unknown) => {
    const answer = await callJson(`${gateway.url}/admin/v1${path}`, ADMIN_TOKEN, method, body);
    answers.push(JSON.stringify(answer.body));
    return answer;
  };

  /** The gateway has applied the channel's stream up to `revision` (its directory logs each change it applies from the log). */
  const applied = (gateway: GatewayProcess, channel: string, revision: number) =>
    waitFor(`${gateway.name} to apply ${channel} revision ${revision}`, async () =>
      gateway.output.some((line) => {
        if (!line.includes('channel directory: applied channel changes from the log')) return false;
        const seen = (JSON.parse(line) as { channels: Record<string, number> }).channels[channel];
        return seen !== undefined && seen >= revision;
      }),
    );

  const lastRevision = async (gateway: GatewayProcess, channel: string): Promise<number> => {
    const events = (await admin(gateway, 'GET', `/channels/${channel}/events?limit=100`)).body.data as { revision: number }[];
    return events[events.length - 1]!.revision;
  };

  before(async () => {
    database = await createTestDatabase(20, { withSchema: true });
    provider = await openaiProvider(() => accepted);
    dataDir = tempDir('gateway-channels-runtime-');
    const env = {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      URL_SIGNING_SECRET: 'channels-runtime-signing-secret',
      CHANNEL_SECRETS_KEY: 'channels-runtime-key-0123456789abcdefghij',
      CHANNELS: JSON.stringify([{ name: 'default', protocol: 'openai', base_url: `${provider.url}/v1`, api_key: SECRETS.seeded }]),
      RATE_LIMIT_PER_MINUTE: '100000',
    };
    // Both seed `default` at once: expected-version appends let one create it.
    gateways = await Promise.all(['g1', 'g2'].map((name) => startGatewayProcess(name, env)));
  });

  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await provider?.close();
    await database?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('seeds CHANNELS once, rotates a credential through one process and the other uses it next, and never shows a credential', async () => {
    const [g1, g2] = gateways as [GatewayProcess, GatewayProcess];
    const seededEvents = (await admin(g1, 'GET', '/channels/default/events')).body.data;
    expect(seededEvents.map((e: { type: string; actor: string }) => [e.type, e.actor])).to.deep.equal([['ChannelCreated', 'config']]);

    const accountId = (await admin(g1, 'POST', '/accounts', { name: 'channels at run time' })).body.id as string;
    expect((await admin(g1, 'POST', `/accounts/${accountId}/credits`, { amount: 100_000_000, reference: 'fund' })).status).to.equal(201);
    const key = (await admin(g1, 'POST', `/accounts/${accountId}/keys`, {})).body.key as string;
    const chat = (g: GatewayProcess) => new OpenAI({ apiKey: key, baseURL: `${g.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    const lastKeySent = () => provider.seen[provider.seen.length - 1]!.headers.authorization;

    await chat(g2);
    expect(lastKeySent()).to.equal(`Bearer ${SECRETS.seeded}`);

    // Rotate through g1; g2 uses the new key from the next call once its directory has the event.
    accepted.push(SECRETS.rotated);
    const rotated = await admin(g1, 'PATCH', '/channels/default', { api_key: SECRETS.rotated });
    expect(rotated.status).to.equal(200);
    expect(rotated.body).to.include({ id: 'default', auth_kind: 'bearer', enabled: true });
    await applied(g2, 'default', await lastRevision(g1, 'default'));
    await chat(g2);
    expect(lastKeySent()).to.equal(`Bearer ${SECRETS.rotated}`);

    // Disabled through g1: g2 sends the channel nothing from the next call on; enabled again, it serves.
    await admin(g1, 'PATCH', '/channels/default', { enabled: false, reason: 'provider incident' });
    await applied(g2, 'default', await lastRevision(g1, 'default'));
    const sent = provider.seen.length;
    const refusedCall = await chat(g2).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refusedCall, 'a call for a model whose only channel is disabled fails').to.be.instanceOf(OpenAI.APIError);
    expect(provider.seen.length, 'nothing reached the provider').to.equal(sent);
    await admin(g1, 'PATCH', '/channels/default', { enabled: true });
    await applied(g2, 'default', await lastRevision(g1, 'default'));
    await chat(g2);
    expect(lastKeySent()).to.equal(`Bearer ${SECRETS.rotated}`);

    // A refused entry is answered 400 naming the field, and echoes no credential.
    const refused = await admin(g1, 'POST', '/channels', { name: 'bad', protocol: 'openai', base_url: 'ftp://nowhere', api_key: SECRETS.refused });
    expect(refused.status).to.equal(400);
    expect(refused.body.error).to.include({ param: 'base_url', message: 'base_url must be an http(s) URL' });
    const inUrl = await admin(g1, 'POST', '/channels', { name: 'bad', base_url: `http://user:${SECRETS.refused}@127.0.0.1/v1` });
    expect(inUrl.status).to.equal(400);
    expect(inUrl.body.error.param).to.equal('base_url');
    expect((await admin(g1, 'POST', '/channels', { name: 'health-x', base_url: `${provider.url}/v1` })).body.error.param).to.equal('name');
    const wrongAuth = await admin(g1, 'POST', '/channels', { name: 'bad', protocol: 'tavily', base_url: 'https://api.tavily.com', headers: { 'x-key': SECRETS.refused } });
    expect(wrongAuth.status).to.equal(400);

    // Create, rotate, test, disable, enable and delete channels of three authentication kinds.
    const created = await admin(g2, 'POST', '/channels', { name: 'backup', protocol: 'openai', base_url: `${provider.url}/v1`, api_key: SECRETS.created });
    expect(created.status).to.equal(201);
    expect(created.body).to.deep.include({ id: 'backup', auth_kind: 'bearer', enabled: true, health: { state: 'closed', until: null, reason: null, consecutive_failures: 0 } });
    expect((await admin(g2, 'POST', '/channels', { name: 'backup', base_url: `${provider.url}/v1` })).status).to.equal(409);
    // The provider refuses the key: the test says so without quoting the provider's words (which quote the key).
    await applied(g1, 'backup', 0);
    const refusedTest = await admin(g1, 'POST', '/channels/backup/test');
    expect(refusedTest.body).to.include({ outcome: 'credentials_refused', status: 401 });
    accepted.push(SECRETS.createdRotated);
    expect((await admin(g2, 'PATCH', '/channels/backup', { api_key: SECRETS.createdRotated, timeout_ms: 5000 })).status).to.equal(200);
    await applied(g1, 'backup', await lastRevision(g2, 'backup'));
    const passedTest = await admin(g1, 'POST', '/channels/backup/test');
    expect(passedTest.body).to.include({ outcome: 'ok', status: 200, error: null });
    expect(passedTest.body.latency_ms).to.be.a('number');

    expect((await admin(g1, 'POST', '/channels', { name: 'with-headers', protocol: 'openai', base_url: `${provider.url}/v1`, headers: { 'x-api-key': SECRETS.headerValue } })).status).to.equal(201);
    const signed = await admin(g1, 'POST', '/channels', {
      name: 'signed',
      protocol: 'volcengine_openapi',
      base_url: 'https://ark.cn-beijing.volcengineapi.com',
      volcengine: { access_key_id: SECRETS.accessKeyId, secret_access_key: SECRETS.secretAccessKey, region: 'cn-beijing', service: 'ark' },
    });
    expect(signed.status).to.equal(201);
    expect(signed.body.auth_kind).to.equal('volcengine');

    const disabled = await admin(g1, 'PATCH', '/channels/backup', { enabled: false, reason: 'provider maintenance' });
    expect(disabled.body.health).to.deep.include({ state: 'disabled', reason: 'provider maintenance' });
    expect((await admin(g1, 'PATCH', '/channels/backup', { enabled: true })).body.health.state).to.equal('closed');
    // The catalog's chat models name `default`: it cannot be deleted; `backup` can, and keeps its history.
    const inUse = await admin(g1, 'DELETE', '/channels/default');
    expect(inUse.status).to.equal(409);
    expect((await admin(g1, 'DELETE', '/channels/backup')).status).to.equal(200);
    expect((await admin(g1, 'GET', '/channels/backup')).status).to.equal(404);
    const history = (await admin(g1, 'GET', '/channels/backup/events')).body.data as { type: string; actor: string; changes: Record<string, unknown> }[];
    expect(history.map((e) => e.type)).to.deep.equal(['ChannelCreated', 'ChannelChanged', 'ChannelCredentialsRotated', 'ChannelDisabled', 'ChannelEnabled', 'ChannelDeleted']);
    expect(history.every((e) => e.actor === 'admin-token')).to.equal(true);
    expect(history[1]!.changes).to.deep.equal({ timeout_ms: 5000 });
    expect(history[2]!.changes).to.deep.equal({ auth_kind: 'bearer', credentials: 'rotated' });

    const listed = (await admin(g2, 'GET', '/channels?limit=2')).body;
    expect(listed.data.map((c: { id: string }) => c.id)).to.deep.equal(['default', 'signed']);
    expect(listed.has_more).to.equal(true);
    const rest = (await admin(g2, 'GET', `/channels?limit=2&after=${listed.next_after}`)).body;
    expect(rest.data.map((c: { id: string }) => c.id)).to.deep.equal(['with-headers']);
    await admin(g1, 'GET', '/channels/default');
    await admin(g1, 'GET', '/channels/signed/events');

    // The search. A positive control first: the provider received the keys, and the search finds them there.
    const values = Object.values(SECRETS);
    const found = (text: string) => values.filter((v) => text.includes(v));
    expect(found(provider.seen.map((r) => JSON.stringify(r.headers)).join('\n'))).to.include.members([SECRETS.seeded, SECRETS.rotated, SECRETS.created, SECRETS.createdRotated]);

    const log = await readToEnd(new PostgresEventStore({ pool: database.pool }));
    expect(log.filter(isChannelEvent).length, 'the channel events the test made').to.equal(12);
    expect(found(log.map((e) => JSON.stringify({ stream: e.streamId, type: e.type, data: e.data, metadata: e.metadata })).join('\n')), 'the event log').to.deep.equal([]);
    expect(found(await everyTableAsText(database)), 'the database').to.deep.equal([]);
    expect(found([...g1.output, ...g2.output].join('\n')), 'the processes\' logs').to.deep.equal([]);
    for (const g of gateways) expect(found(await (await fetch(`${g.url}/metrics`)).text()), `${g.name}'s /metrics`).to.deep.equal([]);
    expect(found(answers.join('\n')), 'the admin answers').to.deep.equal([]);

    const report = await runAudit(database.pool, new PostgresEventStore({ pool: database.pool }), allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations).to.deep.equal([]);
    expect(report.mismatches).to.deep.equal([]);
  });
});

/** Every row of every table of the database (every schema but the system's), each as its text form. */
async function everyTableAsText(database: Database): Promise<string> {
  const { rows: tables } = await database.pool.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  expect(tables.length).to.be.greaterThan(10);
  const parts: string[] = [];
  for (const { schema, name } of tables) {
    const { rows } = await database.pool.query<{ row: string }>(`SELECT t::text AS row FROM "${schema}"."${name}" t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}
