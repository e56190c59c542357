import { expect } from 'chai';
import { providerRoutes } from '../../simulator/providers';
import type { SimContext } from '../../simulator';
import { TestClock } from '../support/clock';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { ERROR_MESSAGE, expectValidForStatus, statusSchemas } from '../support/schemas';
import { expectSettledAndAuditClean, pollUntilFinal as pollTask, waitFor } from '../support/wait';

const PER_SECOND = 5_000;
const DEFAULT_SECONDS = 60;

const signed = { type: 'string', pattern: '^http://127\\.0\\.0\\.1:\\d+/files/tasks/erase/ers_[0-9a-f]+/video\\.mp4\\?expires=\\d+&sig=[0-9a-f]{64}$' };
/** The spec's subtitle erase task, one schema per status: video_url and result only when succeeded, error only when failed. */
const eraseSchemas = statusSchemas(
  {
    properties: {
      id: { type: 'string', pattern: '^ers_' },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
    },
    required: ['id', 'status', 'created_at', 'updated_at'],
  },
  {
    processing: {},
    cancelled: {},
    failed: { error: ERROR_MESSAGE },
    succeeded: { video_url: signed, result: { type: 'object', properties: { video_url: signed }, required: ['video_url'] } },
  },
);

const expectValid = (body: any, what: string) => expectValidForStatus(eraseSchemas, body, what);

/** An MP4's duration in seconds from its movie header. */
function mp4Seconds(bytes: Buffer): number {
  expect(bytes.subarray(4, 8).toString('ascii')).to.equal('ftyp');
  const moov = bytes.indexOf('mvhd');
  expect(moov).to.be.above(0);
  const mvhd = moov + 4;
  return bytes.readUInt32BE(mvhd + 16) / bytes.readUInt32BE(mvhd + 12);
}

const POLL_MS = 50;
const VIDEO = 'https://cdn.example.com/clips/interview.mp4';

/** A VOD Action the gateway called, as the simulated provider received it: its name and parameters (query and JSON body). */
interface VodCall {
  readonly action: string;
  readonly parameters: Record<string, unknown>;
}

describe('subtitle erase tasks @integration', () => {
  let gw: TestGateway;
  let key: string;
  const vodCalls: VodCall[] = [];

  before(async () => {
    gw = await startTestGateway({ TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000', POLL_MIN_INTERVAL_MS_ERASE: String(POLL_MS) });
    ({ key } = await gw.fundedAccount(1_000_000_000));
    // The simulated providers again, one coherent set behind a recorder of the VOD Actions the gateway calls.
    gw.simulator.addRoutes(
      providerRoutes().map((route) => ({
        ...route,
        handler: (ctx: SimContext) => {
          const action = ctx.query.get('Action');
          if (route.path === '/volcengine/' && action) {
            const body = ctx.rawBody && ctx.rawBody.length > 0 ? (JSON.parse(ctx.rawBody.toString('utf8')) as Record<string, unknown>) : {};
            const query = Object.fromEntries([...ctx.query].filter(([name]) => name !== 'Action' && name !== 'Version'));
            vodCalls.push({ action, parameters: { ...query, ...body } });
          }
          return route.handler(ctx);
        },
      })),
    );
  });
  beforeEach(() => {
    vodCalls.length = 0;
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key]));
  after(async () => gw.close());

  const balance = (k = key) => gw.balance(k);
  const create = (body: Record<string, unknown>, headers?: Record<string, string>, k = key) => gw.api(k, 'POST', '/v1/videos/erase-subtitle', body, headers);
  const get = (id: string, k = key) => gw.api(k, 'GET', `/v1/videos/erase-subtitle/${id}`);
  const cancel = (id: string, k = key) => gw.api(k, 'POST', `/v1/videos/erase-subtitle/${id}/cancel`);
  const ledgerOf = async (k: string) => (await gw.api(k, 'GET', '/v1/account/ledger?limit=100')).body.data as { type: string; amount: number; reservation_id: string | null }[];

  const pollUntilFinal = (id: string, k = key) =>
    pollTask(`erase ${id}`, () => get(id, k), { check: (body) => expectValid(body, 'erase task'), isFinal: (status) => status !== 'processing', everyMs: POLL_MS + 15 });

  it('erases subtitles on VOD: processing at once, then the stored video behind a signed link and the full result, settled per second output', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const regions = [{ x: 0, y: 0.8, width: 1, height: 0.2 }, { x: 0.1, y: 0.05, width: 0.3, height: 0.1 }];
    const video_url = `${VIDEO}?sim=delay=600,duration=8`;
    const res = await create({ video_url, duration_seconds: 10, regions, output: { format: 'mp4', resolution: 'source' } }, undefined, fresh.key);
    expect(res.status).to.equal(200);
    expectValid(res.body, 'creation answer');
    expect(res.body.status).to.equal('processing');
    expect((await balance(fresh.key)).frozen).to.equal(10 * PER_SECOND);

    const { final, seen } = await pollUntilFinal(res.body.id, fresh.key);
    expect(seen).to.deep.equal(['processing', 'succeeded']);
    expect(final.result.video_url).to.equal(final.video_url);
    // The provider's Erase output (Output.Task.Erase of GetExecution), its link replaced by the gateway's.
    expect(final.result.Duration).to.equal(8);
    expect(final.result.File.Vid).to.match(/^v0/);

    // The video pulled into the model's space, its subtitles erased within the regions as VOD's corner ratios, the erased copy fetched by its Vid.
    const actions = vodCalls.map((c) => c.action);
    expect([...new Set(actions)]).to.deep.equal(['UploadMediaByUrl', 'QueryUploadTaskInfo', 'StartExecution', 'GetExecution', 'GetPlayInfo']);
    expect(actions.filter((a) => a === 'UploadMediaByUrl' || a === 'StartExecution')).to.deep.equal(['UploadMediaByUrl', 'StartExecution']);
    const upload = vodCalls.find((c) => c.action === 'UploadMediaByUrl')!.parameters;
    expect(upload.SpaceName).to.equal('subtitle-erase');
    expect(JSON.parse(upload.URLSets as string)).to.deep.equal([{ SourceUrl: video_url, FileExtension: '.mp4', CallbackArgs: res.body.id }]);
    const start = vodCalls.find((c) => c.action === 'StartExecution')!.parameters;
    expect(start.Control).to.deep.equal({ ClientToken: res.body.id });
    expect(start.SpaceName, 'the space VOD\'s idempotency compares').to.equal('subtitle-erase');
    const erase = (start.Operation as { Task: { Erase: { Mode: string; Auto: { Locations: unknown } } } }).Task.Erase;
    expect(erase.Mode).to.equal('Auto');
    expect(erase.Auto.Locations).to.deep.equal([
      { RatioLocation: { TopLeftX: 0, TopLeftY: 0.8, BottomRightX: 1, BottomRightY: 1 } },
      { RatioLocation: { TopLeftX: 0.1, TopLeftY: 0.05, BottomRightX: 0.4, BottomRightY: 0.15 } },
    ]);
    expect(vodCalls.find((c) => c.action === 'GetPlayInfo')!.parameters).to.deep.equal({ Vid: final.result.File.Vid, NeedOriginal: '1', Ssl: '1' });
    const file = await fetch(final.video_url);
    expect(file.status).to.equal(200);
    expect(file.headers.get('content-type')).to.equal('video/mp4');
    expect(mp4Seconds(Buffer.from(await file.arrayBuffer()))).to.equal(8);

    await waitFor('billed', async () => (await balance(fresh.key)).frozen === 0);
    const ledger = await ledgerOf(fresh.key);
    expect(ledger.map((e) => e.type)).to.deep.equal(['credit', 'reservation', 'settlement']);
    expect(ledger[1]!.amount).to.equal(10 * PER_SECOND);
    expect(ledger[2]!.amount).to.equal(8 * PER_SECOND);
    expect((await balance(fresh.key)).available).to.equal(100_000_000 - 8 * PER_SECOND);
  });

  it('freezes the default duration when none is declared and settles what the provider output; no regions: VOD finds the subtitles', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const res = await create({ model: 'subtitle-erase', video_url: `${VIDEO}?sim=duration=12` }, undefined, fresh.key);
    expect((await balance(fresh.key)).frozen).to.equal(DEFAULT_SECONDS * PER_SECOND);
    const { final } = await pollUntilFinal(res.body.id, fresh.key);
    expect(final.result.Duration).to.equal(12);
    const start = vodCalls.find((c) => c.action === 'StartExecution')!.parameters as { Operation: { Task: { Erase: { Auto: unknown } } } };
    expect(start.Operation.Task.Erase.Auto).to.deep.equal({ Type: 'Subtitle', SubtitleFilter: {} });
    await waitFor('billed', async () => (await balance(fresh.key)).frozen === 0);
    expect(100_000_000 - (await balance(fresh.key)).available).to.equal(12 * PER_SECOND);
  });

  it('validates the request and reserves nothing for a refused one', async () => {
    const before = await balance();
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{}, 400, 'video_url', 'invalid_request'],
      [{ video_url: 'http://cdn.example.com/v.mp4' }, 400, 'video_url', 'invalid_video_url'],
      [{ video_url: 'not a url' }, 400, 'video_url', 'invalid_video_url'],
      // Not public by the address rule of every client URL (src/http/public-address.ts), unless FILE_URL_ALLOW_PRIVATE_TARGETS.
      ...[
        'https://127.0.0.1/v.mp4',
        'https://127.8.9.10:8443/v.mp4',
        'https://0x7f000001/v.mp4',
        'https://10.1.2.3/v.mp4',
        'https://172.16.5.4/v.mp4',
        'https://192.168.1.20/v.mp4',
        'https://169.254.169.254/latest/meta-data',
        'https://0.0.0.0/v.mp4',
        'https://[::1]/v.mp4',
        'https://[fe80::1]/v.mp4',
        'https://[fd00::5]/v.mp4',
        'https://[::ffff:127.0.0.1]/v.mp4',
        'https://localhost/v.mp4',
        'https://media.localhost./v.mp4',
      ].map((video_url): [Record<string, unknown>, number, string, string] => [{ video_url }, 400, 'video_url', 'invalid_video_url']),
      [{ video_url: VIDEO, regions: [{ x: 0.5, y: 0.9, width: 0.6, height: 0.1 }] }, 400, 'regions[0]', 'invalid_region'],
      [{ video_url: VIDEO, regions: [{ x: 0, y: 0, width: 0, height: 0.1 }] }, 400, 'regions[0].width', 'invalid_request'],
      [{ video_url: VIDEO, regions: [{ x: 0, y: 0, width: 1.5, height: 0.1 }] }, 400, 'regions[0].width', 'invalid_request'],
      [{ video_url: VIDEO, regions: Array.from({ length: 9 }, () => ({ x: 0, y: 0, width: 0.1, height: 0.1 })) }, 400, 'regions', 'invalid_request'],
      [{ video_url: VIDEO, duration_seconds: 7201 }, 400, 'duration_seconds', 'invalid_request'],
      [{ video_url: VIDEO, duration_seconds: 2.5 }, 400, 'duration_seconds', 'invalid_request'],
      [{ video_url: VIDEO, output: { format: 'mov' } }, 400, 'output.format', 'unsupported_output_format'],
      [{ video_url: VIDEO, output: { resolution: '4k' } }, 400, 'output.resolution', 'unsupported_resolution'],
      // VOD's erased copy keeps the source's resolution (at most 1080p): the catalog offers `source` only.
      [{ video_url: VIDEO, output: { resolution: '720p' } }, 400, 'output.resolution', 'unsupported_resolution'],
      [{ video_url: VIDEO, output: { codec: 'h265' } }, 400, 'output.codec', 'invalid_request'],
      [{ video_url: VIDEO, language: 'en' }, 400, 'language', 'invalid_request'],
      [{ video_url: VIDEO, model: 'chat-fast' }, 400, 'model', 'model_not_found'],
    ];
    for (const [body, status, param, code] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(status);
      expect(res.body.error, JSON.stringify(body)).to.deep.include({ param, code });
    }
    expect(await balance()).to.deep.equal(before);
  });

  it('fails with an error string when the provider fails the erase, cannot fetch the video or refuses it, and refunds the freeze', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const failed = await create({ video_url: `${VIDEO}?sim=fail`, duration_seconds: 30 }, undefined, fresh.key);
    const { final } = await pollUntilFinal(failed.body.id, fresh.key);
    expect(final.status).to.equal('failed');
    expect(final.error).to.equal('the provider could not erase the subtitles');
    const unfetched = await create({ video_url: `${VIDEO}?sim=upload-fail` }, undefined, fresh.key);
    const unfetchedFinal = (await pollUntilFinal(unfetched.body.id, fresh.key)).final;
    expect([unfetchedFinal.status, unfetchedFinal.error]).to.deep.equal(['failed', 'the provider could not fetch the video from video_url']);
    const refused = await create({ video_url: `${VIDEO}?sim=status=422` }, undefined, fresh.key);
    expect((await pollUntilFinal(refused.body.id, fresh.key)).final.status).to.equal('failed');
    await waitFor('released', async () => (await balance(fresh.key)).frozen === 0);
    expect((await balance(fresh.key)).available).to.equal(100_000_000);
    // Each reservation is released after it was made; how the two tasks' entries interleave is not promised.
    const [credit, ...rest] = await ledgerOf(fresh.key);
    expect(credit!.type).to.equal('credit');
    const byReservation = new Map<string, string[]>();
    for (const e of rest) byReservation.set(e.reservation_id!, [...(byReservation.get(e.reservation_id!) ?? []), e.type]);
    expect([...byReservation.values()]).to.deep.equal([
      ['reservation', 'release'],
      ['reservation', 'release'],
      ['reservation', 'release'],
    ]);
  });

  it('fails a video longer than the model takes (VOD reports its length after the pull) with video_too_long before erasing it, released', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    // Declared short (the freeze), 9000 s in fact: more than subtitle-erase's max_duration_seconds (7200).
    const res = await create({ video_url: `${VIDEO}?sim=duration=9000`, duration_seconds: 30 }, undefined, fresh.key);
    expect((await balance(fresh.key)).frozen).to.equal(30 * PER_SECOND);
    const { final } = await pollUntilFinal(res.body.id, fresh.key);
    expect([final.status, final.error]).to.deep.equal(['failed', 'the video at video_url lasts 9000 s; at most 7200 s can be erased']);
    expect(vodCalls.map((c) => c.action)).to.include('QueryUploadTaskInfo').and.not.include('StartExecution');
    const task = await gw.tasks.read('erase', res.body.id, fresh.accountId);
    expect(task?.error).to.deep.include({ code: 'video_too_long' });
    await waitFor('released', async () => (await balance(fresh.key)).frozen === 0);
    expect((await balance(fresh.key)).available).to.equal(100_000_000);
  });

  it('cancels an unfinished task: released, the gateway stops reading it (VOD has no cancel: its erase runs on); a finished one answers 409', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const res = await create({ video_url: `${VIDEO}?sim=hold` }, undefined, fresh.key);
    // The upload done, the erase started: the task now follows VOD's execution.
    const upstreamId = await waitFor('the erase started', async () => {
      const id = (await gw.tasks.read('erase', res.body.id, fresh.accountId))?.upstream_id ?? null;
      return id?.startsWith('run:') ? id : null;
    });
    const cancelled = await cancel(res.body.id, fresh.key);
    expect(cancelled.status).to.equal(200);
    expectValid(cancelled.body, 'cancel answer');
    expect(cancelled.body.status).to.equal('cancelled');
    await waitFor('released', async () => (await balance(fresh.key)).frozen === 0);
    expect((await balance(fresh.key)).available).to.equal(100_000_000);
    // The task's poll job ends at its next run instead of reading the execution again.
    await waitFor('the poll job ended', async () => (await gw.pool.query("SELECT 1 FROM jobs WHERE kind = 'task.poll' AND key = $1", [`erase-${res.body.id}`])).rowCount === 0);
    const execution = async () => (await (await fetch(`${gw.simulator.url}/volcengine/sim/vod/executions/${upstreamId.slice('run:'.length)}`)).json()) as { Phase: string; Reads: number };
    const seen = await execution();
    expect(seen.Phase, 'the provider still holds the erase').to.equal('queued');
    expect(vodCalls.filter((c) => c.action === 'GetExecution').length, 'every read of the execution was the gateway\'s').to.equal(seen.Reads);
    expect((await cancel(res.body.id, fresh.key)).status).to.equal(409);
    expectValid((await get(res.body.id, fresh.key)).body, 'cancelled task');

    // Cancelled right after creation, whether or not the provider has accepted it yet.
    const early = await create({ video_url: `${VIDEO}?sim=hold` }, undefined, fresh.key);
    const earlyCancel = await cancel(early.body.id, fresh.key);
    expect(earlyCancel.status).to.equal(200);
    expect(earlyCancel.body.status).to.equal('cancelled');

    const done = await create({ video_url: `${VIDEO}?sim=duration=2` }, undefined, fresh.key);
    await pollUntilFinal(done.body.id, fresh.key);
    const late = await cancel(done.body.id, fresh.key);
    expect(late.status).to.equal(409);
    expect(late.body.error.code).to.equal('task_finished');
    await waitFor('billed', async () => (await balance(fresh.key)).frozen === 0);
    expect(100_000_000 - (await balance(fresh.key)).available).to.equal(2 * PER_SECOND);
  });

  it('answers 401 without a key and 404 for unknown ids and other accounts’ tasks', async () => {
    const res = await create({ video_url: `${VIDEO}?sim=duration=1` });
    expect((await gw.api(null, 'GET', `/v1/videos/erase-subtitle/${res.body.id}`)).status).to.equal(401);
    expect((await gw.api(null, 'POST', '/v1/videos/erase-subtitle', { video_url: VIDEO })).status).to.equal(401);
    const other = await gw.fundedAccount(0);
    const foreign = await get(res.body.id, other.key);
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error.code).to.equal('task_not_found');
    expect((await cancel(res.body.id, other.key)).status).to.equal(404);
    expect((await get('ers_unknown')).status).to.equal(404);
    await pollUntilFinal(res.body.id);
  });

  it('honours Idempotency-Key on creation', async () => {
    const body = { video_url: `${VIDEO}?sim=duration=1`, duration_seconds: 5 };
    const first = await create(body, { 'idempotency-key': 'erase-1' });
    const frozen = (await balance()).frozen;
    const again = await create(body, { 'idempotency-key': 'erase-1' });
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect((await balance()).frozen).to.equal(frozen);
    const other = await create({ ...body, duration_seconds: 6 }, { 'idempotency-key': 'erase-1' });
    expect([other.status, other.body.error.code]).to.deep.equal([400, 'idempotency_key_reused']);
    await pollUntilFinal(first.body.id);
  });
});

describe('subtitle erase with FILE_URL_ALLOW_PRIVATE_TARGETS @integration', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ TASK_POLL_MS: '20', POLL_MIN_INTERVAL_MS_ERASE: String(POLL_MS), FILE_URL_ALLOW_PRIVATE_TARGETS: 'true' });
  });
  after(async () => gw.close());

  it('accepts a video_url on a loopback or private host when the deployment allows private targets', async () => {
    const { key } = await gw.fundedAccount(100_000_000);
    for (const video_url of ['https://127.0.0.1:8443/clip.mp4?sim=duration=1', 'https://10.0.0.7/clip.mp4?sim=duration=1']) {
      const res = await gw.api(key, 'POST', '/v1/videos/erase-subtitle', { video_url });
      expect(res.status, video_url).to.equal(200);
      const { final } = await pollTask(`erase ${res.body.id}`, () => gw.api(key, 'GET', `/v1/videos/erase-subtitle/${res.body.id}`), {
        check: (body) => expectValid(body, 'erase task'),
        isFinal: (status) => status !== 'processing',
        everyMs: POLL_MS + 15,
      });
      expect(final.status, video_url).to.equal('succeeded');
    }
    // The scheme rule still holds.
    expect((await gw.api(key, 'POST', '/v1/videos/erase-subtitle', { video_url: 'http://127.0.0.1/clip.mp4' })).status).to.equal(400);
    await expectSettledAndAuditClean(gw, [key]);
  });
});

describe('subtitle erase polling limit @integration', () => {
  let gw: TestGateway;
  const clock = new TestClock();

  before(async () => {
    // The shipped default (POLL_MIN_INTERVAL_MS_ERASE = 1000): lenient next to the published 3 to 5 s.
    // The test holds the gateway's clock while it polls twice, and moves it past the interval
    // instead of waiting it out.
    gw = await startTestGateway({ TASK_POLL_MS: '20' }, { clock: clock.now });
  });
  after(async () => gw.close());

  it('answers 429 with Retry-After when one key polls one task faster than allowed', async () => {
    const { key } = await gw.fundedAccount(100_000_000);
    const id = (await gw.api(key, 'POST', '/v1/videos/erase-subtitle', { video_url: `${VIDEO}?sim=duration=1` })).body.id as string;
    clock.hold();
    expect((await gw.api(key, 'GET', `/v1/videos/erase-subtitle/${id}`)).status).to.equal(200);
    const fast = await gw.api(key, 'GET', `/v1/videos/erase-subtitle/${id}`);
    expect(fast.status).to.equal(429);
    expect(fast.body.error.code).to.equal('polling_too_fast');
    expect(fast.headers.get('retry-after')).to.equal('1');
    clock.advance(1000);
    expect((await gw.api(key, 'GET', `/v1/videos/erase-subtitle/${id}`)).status, 'after the interval').to.equal(200);
    clock.release();
    await waitFor('billed', async () => (await gw.api(key, 'GET', '/v1/account')).body.balance.frozen === 0);
    await gw.expectAuditClean();
  });
});
