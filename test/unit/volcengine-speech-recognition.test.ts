import { expect } from 'chai';
import type { MinutesTaskAsk } from '../../src/upstreams/minutes-task';
import {
  flashRecognition,
  queryRecognition,
  readRecognition,
  submitRecognition,
  submitRefusal,
  usesFlash,
  volcengineSpeechMinutes,
} from '../../src/upstreams/volcengine-speech/recording-recognition';
import type { WireAnswer, WireRequest, WireTransport } from '../../src/upstreams/wire';
import { upstreamErrorOf, wireAnswer, thrown } from '../support/wire-answer';

/** The refusal of a submit's answer; fails the test when there is none. */
function refusalOf(answer: WireAnswer, channel: string) {
  const refusal = submitRefusal(answer, channel);
  if (refusal === null) return expect.fail('expected a refusal');
  return refusal;
}

/**
 * The Volcengine recording-recognition adapter against the examples of the provider's public
 * references (there is no official Node SDK of these APIs on npm):
 * - standard, https://www.volcengine.com/docs/6561/1354868: the submit request example, the
 *   submit answer (an empty body; `X-Api-Status-Code` 20000000, `X-Api-Message` OK, `X-Tt-Logid`),
 *   the query answer example (two utterances with words; the example repeats `audio_info`, whose
 *   last value, 3696, is what a JSON reader keeps) and the error code table;
 * - flash, https://www.volcengine.com/docs/6561/1631584: the answer example (`audio_info.duration`
 *   2499 and `result.additions.duration` "2499") and its response headers.
 * The refusal of a grant (HTTP 403, 45000030 "requested resource not granted") is not in the
 * references: it is the answer open-source clients of these APIs report.
 */

const DOCUMENTED_SUBMIT_REQUEST = {
  user: { uid: '388808087185088' },
  audio: { format: 'mp3', url: 'http://xxx.com/obj/sample.mp3' },
  request: { model_name: 'bigmodel', enable_itn: true },
};

const DONE_HEADERS = { 'x-api-status-code': '20000000', 'x-api-message': 'OK', 'x-tt-logid': '202407261553070FACFE6D19421815D605' };

const word = (text: string, start: number, end: number) => `{"blank_duration": 0, "end_time": ${end}, "start_time": ${start}, "text": "${text}"}`;
/** The query answer example, as the reference prints it (audio_info twice). */
const DOCUMENTED_QUERY_ANSWER = `{
  "audio_info": {"duration": 10000},
  "result": {
      "text": "这是字节跳动， 今日头条母公司。",
      "utterances": [
        {"definite": true, "end_time": 1705, "start_time": 0, "text": "这是字节跳动，",
         "words": [${word('这', 740, 860)}, ${word('是', 860, 1020)}, ${word('字', 1020, 1200)}, ${word('节', 1200, 1400)}, ${word('跳', 1400, 1560)}, ${word('动', 1560, 1640)}]},
        {"definite": true, "end_time": 3696, "start_time": 2110, "text": "今日头条母公司。",
         "words": [${word('今', 2910, 3070)}, ${word('日', 3070, 3230)}, ${word('头', 3230, 3390)}, ${word('条', 3390, 3550)}, ${word('母', 3550, 3670)}, ${word('公', 3670, 3696)}, ${word('司', 3696, 3696)}]}
      ]
   },
  "audio_info": {"duration": 3696}
}`;

const DOCUMENTED_FLASH_ANSWER = {
  audio_info: { duration: 2499 },
  result: {
    additions: { duration: '2499' },
    text: '关闭透传。',
    utterances: [
      {
        end_time: 1530,
        start_time: 450,
        text: '关闭透传。',
        words: [
          { confidence: 0, end_time: 770, start_time: 450, text: '关' },
          { confidence: 0, end_time: 970, start_time: 770, text: '闭' },
          { confidence: 0, end_time: 1210, start_time: 1130, text: '透' },
          { confidence: 0, end_time: 1530, start_time: 1490, text: '传' },
        ],
      },
    ],
  },
};
const DOCUMENTED_FLASH_HEADERS = { 'x-api-status-code': '20000000', 'x-api-message': 'OK', 'x-tt-logid': '202506191943547B30C313640AF5B35A86' };

const ASK: MinutesTaskAsk = {
  taskId: 'mins_abc',
  model: 'volc.bigasr.auc',
  fileUrl: 'http://xxx.com/obj/sample.mp3',
  fileType: 'mp3',
  fileBytes: 5_000_000,
  language: 'zh_cn',
  speakerIdentification: true,
  numberOfSpeakers: null,
  hotWords: null,
  wordTimestamps: false,
  extras: null,
};

const status = (code: string, message: string, httpStatus = 200, body: unknown = {}) => wireAnswer(httpStatus, body, { 'x-api-status-code': code, 'x-api-message': message, 'x-tt-logid': 'L1' });

describe('Volcengine recording recognition: requests', () => {
  it("submits the reference's request: its headers, the task id as X-Api-Request-Id, utterances and speakers asked for", () => {
    const request = submitRecognition(ASK);
    expect(request).to.deep.include({ method: 'POST', path: '/auc/bigmodel/submit', model: 'volc.bigasr.auc' });
    expect(request.headers).to.deep.equal({ 'x-api-resource-id': 'volc.bigasr.auc', 'x-api-request-id': 'mins_abc', 'x-api-sequence': '-1' });
    expect(request.body).to.deep.equal({
      audio: { url: 'http://xxx.com/obj/sample.mp3', format: 'mp3' },
      request: { model_name: 'bigmodel', enable_itn: true, enable_punc: true, enable_speaker_info: true, show_utterances: true },
    });
    // The documented example's members, where the gateway sends them, as the example has them.
    const body = request.body as typeof DOCUMENTED_SUBMIT_REQUEST;
    expect(body.audio).to.deep.equal(DOCUMENTED_SUBMIT_REQUEST.audio);
    expect(body.request).to.deep.include(DOCUMENTED_SUBMIT_REQUEST.request);
  });

  it('queries with the same request id and an empty JSON object; flash with its own resource', () => {
    expect(queryRecognition('mins_abc', ASK)).to.deep.equal({
      method: 'POST',
      path: '/auc/bigmodel/query',
      headers: { 'x-api-resource-id': 'volc.bigasr.auc', 'x-api-request-id': 'mins_abc' },
      body: {},
      model: 'volc.bigasr.auc',
    });
    const flash = flashRecognition(ASK);
    expect([flash.method, flash.path, flash.headers]).to.deep.equal(['POST', '/auc/bigmodel/recognize/flash', { 'x-api-resource-id': 'volc.bigasr.auc_turbo', 'x-api-request-id': 'mins_abc', 'x-api-sequence': '-1' }]);
    expect(flash.body).to.deep.equal(submitRecognition(ASK).body);
  });

  it("takes the standard resource from the catalog (model 2.0's volc.seedasr.auc), the 1.0 resource when the catalog names none", () => {
    expect(submitRecognition({ ...ASK, model: 'volc.seedasr.auc' }).headers?.['x-api-resource-id']).to.equal('volc.seedasr.auc');
    expect(queryRecognition('mins_abc', { model: 'service-minutes' }).headers?.['x-api-resource-id']).to.equal('volc.bigasr.auc');
  });

  it('maps the language (Chinese is the default, left out), the containers the reference lists, hot words as the context JSON, no speakers when not asked', () => {
    const en = submitRecognition({ ...ASK, language: 'en_us', fileType: 'opus', speakerIdentification: false, hotWords: ['Kubernetes', '  ', '方案B'] }).body as Record<string, any>;
    expect(en.audio).to.deep.equal({ url: ASK.fileUrl, format: 'ogg', codec: 'opus', language: 'en-US' });
    expect(en.request.enable_speaker_info).to.equal(false);
    expect(JSON.parse(en.request.corpus.context)).to.deep.equal({ hotwords: [{ word: 'Kubernetes' }, { word: '方案B' }] });
    for (const fileType of ['m4a', 'mp4', 'audio', 'video']) {
      expect((submitRecognition({ ...ASK, fileType }).body as Record<string, any>).audio, fileType).to.deep.equal({ url: ASK.fileUrl });
    }
  });

  it('draws the line at flash\'s 100 MB: a known size up to it is flash, a larger or unknown one standard', () => {
    expect([usesFlash({ fileBytes: 1 }), usesFlash({ fileBytes: 100_000_000 }), usesFlash({ fileBytes: 100_000_001 }), usesFlash({ fileBytes: null })]).to.deep.equal([true, true, false, false]);
  });
});

describe('Volcengine recording recognition: answers', () => {
  it('reads the documented submit answer (empty body, status in the headers) as submitted', () => {
    expect(submitRefusal(wireAnswer(200, undefined, DONE_HEADERS), 'volc-speech')).to.equal(null);
  });

  it('reads the documented query answer: one segment per utterance, times in ms, the duration JSON keeps, words when asked', () => {
    const reading = readRecognition(wireAnswer(200, DOCUMENTED_QUERY_ANSWER, DONE_HEADERS), { ...ASK, wordTimestamps: true }, 'volc-speech');
    expect(reading.state).to.equal('succeeded');
    if (reading.state !== 'succeeded') return;
    const t = reading.transcript;
    expect(t.durationMs).to.equal(3696);
    expect(t.language).to.equal('zh_cn');
    expect(t.segments.map((s) => [s.id, s.text, s.startMs, s.endMs, s.speakerId])).to.deep.equal([
      ['seg-1', '这是字节跳动，', 0, 1705, null],
      ['seg-2', '今日头条母公司。', 2110, 3696, null],
    ]);
    expect(t.segments[1]!.words).to.have.length(7);
    expect(t.segments[0]!.words![0]).to.deep.equal({ text: '这', startMs: 740, endMs: 860 });
    expect(t.speakers, 'the example names no speaker').to.deep.equal([]);
    const noWords = readRecognition(wireAnswer(200, DOCUMENTED_QUERY_ANSWER, DONE_HEADERS), ASK, 'volc-speech');
    expect(noWords.state === 'succeeded' && noWords.transcript.segments[0]).to.not.have.property('words');
  });

  it("reads the documented flash answer, and its result.additions.duration when audio_info is missing", () => {
    const reading = readRecognition(wireAnswer(200, DOCUMENTED_FLASH_ANSWER, DOCUMENTED_FLASH_HEADERS), ASK, 'volc-speech');
    expect(reading).to.deep.equal({
      state: 'succeeded',
      transcript: { durationMs: 2499, language: 'zh_cn', segments: [{ id: 'seg-1', text: '关闭透传。', startMs: 450, endMs: 1530, speakerId: null }], speakers: [] },
      extras: {},
    });
    const { audio_info: _, ...withoutInfo } = DOCUMENTED_FLASH_ANSWER;
    const fallback = readRecognition(wireAnswer(200, withoutInfo, DOCUMENTED_FLASH_HEADERS), ASK, 'volc-speech');
    expect(fallback.state === 'succeeded' && fallback.transcript.durationMs).to.equal(2499);
  });

  it("takes each utterance's additions.speaker as its speaker, named in the task's language in order of first appearance", () => {
    const body = {
      audio_info: { duration: 9000 },
      result: {
        text: 'a b c',
        utterances: [
          { text: 'a', start_time: 0, end_time: 3000, additions: { speaker: '2' } },
          { text: 'b', start_time: 3000, end_time: 6000, additions: { speaker: '1' } },
          { text: 'c', start_time: 6000, end_time: 9000, additions: { speaker: 2 } },
        ],
      },
    };
    const en = readRecognition(wireAnswer(200, body, DONE_HEADERS), { ...ASK, language: 'en_us' }, 'volc-speech');
    expect(en.state === 'succeeded' && en.transcript.segments.map((s) => s.speakerId)).to.deep.equal(['spk-2', 'spk-1', 'spk-2']);
    expect(en.state === 'succeeded' && en.transcript.speakers).to.deep.equal([
      { id: 'spk-2', displayName: 'Speaker 2' },
      { id: 'spk-1', displayName: 'Speaker 1' },
    ]);
    const zh = readRecognition(wireAnswer(200, body, DONE_HEADERS), ASK, 'volc-speech');
    expect(zh.state === 'succeeded' && zh.transcript.speakers[0]).to.deep.equal({ id: 'spk-2', displayName: '说话人2' });
    const off = readRecognition(wireAnswer(200, body, DONE_HEADERS), { ...ASK, speakerIdentification: false }, 'volc-speech');
    expect(off.state === 'succeeded' && [off.transcript.speakers, off.transcript.segments[0]!.speakerId]).to.deep.equal([[], null]);
  });

  it('reads processing (20000001) and queued (20000002) as pending, with or without a body', () => {
    expect(readRecognition(status('20000001', 'processing'), ASK, 'v')).to.deep.equal({ state: 'pending', upstreamStatus: 'running', durationMs: null });
    expect(readRecognition(status('20000002', 'in queue', 200, undefined), ASK, 'v')).to.deep.equal({ state: 'pending', upstreamStatus: 'queued', durationMs: null });
    expect(readRecognition(status('20000001', 'processing', 200, { audio_info: { duration: 7_300_000 } }), ASK, 'v')).to.deep.include({ durationMs: 7_300_000 });
  });

  it("fails the task on silent audio (20000003) and on the provider's refusals of the recording, keeping its code and message", () => {
    expect(readRecognition(status('20000003', 'silent'), ASK, 'v')).to.deep.equal({ state: 'failed', error: { code: '20000003', message: 'the recording is silent: no speech was recognised' } });
    expect(readRecognition(status('45000002', 'empty audio', 400), ASK, 'v')).to.deep.equal({ state: 'failed', error: { code: '45000002', message: 'empty audio' } });
    // The code decides, whatever the HTTP status.
    expect(readRecognition(status('45000151', 'invalid audio format'), ASK, 'v')).to.deep.equal({ state: 'failed', error: { code: '45000151', message: 'invalid audio format' } });
  });

  it("throws the service's failures (retried) and refused grants (the operator's), never quoting the provider on credentials", () => {
    const busy = thrown(() => readRecognition(status('55000031', 'server busy', 503, undefined), ASK, 'volc-speech'));
    expect([busy.status, busy.kind, busy.message]).to.deep.equal([503, 'http', 'server busy (55000031, logid L1)']);
    const internal = thrown(() => readRecognition(status('55000001', 'internal error', 500), ASK, 'volc-speech'));
    expect(internal.status).to.equal(500);
    const grant = thrown(() => readRecognition(status('45000030', '[resource_id=volc.bigasr.auc_turbo] requested resource not granted', 403, { code: 45000030, message: '[resource_id=volc.bigasr.auc_turbo] requested resource not granted' }), ASK, 'volc-speech'));
    expect([grant.status, grant.code]).to.deep.equal([403, 'upstream_auth_failed']);
    expect(grant.message).to.not.contain('not granted');
    const key = refusalOf(wireAnswer(401, '', {}), 'volc-speech');
    expect([key.status, key.code]).to.deep.equal([401, 'upstream_auth_failed']);
  });

  it('refuses a submission with the code and message and the log id, as a 400 the gateway answers; an unknown success code is a protocol error', () => {
    const refused = refusalOf(status('45000151', 'invalid audio format', 400, undefined), 'volc-speech');
    expect([refused.status, refused.code, refused.message]).to.deep.equal([400, 'upstream_rejected', 'invalid audio format (45000151, logid L1)']);
    const odd = thrown(() => readRecognition(status('20000009', 'what'), ASK, 'volc-speech'));
    expect([odd.status, odd.kind]).to.deep.equal([502, 'protocol']);
    // An error answer without the header: its body's code (as a grant refusal carries it), else the HTTP status.
    const bodyOnly = refusalOf(wireAnswer(400, { code: 45000001, message: 'invalid request' }), 'volc-speech');
    expect([bodyOnly.status, bodyOnly.message]).to.deep.equal([400, 'invalid request (45000001)']);
    const bare = refusalOf(wireAnswer(502, '<html>bad gateway</html>'), 'volc-speech');
    expect([bare.status, bare.code]).to.deep.equal([502, null]);
  });
});

/** A transport that answers each call in turn, recording the requests. */
function scripted(...answers: WireAnswer[]): WireTransport & { sent: WireRequest[] } {
  const sent: WireRequest[] = [];
  return {
    name: 'volc-speech',
    sent,
    call: async (request) => {
      sent.push(request);
      const next = answers.shift();
      if (!next) throw new Error(`unexpected call ${request.path}`);
      return next;
    },
  };
}

describe('Volcengine recording recognition: the minutes adapter', () => {
  const big = { ...ASK, fileBytes: 300_000_000 };

  it('records a flash recording without calling the provider; its get makes the flash call with the task id', async () => {
    const transport = scripted(wireAnswer(200, DOCUMENTED_FLASH_ANSWER, DOCUMENTED_FLASH_HEADERS));
    const { upstreamId } = await volcengineSpeechMinutes.submit(transport, ASK);
    expect(upstreamId).to.equal('flash:mins_abc');
    expect(transport.sent).to.deep.equal([]);
    const reading = await volcengineSpeechMinutes.get(transport, upstreamId, ASK);
    expect(reading.state).to.equal('succeeded');
    expect(transport.sent.map((r) => [r.path, r.headers?.['x-api-request-id']])).to.deep.equal([['/auc/bigmodel/recognize/flash', 'mins_abc']]);
  });

  it('submits a large or unknown-size recording to the standard recognition and queries it by the task id', async () => {
    const transport = scripted(wireAnswer(200, undefined, DONE_HEADERS), status('20000002', 'queued'));
    const { upstreamId } = await volcengineSpeechMinutes.submit(transport, big);
    expect(upstreamId).to.equal('mins_abc');
    expect(await volcengineSpeechMinutes.get(transport, upstreamId, big)).to.deep.include({ state: 'pending', upstreamStatus: 'queued' });
    expect(transport.sent.map((r) => r.path)).to.deep.equal(['/auc/bigmodel/submit', '/auc/bigmodel/query']);
  });

  it('takes a resubmission refused as repeated (45000001) as submitted when the query finds the task, and as the refusal when it does not', async () => {
    const again = scripted(status('45000001', 'duplicate request', 400), status('20000001', 'processing'));
    expect(await volcengineSpeechMinutes.submit(again, big)).to.deep.equal({ upstreamId: 'mins_abc' });
    expect(again.sent.map((r) => r.path)).to.deep.equal(['/auc/bigmodel/submit', '/auc/bigmodel/query']);

    const invalid = scripted(status('45000001', 'audio.url is required', 400), status('45000001', 'no such task', 400));
    const err = await upstreamErrorOf(() => volcengineSpeechMinutes.submit(invalid, big));
    expect([err.status, err.message]).to.deep.equal([400, 'audio.url is required (45000001, logid L1)']);

    // Any other refusal is final at once: no query.
    const format = scripted(status('45000151', 'invalid audio format', 400));
    expect((await upstreamErrorOf(() => volcengineSpeechMinutes.submit(format, big))).status).to.equal(400);
    expect(format.sent).to.have.length(1);
  });
});
