import fs from 'node:fs';
import { expect } from 'chai';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { Channel } from '../../src/upstreams/channel';
import type { MinutesTaskAsk } from '../../src/upstreams/minutes-task';
import { EXAMPLE_CHANNELS_FILE } from '../../src/upstreams/registry';
import { flashRecognition, queryRecognition, readRecognition, submitRefusal, submitRecognition, volcengineSpeechMinutes } from '../../src/upstreams/volcengine-speech/recording-recognition';
import type { WireRequest } from '../../src/upstreams/wire';
import { waitFor } from '../support/wait';
import { upstreamErrorOf } from '../support/wire-answer';

/**
 * The simulated Volcengine speech provider (simulator/providers/volcengine-speech.ts) driven by the
 * gateway's own adapter over a real channel (there is no official Node SDK of the recording
 * recognition; the adapter's fixtures are the reference's examples, volcengine-speech-recognition.test.ts):
 * it speaks what the adapter reads, checks the credentials, resources and headers the reference
 * names, keeps one task per request id, and refuses what flash's limits exclude.
 */
describe('upstream simulator: Volcengine big-model recording recognition', () => {
  let sim: RunningSimulator;
  let speech: Channel;
  let headers: Record<string, string>;
  const channelOf = (auth: Record<string, string>) =>
    new Channel({ name: 'volc-speech', protocol: 'volcengine_speech', base_url: `${sim.url}/openspeech/api/v3`, auth: { kind: 'headers', headers: auth }, timeout_ms: 5_000, max_concurrency: 4 });
  before(async () => {
    sim = await startSimulator();
    const entries = JSON.parse(fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8')) as { protocol?: string; headers?: Record<string, string> }[];
    headers = Object.fromEntries(Object.entries(entries.find((e) => e.protocol === 'volcengine_speech')!.headers!).map(([k, v]) => [k.toLowerCase(), v]));
    speech = channelOf(headers);
  });
  after(async () => {
    await speech.close();
    await sim.close();
  });

  let n = 0;
  const ask = (params: Record<string, string> = {}, over: Partial<MinutesTaskAsk> = {}): MinutesTaskAsk => ({
    taskId: `mins_sim_${++n}`,
    model: 'volc.bigasr.auc',
    fileUrl: `https://media.example/meeting.mp3?${new URLSearchParams({ sim_duration_ms: '30000', sim_asr_delay_ms: '0', ...params })}`,
    fileType: 'mp3',
    fileBytes: 300_000_000,
    language: 'en_us',
    speakerIdentification: true,
    numberOfSpeakers: null,
    hotWords: ['Kubernetes'],
    wordTimestamps: true,
    extras: null,
    ...over,
  });
  const status = async (request: WireRequest) => {
    const answer = await speech.call(request);
    return [answer.status, answer.headers['x-api-status-code'], answer.headers['x-api-message']];
  };

  it('submits (empty body, 20000000 in the headers with a log id), then queries to the transcript with speakers and words', async () => {
    const a = ask({ sim_asr_delay_ms: '300' });
    const submitted = await speech.call(submitRecognition(a));
    expect([submitted.status, submitted.text(), submitted.headers['x-api-status-code'], submitted.headers['x-api-message']]).to.deep.equal([200, '', '20000000', 'OK']);
    expect(submitted.headers['x-tt-logid']).to.match(/^\d{14}[0-9A-F]{20}$/);
    expect(await volcengineSpeechMinutes.get(speech, a.taskId, a)).to.have.property('state', 'pending');
    const done = await waitFor('the recognition done', async () => {
      const reading = await volcengineSpeechMinutes.get(speech, a.taskId, a);
      return reading.state !== 'pending' ? reading : null;
    });
    if (done.state !== 'succeeded') throw new Error(JSON.stringify(done));
    expect(done.transcript.durationMs).to.equal(30_000);
    expect(done.transcript.speakers.map((s) => s.displayName)).to.deep.equal(['Speaker 1', 'Speaker 2', 'Speaker 3']);
    expect(done.transcript.segments[0]).to.deep.include({ id: 'seg-1', startMs: 0, speakerId: 'spk-1' });
    expect(done.transcript.segments[0]!.text).to.match(/^Good morning everyone/);
    expect(done.transcript.segments[0]!.words!.length).to.be.greaterThan(3);
  });

  it('answers queued (20000002) for the first fifth of the processing time, then processing (20000001), with {}', async () => {
    const slow = ask({ sim_asr_delay_ms: '600000' });
    const held = ask({ sim: 'asr_hold' });
    for (const a of [slow, held]) expect(submitRefusal(await speech.call(submitRecognition(a)), 'volc-speech')).to.equal(null);
    const queued = await speech.call(queryRecognition(slow.taskId, slow));
    expect([queued.headers['x-api-status-code'], queued.json()]).to.deep.equal(['20000002', {}]);
    expect(await volcengineSpeechMinutes.get(speech, held.taskId, held)).to.deep.equal({ state: 'pending', upstreamStatus: 'running', durationMs: null });
  });

  it('keeps one task per request id: a repeat is refused (45000001), which the adapter takes as submitted since the query knows the task', async () => {
    const a = ask();
    expect(submitRefusal(await speech.call(submitRecognition(a)), 'volc-speech')).to.equal(null);
    expect(await status(submitRecognition(a))).to.deep.equal([400, '45000001', `duplicate request: X-Api-Request-Id ${a.taskId} was submitted before`]);
    expect(await volcengineSpeechMinutes.submit(speech, a)).to.deep.equal({ upstreamId: a.taskId });
    expect(await (await fetch(`${sim.url}/openspeech/api/v3/sim/recognitions/${a.taskId}`)).json()).to.deep.equal({ submit: 3, query: 1, flash: 0 });
    expect(await status(queryRecognition('mins_never_submitted', a))).to.deep.equal([400, '45000001', 'no task with X-Api-Request-Id mins_never_submitted']);
  });

  it('refuses keys other than the channels file\'s (45000010, 401), a resource not granted (45000030, 403): the adapter reads both as the gateway\'s credentials refused', async () => {
    const wrong = channelOf({ ...headers, 'x-api-access-key': 'not-the-token' });
    try {
      const answer = await wrong.call(submitRecognition(ask()));
      expect([answer.status, answer.headers['x-api-status-code']]).to.deep.equal([401, '45000010']);
      const err = await upstreamErrorOf(() => volcengineSpeechMinutes.submit(wrong, ask()));
      expect([err.status, err.code]).to.deep.equal([401, 'upstream_auth_failed']);
    } finally {
      await wrong.close();
    }
    const flashResourceOnStandard = { ...submitRecognition(ask()), headers: { ...submitRecognition(ask()).headers, 'x-api-resource-id': 'volc.bigasr.auc_turbo' } };
    expect(await status(flashResourceOnStandard)).to.deep.equal([403, '45000030', '[resource_id=volc.bigasr.auc_turbo] requested resource not granted']);
    const err = await upstreamErrorOf(() => volcengineSpeechMinutes.submit(speech, ask({}, { model: 'volc.unknown.auc' })));
    expect([err.status, err.code]).to.deep.equal([403, 'upstream_auth_failed']);
  });

  it('checks the headers and fields the reference requires: X-Api-Sequence -1, model_name bigmodel, a listed format', async () => {
    const base = submitRecognition(ask());
    expect(await status({ ...base, headers: { ...base.headers, 'x-api-sequence': '1' } })).to.deep.equal([400, '45000001', 'X-Api-Sequence must be -1']);
    expect(await status({ ...base, body: { ...(base.body as object), request: { model_name: 'smallmodel' } } })).to.deep.equal([400, '45000001', 'request.model_name must be bigmodel']);
    expect(await status({ ...base, body: { audio: { url: 'https://media.example/a.m4a', format: 'm4a' }, request: { model_name: 'bigmodel' } } })).to.deep.equal([400, '45000151', 'audio.format m4a is not supported']);
  });

  it('answers flash at once with the finished transcript, and refuses what its limits exclude: over 2 hours, over 100 MB', async () => {
    const small = ask({}, { fileBytes: 1_000 });
    const reading = readRecognition(await speech.call(flashRecognition(small)), small, 'volc-speech');
    expect(reading.state === 'succeeded' && reading.transcript.durationMs).to.equal(30_000);
    const long = ask({ sim_duration_ms: '7200001' });
    expect(await status(flashRecognition(long))).to.deep.equal([400, '45000001', 'the audio is longer than 2 hours: use the standard recognition']);
    const large = ask({ sim_bytes: '100000001' });
    expect(await status(flashRecognition(large))).to.deep.equal([400, '45000001', 'the audio file is larger than 100 MB: use the standard recognition']);
    expect(await status({ ...flashRecognition(small), headers: { ...flashRecognition(small).headers, 'x-api-resource-id': 'volc.bigasr.auc' } })).to.deep.equal([403, '45000030', '[resource_id=volc.bigasr.auc] requested resource not granted']);
  });

  it('answers the recording\'s directives in the provider\'s codes: busy (55000031, 503), a bad format (45000151), silence (20000003)', async () => {
    expect(await status(submitRecognition(ask({ sim: 'asr_unavailable' })))).to.deep.equal([503, '55000031', 'the service is busy: the speech service is temporarily unavailable']);
    expect(await status(flashRecognition(ask({ sim: 'asr_reject' })))).to.deep.equal([400, '45000151', 'the audio format is not supported']);
    const broken = ask({ sim: 'asr_fail' });
    expect(submitRefusal(await speech.call(submitRecognition(broken)), 'volc-speech')).to.equal(null);
    expect(await status(queryRecognition(broken.taskId, broken))).to.deep.equal([400, '45000151', 'invalid audio format: the audio could not be decoded']);
    expect(await status(flashRecognition(ask({ sim: 'asr_silent' })))).to.deep.equal([200, '20000003', 'silent audio']);
  });
});
