import fs from 'node:fs';
import { expect } from 'chai';
import { vodOpenapi } from '@volcengine/openapi';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { volcengineOpenapiProvider } from '../../simulator/providers/volcengine-openapi';
import { TaskRejected } from '../../src/tasks/kind';
import { Channel } from '../../src/upstreams/channel';
import type { EraseTaskAsk, EraseTaskReading } from '../../src/upstreams/erase-task';
import { EXAMPLE_CHANNELS_FILE, type ChannelEntry } from '../../src/upstreams/registry';
import type { WireTransport } from '../../src/upstreams/wire';
import {
  executionRequest,
  playInfoRequest,
  readExecution,
  readPlayUrl,
  readRunId,
  readUploadJob,
  readUploadJobState,
  startEraseRequest,
  uploadByUrlRequest,
  uploadJobRequest,
  vodSubtitleErase,
} from '../../src/upstreams/volcengine-openapi/vod-erase';
import { waitFor } from '../support/wait';
import { wireAnswer, thrown } from '../support/wire-answer';

/**
 * Subtitle erase on Volcengine VOD: the adapter against the provider's documented answers, and the
 * simulated VOD driven by Volcengine's official Node SDK (@volcengine/openapi), unchanged.
 *
 * Fixtures: GetExecution's answer example of https://www.volcengine.com/docs/4/1477170 (RunId,
 * Status, Meta, Control as published), its `Output.Task.Erase` in the structure of the official Go
 * SDK (github.com/volcengine/volcengine-go-sdk, service/vod20250101 ConvertEraseForGetExecutionOutput:
 * Duration, File {FileName, Size, Vid}); the upload states of the official Go SDK's
 * VodURLSet (volc-sdk-golang, service/vod/models/business/vod_upload.pb.go: `init, process,
 * success, fail`); GetPlayInfo's PlayInfoList items as the Node SDK's types give them.
 */

const ENVELOPE = { RequestId: '20250123100554010225146063018E0F3A', Action: 'GetExecution', Version: '2025-01-01', Service: 'vod', Region: 'cn-north-1' };
const ok = (result: unknown) => wireAnswer(200, { ResponseMetadata: ENVELOPE, Result: result });

const DOCUMENTED_EXECUTION = {
  RunId: 'c5cacd4946bd880a5fd9f74159b03ae8',
  Status: 'Success',
  Meta: { SpaceName: 'docspace', Trigger: 'API', CreateTime: '2025-01-23T10:05:54Z', StartTime: '2025-01-23T10:05:55Z', EndTime: '2025-01-23T10:08:17Z' },
  Control: { ClientToken: '1234567891012345678901234', CallbackArgs: 'Example' },
  Output: { Type: 'Task', Task: { Type: 'Erase', Erase: { Duration: 57.099, File: { Vid: 'v0d225g10064cs5n7a1jht8h5d7rxxxx', FileName: 'erase/out.mp4', Size: '10485760' } } } },
};

const ASK: EraseTaskAsk = {
  taskId: 'ers_0123abcd',
  space: 'docspace',
  videoUrl: 'https://cdn.example.com/clips/Drama%20EP1.MP4?token=x',
  regions: [
    { x: 0, y: 0.8, width: 1, height: 0.2 },
    { x: 0.1, y: 0.7, width: 0.3, height: 0.1 },
  ],
  maxSeconds: 7200,
};

/** What a call to `fn` threw or rejected with (it must fail). */
async function failureOf(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('Volcengine VOD subtitle erase adapter', () => {
  it('pulls the video into the space by URL, as the Node SDK sends UploadMediaByUrl (GET, URLSets as JSON text)', () => {
    expect(uploadByUrlRequest(ASK)).to.deep.equal({
      method: 'GET',
      path: '/',
      query: {
        Action: 'UploadMediaByUrl',
        Version: '2020-08-01',
        SpaceName: 'docspace',
        URLSets: JSON.stringify([{ SourceUrl: ASK.videoUrl, FileExtension: '.mp4', CallbackArgs: 'ers_0123abcd' }]),
      },
    });
    const bare = JSON.parse(uploadByUrlRequest({ ...ASK, videoUrl: 'https://cdn.example.com/stream/12345' }).query!.URLSets!) as { FileExtension: string }[];
    expect(bare[0]!.FileExtension, 'no extension in the path: the output format').to.equal('.mp4');
    expect(readUploadJob(ok({ Data: [{ JobId: 'e6b3b4c2a1', SourceUrl: ASK.videoUrl }] }), 'vod')).to.equal('e6b3b4c2a1');
    expect(thrown(() => readUploadJob(ok({ Data: [] }), 'vod'))).to.deep.include({ status: 502, kind: 'protocol' });
  });

  it('reads the pull: init and process pending, success with its Vid, fail and an unknown job failed', () => {
    expect(uploadJobRequest('j1')).to.deep.equal({ method: 'GET', path: '/', query: { Action: 'QueryUploadTaskInfo', Version: '2020-08-01', JobIds: 'j1' } });
    const list = (State: string, Vid = '') => ok({ Data: { MediaInfoList: [{ JobId: 'j1', SourceUrl: ASK.videoUrl, State, Vid, SpaceName: 'docspace' }], NotExistJobIds: [] } });
    expect(readUploadJobState(list('init'), 'vod', 'j1')).to.deep.equal({ state: 'pending' });
    expect(readUploadJobState(list('process'), 'vod', 'j1')).to.deep.equal({ state: 'pending' });
    expect(readUploadJobState(list('success', 'v0abc'), 'vod', 'j1'), 'no SourceInfo: length unknown').to.deep.equal({ state: 'stored', vid: 'v0abc', seconds: null });
    // The Node SDK's VodURLSet.SourceInfo (VodSourceInfo.Duration, seconds).
    const withSource = ok({ Data: { MediaInfoList: [{ JobId: 'j1', State: 'success', Vid: 'v0abc', SourceInfo: { FileType: 'video', Format: 'mp4', Duration: 9000.04, Size: 1 } }], NotExistJobIds: [] } });
    expect(readUploadJobState(withSource, 'vod', 'j1')).to.deep.equal({ state: 'stored', vid: 'v0abc', seconds: 9000.04 });
    expect(readUploadJobState(list('fail'), 'vod', 'j1').state).to.equal('failed');
    expect(readUploadJobState(ok({ Data: { MediaInfoList: [], NotExistJobIds: ['j1'] } }), 'vod', 'j1').state).to.equal('failed');
    expect(thrown(() => readUploadJobState(list('success'), 'vod', 'j1')).kind, 'success without a Vid').to.equal('protocol');
    expect(thrown(() => readUploadJobState(list('paused'), 'vod', 'j1')).kind).to.equal('protocol');
  });

  it('starts the erase of the stored video: Auto OCR of subtitles within the regions as corner ratios, the task id as ClientToken, a new Vid', () => {
    expect(startEraseRequest('v0abc', ASK)).to.deep.equal({
      method: 'POST',
      path: '/',
      query: { Action: 'StartExecution', Version: '2025-01-01' },
      body: {
        SpaceName: 'docspace',
        Input: { Type: 'Vid', Vid: 'v0abc' },
        Operation: {
          Type: 'Task',
          Task: {
            Type: 'Erase',
            Erase: {
              Mode: 'Auto',
              Auto: {
                Type: 'Subtitle',
                SubtitleFilter: {},
                Locations: [
                  { RatioLocation: { TopLeftX: 0, TopLeftY: 0.8, BottomRightX: 1, BottomRightY: 1 } },
                  // 0.1 + 0.3 and 0.7 + 0.1 without their float noise.
                  { RatioLocation: { TopLeftX: 0.1, TopLeftY: 0.7, BottomRightX: 0.4, BottomRightY: 0.8 } },
                ],
              },
              NewVid: true,
            },
          },
        },
        Control: { ClientToken: 'ers_0123abcd' },
      },
    });
    const found = startEraseRequest('v0abc', { ...ASK, regions: null }).body as { Operation: { Task: { Erase: { Auto: unknown } } } };
    expect(found.Operation.Task.Erase.Auto, 'no regions: VOD finds them').to.deep.equal({ Type: 'Subtitle', SubtitleFilter: {} });
    expect(readRunId(ok({ RunId: DOCUMENTED_EXECUTION.RunId }), 'vod')).to.equal(DOCUMENTED_EXECUTION.RunId);
  });

  it("reads GetExecution's documented statuses; Success gives the Erase output and its Vid", () => {
    expect(executionRequest('r1')).to.deep.equal({ method: 'GET', path: '/', query: { Action: 'GetExecution', Version: '2025-01-01', RunId: 'r1' } });
    expect(readExecution(ok(DOCUMENTED_EXECUTION), 'vod')).to.deep.equal({ state: 'succeeded', outputVid: 'v0d225g10064cs5n7a1jht8h5d7rxxxx', erase: DOCUMENTED_EXECUTION.Output.Task.Erase });
    const { Output: _output, ...unfinished } = DOCUMENTED_EXECUTION;
    expect(readExecution(ok({ ...unfinished, Status: 'PendingStart' }), 'vod')).to.deep.equal({ state: 'pending', upstreamStatus: 'queued' });
    expect(readExecution(ok({ ...unfinished, Status: 'Running' }), 'vod')).to.deep.equal({ state: 'pending', upstreamStatus: 'running' });
    expect(readExecution(ok({ ...unfinished, Status: 'Failed', Code: 'InvalidVideo' }), 'vod')).to.deep.equal({ state: 'failed', error: { code: 'InvalidVideo', message: 'the provider could not erase the subtitles' } });
    expect(readExecution(ok({ ...unfinished, Status: 'Failed' }), 'vod')).to.deep.include({ state: 'failed' });
    expect(readExecution(ok({ ...unfinished, Status: 'Terminated' }), 'vod')).to.deep.equal({ state: 'failed', error: { code: 'upstream_task_cancelled', message: 'the provider terminated the erase' } });
    expect(thrown(() => readExecution(ok({ ...unfinished, Status: 'Success' }), 'vod')).kind, 'Success without its output').to.equal('protocol');
    expect(thrown(() => readExecution(ok({ ...unfinished, Status: 'Paused' }), 'vod')).kind).to.equal('protocol');
  });

  it('fetches the erased copy through GetPlayInfo, an MP4 first; none yet is no link', () => {
    expect(playInfoRequest('v0out')).to.deep.equal({ method: 'GET', path: '/', query: { Action: 'GetPlayInfo', Version: '2020-08-01', Vid: 'v0out', NeedOriginal: '1', Ssl: '1' } });
    const item = (Format: string, MainPlayUrl: string) => ({ FileId: 'f', FileType: 'video', Format, Codec: 'h264', Definition: '720p', MainPlayUrl, BackupPlayUrl: '', Size: 1 });
    expect(readPlayUrl(ok({ Vid: 'v0out', PlayInfoList: [item('hls', 'https://cdn.example.com/a.m3u8'), item('mp4', 'https://cdn.example.com/a.mp4')] }), 'vod')).to.equal('https://cdn.example.com/a.mp4');
    expect(readPlayUrl(ok({ Vid: 'v0out', PlayInfoList: [item('hls', 'https://cdn.example.com/a.m3u8')] }), 'vod')).to.equal('https://cdn.example.com/a.m3u8');
    expect(readPlayUrl(ok({ Vid: 'v0out', PlayInfoList: [] }), 'vod')).to.equal(null);
  });

  it('downloads only https links on public hosts, or links on the channel\'s own origin; play links all of another kind fail the task', async () => {
    const item = (MainPlayUrl: string, Format = 'mp4') => ({ FileId: 'f', FileType: 'video', Format, MainPlayUrl });
    const links = (...urls: string[]) => ok({ Vid: 'v0out', PlayInfoList: urls.map((u) => item(u)) });
    expect(readPlayUrl(links('http://127.0.0.1:9000/a.mp4', 'https://cdn.example.com/a.mp4'), 'vod'), 'the fetchable one').to.equal('https://cdn.example.com/a.mp4');
    expect(readPlayUrl(links('http://127.0.0.1:9000/sim/a.mp4'), 'vod', 'http://127.0.0.1:9000'), "the channel's own origin").to.equal('http://127.0.0.1:9000/sim/a.mp4');
    for (const url of ['http://cdn.example.com/a.mp4', 'https://127.0.0.1/a.mp4', 'https://10.0.0.8/a.mp4', 'https://169.254.169.254/latest', 'https://localhost/a.mp4', 'file:///etc/passwd', 'http://127.0.0.1:9001/a.mp4']) {
      const err = await failureOf(() => readPlayUrl(links(url), 'vod', 'http://127.0.0.1:9000'));
      expect(err, url).to.be.instanceOf(TaskRejected);
      expect((err as TaskRejected).error.code, url).to.equal('upstream_link_refused');
    }
  });

  it('fails a task whose upstream id it never recorded (TaskRejected: failed at once, released), without calling VOD', async () => {
    const sent: unknown[] = [];
    const transport: WireTransport = { name: 'vod', call: async (request) => (sent.push(request), ok({})) };
    const err = await failureOf(() => vodSubtitleErase.get(transport, 'job:123', ASK));
    expect(err).to.be.instanceOf(TaskRejected);
    expect((err as TaskRejected).error.code).to.equal('upstream_id_unknown');
    expect(sent).to.deep.equal([]);
  });

  it('maps the OpenAPI error envelope: a credential refusal hides the provider\'s words, a refusal keeps its Code', () => {
    const refusal = (status: number, Code: string) => wireAnswer(status, { ResponseMetadata: { ...ENVELOPE, Error: { Code, Message: `refused: ${Code}` } } });
    expect(thrown(() => readRunId(refusal(403, 'AccessDenied'), 'vod'))).to.deep.include({ status: 403, code: 'upstream_auth_failed' });
    expect(thrown(() => readRunId(refusal(400, 'InvalidParameter'), 'vod'))).to.deep.include({ status: 400, code: 'InvalidParameter' });
    expect(vodSubtitleErase.cancel, 'VOD publishes no way to stop an execution').to.equal(null);
  });
});

/** The placeholder key of the checked-in channels file's `vod` entry: the one the simulated provider knows. */
function vodKey(): { accessKeyId: string; secretKey: string } {
  const entry = (JSON.parse(fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8')) as ChannelEntry[]).find((e) => e.name === 'vod');
  return { accessKeyId: entry!.volcengine!.access_key_id!, secretKey: entry!.volcengine!.secret_access_key! };
}

describe('simulated Volcengine VOD through the official @volcengine/openapi SDK', () => {
  let sim: RunningSimulator;
  let vod: InstanceType<typeof vodOpenapi.VodService>;

  before(async () => {
    sim = await startSimulator();
    // The provider's routes at the real host's root path too (the SDK's VodService calls `/`), one
    // state shared with their place under /volcengine/, where the links it answers point.
    const routes = volcengineOpenapiProvider.routes();
    sim.addRoutes([...routes, ...routes.map((route) => ({ ...route, path: `/volcengine${route.path}` }))]);
    vod = new vodOpenapi.VodService({ serviceName: 'vod', host: new URL(sim.url).host, protocol: 'http:', ...vodKey() });
  });
  after(async () => sim.close());

  const startExecution = () => vod.createJSONAPI('StartExecution', { Version: '2025-01-01' });
  const getExecution = () => vod.createAPI<{ RunId: string }, Record<string, any>>('GetExecution', { Version: '2025-01-01' });

  async function storedVid(sourceUrl: string): Promise<string> {
    const uploaded = await vod.UploadMediaByUrl({ SpaceName: 'space-a', URLSets: [{ SourceUrl: sourceUrl, FileExtension: '.mp4' }] });
    expect(uploaded.ResponseMetadata).to.deep.include({ Action: 'UploadMediaByUrl', Version: '2020-08-01', Service: 'vod', Region: 'cn-north-1' });
    const jobId = uploaded.Result!.Data![0]!.JobId!;
    return waitFor('the pull stored', async () => {
      const info = (await vod.QueryUploadTaskInfo({ JobIds: jobId })).Result!.Data!.MediaInfoList![0]!;
      expect(['process', 'success']).to.include(info.State);
      return info.State === 'success' ? info.Vid! : null;
    });
  }

  it('pulls a video, erases its subtitles, reads the execution to Success and plays the erased copy', async () => {
    const vid = await storedVid('https://cdn.example.com/clips/a.mp4?sim=duration=3');
    const started = await startExecution()({
      Input: { Type: 'Vid', Vid: vid },
      Operation: { Type: 'Task', Task: { Type: 'Erase', Erase: { Mode: 'Auto', Auto: { Type: 'Subtitle', SubtitleFilter: {} }, NewVid: true } } },
      Control: { ClientToken: 'sdk-1' },
    });
    expect(started.ResponseMetadata.Error).to.equal(undefined);
    const runId = (started.Result as { RunId: string }).RunId;
    const done = await waitFor('the execution finished', async () => {
      const r = (await getExecution()({ RunId: runId })).Result!;
      expect(['PendingStart', 'Running', 'Success']).to.include(r.Status);
      return r.Status === 'Success' ? r : null;
    });
    expect(done).to.deep.include({ RunId: runId, SpaceName: 'space-a', Control: { ClientToken: 'sdk-1' } });
    const erase = done.Output.Task.Erase as { Duration: number; File: { Vid: string; FileName: string; Size: string } };
    expect(erase.Duration).to.equal(3);
    expect(erase.File.Vid).to.not.equal(vid);

    const play = await vod.GetPlayInfo({ Vid: erase.File.Vid });
    const url = play.Result!.PlayInfoList![0]!.MainPlayUrl;
    const file = await fetch(url);
    expect([file.status, file.headers.get('content-type')]).to.deep.equal([200, 'video/mp4']);
    expect(String((await file.arrayBuffer()).byteLength)).to.equal(erase.File.Size);
  });

  it('holds an execution until released, fails one on `sim=fail`, fails a pull on `sim=upload-fail`', async () => {
    const erase = { Type: 'Task', Task: { Type: 'Erase', Erase: { Mode: 'Manual', Manual: { Locations: [{ RatioLocation: { TopLeftX: 0, TopLeftY: 0.8, BottomRightX: 1, BottomRightY: 1 } }] } } } };
    const held = await startExecution()({ Input: { Type: 'Vid', Vid: await storedVid('https://cdn.example.com/b.mp4?sim=hold') }, Operation: erase });
    const runId = (held.Result as { RunId: string }).RunId;
    expect((await getExecution()({ RunId: runId })).Result!.Status).to.equal('PendingStart');
    expect((await fetch(`${sim.url}/volcengine/sim/vod/executions/${runId}/release`, { method: 'POST' })).status).to.equal(200);
    expect((await getExecution()({ RunId: runId })).Result!.Status).to.equal('Success');

    const failing = await startExecution()({ Input: { Type: 'Vid', Vid: await storedVid('https://cdn.example.com/c.mp4?sim=fail,delay=10') }, Operation: erase });
    const failedRun = (failing.Result as { RunId: string }).RunId;
    const failed = await waitFor('the execution failed', async () => {
      const r = (await getExecution()({ RunId: failedRun })).Result!;
      return r.Status === 'Failed' ? r : null;
    });
    expect(failed.Code).to.equal('SubtitleEraseFailed');
    expect(failed.Output).to.equal(undefined);

    const jobId = (await vod.UploadMediaByUrl({ SpaceName: 'space-a', URLSets: [{ SourceUrl: 'https://cdn.example.com/d.mp4?sim=upload-fail' }] })).Result!.Data![0]!.JobId!;
    await waitFor('the pull failed', async () => (await vod.QueryUploadTaskInfo({ JobIds: jobId })).Result!.Data!.MediaInfoList![0]!.State === 'fail');
    expect((await vod.QueryUploadTaskInfo({ JobIds: 'no-such-job' })).Result!.Data!.NotExistJobIds).to.deep.equal(['no-such-job']);
  });

  it('reports the stored video\'s length in SourceInfo.Duration (`sim=duration`), as the SDK types QueryUploadTaskInfo', async () => {
    const jobId = (await vod.UploadMediaByUrl({ SpaceName: 'space-a', URLSets: [{ SourceUrl: 'https://cdn.example.com/long.mp4?sim=duration=9000' }] })).Result!.Data![0]!.JobId!;
    const info = await waitFor('the pull stored', async () => {
      const item = (await vod.QueryUploadTaskInfo({ JobIds: jobId })).Result!.Data!.MediaInfoList![0]!;
      return item.State === 'success' ? item : null;
    });
    expect(info.SourceInfo?.Duration).to.equal(9000);
  });

  it('answers a repeated StartExecution with the unfinished run\'s RunId, as VOD documents its idempotency; a new run once that one finished', async () => {
    const vid = await storedVid('https://cdn.example.com/f.mp4?sim=hold');
    const operation = { Type: 'Task', Task: { Type: 'Erase', Erase: { Mode: 'Auto', Auto: { Type: 'Subtitle', SubtitleFilter: {} }, NewVid: true } } };
    const start = async (params: Record<string, unknown>) => ((await startExecution()(params)).Result as { RunId: string }).RunId;
    const params = { SpaceName: 'space-a', Input: { Type: 'Vid', Vid: vid }, Operation: operation, Control: { ClientToken: 'ers_same' } };
    const first = await start(params);
    expect(await start(params), 'the same request while the run is unfinished').to.equal(first);
    // Members in another order are the same request.
    expect(await start({ Control: { ClientToken: 'ers_same' }, Operation: operation, Input: { Vid: vid, Type: 'Vid' }, SpaceName: 'space-a' })).to.equal(first);
    const otherToken = await start({ ...params, Control: { ClientToken: 'ers_other' } });
    const otherOperation = await start({ ...params, Operation: { Type: 'Task', Task: { Type: 'Erase', Erase: { Mode: 'Auto', Auto: { Type: 'Text' }, NewVid: true } } } });
    expect(new Set([first, otherToken, otherOperation]).size, 'another ClientToken or Operation is another run').to.equal(3);
    const otherSpace = await startExecution()({ ...params, SpaceName: 'space-b' });
    expect(otherSpace.ResponseMetadata.Error, "a Vid of another space than SpaceName").to.deep.include({ Code: 'NotFound.Vid' });

    expect((await fetch(`${sim.url}/volcengine/sim/vod/executions/${first}/release`, { method: 'POST' })).status).to.equal(200);
    expect((await getExecution()({ RunId: first })).Result!.Status).to.equal('Success');
    expect(await start(params), 'after the first run finished: a second run (billed again)').to.not.equal(first);
  });

  describe('the adapter over a signed channel', () => {
    let channel: Channel;
    before(() => {
      const { accessKeyId, secretKey } = vodKey();
      channel = new Channel({ name: 'vod', protocol: 'volcengine_openapi', base_url: `${sim.url}/volcengine`, auth: { kind: 'volcengine', credentials: { accessKeyId, secretAccessKey: secretKey, region: 'cn-north-1', service: 'vod' } }, timeout_ms: 10_000, max_concurrency: 4 });
    });
    after(async () => channel.close());

    /** The channel, recording the Action of every call. */
    const recorded = (actions: string[]): WireTransport => ({ name: channel.name, origin: channel.origin, call: (request, signal) => (actions.push(request.query!.Action!), channel.call(request, signal)) });

    /** Submits the ask and polls the pull until VOD has stored the video: the reading that follows it. */
    async function pulled(ask: EraseTaskAsk, transport: WireTransport): Promise<{ upstreamId: string; reading: EraseTaskReading }> {
      const { upstreamId } = await vodSubtitleErase.submit(transport, ask);
      const reading = await waitFor('the pull stored', async () => {
        const r = await vodSubtitleErase.get(transport, upstreamId, ask);
        return r.state === 'pending' && r.upstreamId === undefined ? null : r;
      });
      return { upstreamId, reading };
    }

    it('starts one run for a crash\'s repeat: the poll of the stored upload, made twice, gets one RunId', async () => {
      const actions: string[] = [];
      const ask = { ...ASK, taskId: 'ers_crash', space: 'space-a', videoUrl: 'https://cdn.example.com/g.mp4?sim=hold' };
      const { upstreamId, reading } = await pulled(ask, recorded(actions));
      expect(reading).to.deep.include({ state: 'pending', upstreamStatus: 'queued' });
      const runId = (reading as { upstreamId: string }).upstreamId;
      expect(runId).to.match(/^run:[0-9a-f]{32}$/);
      // The gateway crashed before recording the RunId: the next poll reads the upload again.
      expect(await vodSubtitleErase.get(recorded(actions), upstreamId, ask)).to.deep.equal(reading);
      expect(actions.filter((a) => a === 'StartExecution')).to.have.length(2);
      expect(((await (await fetch(`${sim.url}/volcengine/sim/vod/executions/${runId.slice(4)}`)).json()) as { Phase: string }).Phase).to.equal('queued');
    });

    it('fails a video longer than the model takes with video_too_long once VOD reports its length, never starting the erase', async () => {
      const actions: string[] = [];
      const { reading } = await pulled({ ...ASK, taskId: 'ers_long', space: 'space-a', videoUrl: 'https://cdn.example.com/h.mp4?sim=duration=9000' }, recorded(actions));
      expect(reading).to.deep.equal({ state: 'failed', error: { code: 'video_too_long', message: 'the video at video_url lasts 9000 s; at most 7200 s can be erased' } });
      expect(actions).to.not.include('StartExecution');
      const { reading: fits } = await pulled({ ...ASK, taskId: 'ers_fits', space: 'space-a', videoUrl: 'https://cdn.example.com/i.mp4?sim=duration=7200' }, recorded(actions));
      expect(fits.state, 'exactly the most').to.equal('pending');
    });
  });

  it('refuses a box outside the frame, an unknown Vid, a wrong secret, and a request signed for another service', async () => {
    const vid = await storedVid('https://cdn.example.com/e.mp4');
    const outside = await startExecution()({
      Input: { Type: 'Vid', Vid: vid },
      Operation: { Type: 'Task', Task: { Type: 'Erase', Erase: { Mode: 'Auto', Auto: { Type: 'Subtitle', Locations: [{ RatioLocation: { TopLeftX: 0.5, TopLeftY: 0.8, BottomRightX: 1.2, BottomRightY: 1 } }] } } } },
    });
    expect(outside.ResponseMetadata.Error).to.deep.include({ Code: 'InvalidParameter' });
    const unknown = await vod.GetPlayInfo({ Vid: 'v0nothing' });
    expect(unknown.ResponseMetadata.Error).to.deep.include({ Code: 'NotFound.Vid' });
    const wrong = new vodOpenapi.VodService({ serviceName: 'vod', host: new URL(sim.url).host, protocol: 'http:', accessKeyId: vodKey().accessKeyId, secretKey: 'not-the-secret' });
    expect((await wrong.GetPlayInfo({ Vid: vid })).ResponseMetadata.Error).to.deep.include({ Code: 'SignatureDoesNotMatch' });
    // Signed for Ark's service: VOD's Actions are not Ark's.
    const asArk = new vodOpenapi.VodService({ host: new URL(sim.url).host, protocol: 'http:', serviceName: 'ark', ...vodKey() });
    expect((await asArk.GetPlayInfo({ Vid: vid })).ResponseMetadata.Error).to.deep.include({ Code: 'InvalidActionOrVersion' });
  });
});
