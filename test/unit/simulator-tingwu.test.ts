import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { $OpenApiUtil } from '@alicloud/openapi-core';
import Tingwu, { CreateTaskRequest, type CreateTaskRequestParameters } from '@alicloud/tingwu20230930';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { PACKAGE_ROOT } from '../../src/package-root';
import { Channel } from '../../src/upstreams/channel';
import type { MinutesTaskAsk } from '../../src/upstreams/minutes-task';
import { EXAMPLE_CHANNELS_FILE, type ChannelEntry } from '../../src/upstreams/registry';
import { tingwuMinutes, transcriptOf } from '../../src/upstreams/tingwu/offline-tasks';
import { upstreamErrorOf } from '../support/wire-answer';
import { waitFor } from '../support/wait';

/**
 * The simulated Tingwu (simulator/providers/tingwu.ts) driven by Alibaba Cloud's official Node SDK,
 * `@alicloud/tingwu20230930`, unchanged but for its `endpoint` (the simulator's host) and
 * `protocol: 'http'`: the simulator accepting the SDK's signed CreateTask and GetTaskInfo and
 * answering what the SDK reads proves it speaks Tingwu's protocol; the gateway's adapter, over its
 * own ACS3-signing channel, then reads the same provider.
 */

/** The checked-in channels file's tingwu AccessKey and the catalog's AppKey: what the simulated Tingwu knows. */
function exampleAccount(): { accessKeyId: string; accessKeySecret: string; appKey: string } {
  const entry = (JSON.parse(fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8')) as ChannelEntry[]).find((e) => e.protocol === 'tingwu')!;
  const catalog = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'src/billing/catalog.json'), 'utf8')) as { models: { id: string; capabilities: { upstream_model?: string } }[] };
  return { accessKeyId: entry.alibaba!.access_key_id!, accessKeySecret: entry.alibaba!.access_key_secret!, appKey: catalog.models.find((m) => m.id === 'partner-minutes')!.capabilities.upstream_model! };
}

/** The error an SDK call was refused with (Alibaba Cloud's ClientError or ServerError). */
async function sdkRefusal(call: () => Promise<unknown>): Promise<{ code: string; statusCode: number }> {
  try {
    await call();
  } catch (err) {
    return err as { code: string; statusCode: number };
  }
  return expect.fail('expected the SDK call to be refused');
}

describe('simulated Tingwu offline tasks through the official @alicloud/tingwu20230930 SDK', () => {
  let sim: RunningSimulator;
  const account = exampleAccount();
  const channels: Channel[] = [];

  before(async () => {
    sim = await startSimulator();
  });
  after(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await sim.close();
  });

  const sdk = (credentials: { accessKeyId: string; accessKeySecret: string } = account) =>
    new Tingwu(new $OpenApiUtil.Config({ ...credentials, endpoint: new URL(sim.url).host, protocol: 'http' }));
  const media = (name: string, params: Record<string, string> = {}) => `${sim.url}/sim/media/${name}?${new URLSearchParams(params)}`;
  const offline = (fileUrl: string, parameters: Partial<CreateTaskRequestParameters> = {}, appKey = account.appKey) =>
    new CreateTaskRequest({ type: 'offline', appKey, input: { sourceLanguage: 'cn', fileUrl, taskKey: 'sdk-task-1' }, parameters });

  it('creates a task with every extra, reads it until COMPLETED and fetches its result files in Tingwu’s structures', async () => {
    const client = sdk();
    const created = await client.createTask(
      offline(media('board.m4a', { sim_duration_ms: '95000' }), {
        transcription: { diarizationEnabled: true, diarization: { speakerCount: 2 } },
        summarizationEnabled: true,
        summarization: { types: ['Paragraph', 'QuestionsAnswering'] },
        autoChaptersEnabled: true,
        meetingAssistanceEnabled: true,
        meetingAssistance: { types: ['Actions'] },
        translationEnabled: true,
        translation: { targetLanguages: ['en'] },
      } as Partial<CreateTaskRequestParameters>),
    );
    expect(created.statusCode).to.equal(200);
    expect(created.body).to.deep.include({ code: '0' });
    expect(created.body!.data).to.deep.include({ taskKey: 'sdk-task-1', taskStatus: 'ONGOING' });
    const taskId = created.body!.data!.taskId!;
    expect(taskId).to.match(/^[0-9a-f]{32}$/);

    const done = await waitFor('the task COMPLETED', async () => {
      const info = (await client.getTaskInfo(taskId)).body!.data!;
      return info.taskStatus === 'COMPLETED' ? info : null;
    });
    const links = done.result!;
    const file = async (link: string | undefined) => (await fetch(link!)).json() as Promise<any>;
    const transcription = await file(links.transcription);
    expect(transcription.TaskId).to.equal(taskId);
    expect(transcription.Transcription.AudioInfo).to.deep.include({ Duration: 95_000, Language: 'cn' });
    const paragraph = transcription.Transcription.Paragraphs[0];
    expect(paragraph).to.have.keys(['ParagraphId', 'SpeakerId', 'Words']);
    expect(paragraph.Words[0]).to.have.keys(['Id', 'SentenceId', 'Start', 'End', 'Text']);
    const chapters = (await file(links.autoChapters)).AutoChapters;
    expect(chapters[0]).to.have.keys(['Id', 'Start', 'End', 'Headline', 'Summary']);
    const summarization = (await file(links.summarization)).Summarization;
    expect(summarization.ParagraphSummary).to.include('项目例会');
    expect(summarization.QuestionsAnsweringSummary[0]).to.have.keys(['Question', 'SentenceIdsOfQuestion', 'Answer', 'SentenceIdsOfAnswer']);
    expect((await file(links.meetingAssistance)).MeetingAssistance.Actions[0]).to.have.keys(['Id', 'SentenceId', 'Start', 'End', 'Text']);
    expect((await file(links.translation)).Translation.Paragraphs[0].Sentences[0]).to.deep.include({ SentenceId: 1, Text: "Good morning everyone, let's start the weekly project sync." });

    // What the gateway's adapter makes of the file the SDK's task linked.
    const transcript = transcriptOf(transcription.Transcription, { language: 'zh_cn', speakerIdentification: true, wordTimestamps: false } as MinutesTaskAsk);
    expect(transcript.durationMs).to.equal(95_000);
    expect(transcript.speakers.map((s) => s.id)).to.deep.equal(['1', '2']);
    expect(transcript.segments[0]!.text).to.equal('大家早上好，我们开始本周的项目例会。');
    expect(transcript.segments[transcript.segments.length - 1]!.endMs).to.equal(95_000);

    // A presigned link changed is refused, as an object store refuses it.
    expect((await fetch(links.transcription!.replace('Expires=', 'Expires=1'))).status).to.equal(403);
    // A task Tingwu does not know is INVALID.
    expect((await client.getTaskInfo('0123456789abcdef0123456789abcdef')).body!.data).to.deep.include({ taskStatus: 'INVALID' });
  });

  it('links the transcription of an ONGOING task once transcribed, and fails a file it cannot read with Tingwu’s code', async () => {
    const client = sdk();
    const held = (await client.createTask(offline(media('offsite.mp3', { sim_duration_ms: '7300000', sim: 'asr_hold' })))).body!.data!.taskId!;
    const ongoing = await waitFor('the transcription linked', async () => {
      const info = (await client.getTaskInfo(held)).body!.data!;
      return info.result?.transcription ? info : null;
    });
    expect(ongoing.taskStatus).to.equal('ONGOING');
    expect(((await (await fetch(ongoing.result!.transcription!)).json()) as any).Transcription.AudioInfo.Duration).to.equal(7_300_000);

    const failing = (await client.createTask(offline(media('broken.mp3', { sim: 'asr_fail', sim_asr_delay_ms: '0' })))).body!.data!.taskId!;
    const failed = await waitFor('the task FAILED', async () => {
      const info = (await client.getTaskInfo(failing)).body!.data!;
      return info.taskStatus === 'FAILED' ? info : null;
    });
    expect(failed).to.deep.include({ errorCode: 'TSC.AudioFormat', errorMessage: 'Audio format invalid.' });
  });

  it('refuses a wrong secret, an unknown AccessKey, an unknown AppKey, a refused file, two target languages, and answers 503 when unavailable, as Tingwu does', async () => {
    const file = media('a.mp3');
    expect(await sdkRefusal(() => sdk({ ...account, accessKeySecret: 'not-the-secret' }).createTask(offline(file)))).to.include({ code: 'SignatureDoesNotMatch', statusCode: 400 });
    expect(await sdkRefusal(() => sdk({ ...account, accessKeyId: 'LTAIunknown' }).getTaskInfo('x'))).to.include({ code: 'InvalidAccessKeyId.NotFound', statusCode: 404 });
    expect(await sdkRefusal(() => sdk().createTask(offline(file, {}, 'someone-elses-app-key')))).to.include({ code: 'BRK.InvalidAppKey', statusCode: 400 });
    expect(await sdkRefusal(() => sdk().createTask(offline(media('a.mp3', { sim: 'asr_reject' }))))).to.include({ code: 'BRK.InvalidAudioFormat', statusCode: 400 });
    expect(await sdkRefusal(() => sdk().createTask(offline(file, { translationEnabled: true, translation: { targetLanguages: ['en', 'ja'] } } as Partial<CreateTaskRequestParameters>)))).to.include({
      code: 'BRK.InvalidTranslationLanguage',
      statusCode: 400,
    });
    expect(await sdkRefusal(() => sdk().createTask(offline(media('a.mp3', { sim: 'asr_unavailable' }))))).to.include({ code: 'ServiceUnavailable', statusCode: 503 });
  });

  describe('the gateway’s adapter over its own ACS3-signing channel', () => {
    const channelWith = (nonce?: () => string) => {
      const channel = new Channel(
        { name: 'tingwu', protocol: 'tingwu', base_url: sim.url, auth: { kind: 'acs3', credentials: { accessKeyId: account.accessKeyId, accessKeySecret: account.accessKeySecret } }, timeout_ms: 5_000, max_concurrency: 4 },
        undefined,
        undefined,
        nonce,
      );
      channels.push(channel);
      return channel;
    };
    const ask: MinutesTaskAsk = {
      taskId: 'mins_gw',
      model: account.appKey,
      fileUrl: '',
      fileType: 'audio',
      fileBytes: null,
      language: 'en_us',
      speakerIdentification: true,
      numberOfSpeakers: null,
      hotWords: null,
      wordTimestamps: true,
      extras: { all: false, features: ['chapters', 'qa'], targetLang: null },
    };

    it('submits and reads a task to its transcript and extras', async () => {
      const channel = channelWith();
      const mine = { ...ask, fileUrl: media('talk.mp3', { sim_duration_ms: '61000' }) };
      const { upstreamId } = await tingwuMinutes.submit(channel, mine);
      const reading = await waitFor('the task read as succeeded', async () => {
        const r = await tingwuMinutes.get(channel, upstreamId, mine);
        return r.state === 'succeeded' ? r : null;
      });
      expect(reading.transcript).to.deep.include({ durationMs: 61_000, language: 'en_us' });
      expect(reading.transcript.speakers.map((s) => s.displayName)).to.deep.equal(['Speaker 1', 'Speaker 2', 'Speaker 3']);
      expect(Object.keys(reading.extras)).to.deep.equal(['chapters', 'qa']);
      expect((reading.extras.qa as any[])[0].Answer).to.include('plan B');
    });

    it('a nonce sent twice is refused by the provider, read as transient; a wrong AppKey is the operator’s to mend', async () => {
      const pinned = channelWith(() => 'the-same-nonce-every-time');
      expect(await tingwuMinutes.get(pinned, 'unknown-task', ask)).to.deep.equal({ state: 'failed', error: { code: 'upstream_task_invalid', message: 'Tingwu reports task unknown-task invalid' } });
      expect(await upstreamErrorOf(() => tingwuMinutes.get(pinned, 'unknown-task', ask))).to.include({ status: 502, code: 'SignatureNonceUsed' });
      expect(await upstreamErrorOf(() => tingwuMinutes.submit(channelWith(), { ...ask, model: 'not-a-project', fileUrl: media('a.mp3') }))).to.include({ status: 401, code: 'upstream_auth_failed' });
    });
  });
});
