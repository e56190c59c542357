import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { MinutesTaskAsk } from '../../src/upstreams/minutes-task';
import { fetchResultJson } from '../../src/upstreams/result-files';
import { createOfflineTask, getTaskInfo, readingOf, readTask, tingwuMinutes, tingwuTaskOf, transcriptOf } from '../../src/upstreams/tingwu/offline-tasks';
import type { WireTransport } from '../../src/upstreams/wire';
import { tingwuProtocol } from '../../src/upstreams/tingwu/protocol';
import { wireAnswer as answer, thrown, upstreamErrorOf } from '../support/wire-answer';

/**
 * The Tingwu adapter against the examples of Tingwu's public reference:
 * - CreateTask's answer, https://help.aliyun.com/zh/tingwu/api-tingwu-2023-09-30-createtask;
 * - GetTaskInfo's answers while ONGOING (with and without the transcription linked), COMPLETED and
 *   FAILED (`TSC.AudioFileLink`), https://help.aliyun.com/zh/tingwu/offline-transcribe-of-audio-and-video-files;
 * - the transcription file (`AudioInfo`, `Paragraphs`, `Words`), https://help.aliyun.com/zh/tingwu/voice-transcription;
 * - the auto chapters file, https://help.aliyun.com/zh/tingwu/chapter-quick-view;
 * - the error codes, https://help.aliyun.com/zh/tingwu/error-information-query.
 * The summarization, action items and translation files follow the field lists of their pages
 * (large-model-summary, intelligent-summary, text-translation), which give no full example.
 */

const DOCUMENTED_CREATED = {
  RequestId: '35124E1C-AE99-5D6C-A52E-BD689D8D****',
  Code: '0',
  Message: 'Success.',
  Data: { TaskId: 'c5394c6ee0fb474899d42215a3925c7e', TaskKey: 'task_tingwu_123', MeetingJoinUrl: 'wss://tingwu-realtime-cn-beijing.aliyuncs.com/api/ws/v1?mc=****', TaskStatus: 'ONGOING' },
};

const DOCUMENTED_ONGOING = { Code: '0', Data: { TaskId: 'e8adc0b3bc4b42d898fcadb0********', TaskStatus: 'ONGOING' }, Message: 'success', RequestId: '5fa32fc6-441f-4dd1-bb86-c030********' };

const DOCUMENTED_FAILED = {
  Code: '0',
  Data: { TaskId: 'b76389677b1441fa82165cb1********', TaskStatus: 'FAILED', ErrorCode: 'TSC.AudioFileLink', ErrorMessage: 'Audio file link invalid.' },
  Message: 'success',
  RequestId: 'd181d898-b627-4040-b7c9-9563********',
};

/** The reference's transcription file, its two words completed into two sentences of two speakers. */
const DOCUMENTED_TRANSCRIPTION = {
  TaskId: '10683ca4ad3f4f06bdf6e9dc*********',
  Transcription: {
    AudioInfo: { Size: 670663, Duration: 10394, SampleRate: 48000, Language: 'cn' },
    Paragraphs: [
      {
        ParagraphId: '16987422100275*******',
        SpeakerId: '1',
        Words: [
          { Id: 10, SentenceId: 1, Start: 4970, End: 5560, Text: '您好，' },
          { Id: 20, SentenceId: 1, Start: 5730, End: 6176, Text: '我是' },
        ],
      },
      { ParagraphId: '16987422100276*******', SpeakerId: '2', Words: [{ Id: 30, SentenceId: 2, Start: 6500, End: 9800, Text: '你好。' }] },
    ],
    AudioSegments: [
      [4970, 6176],
      [6500, 9800],
    ],
  },
};

const DOCUMENTED_CHAPTERS = {
  TaskId: '05c45066fc6df96dg09bf8z4*********',
  AutoChapters: [
    { Id: 1, Start: 1930, End: 283874, Headline: '阿里巴巴云栖大会及技术责任', Summary: '云栖大会作为中国产业界的盛会……' },
    { Id: 2, Start: 284050, End: 452084, Headline: '云计算：推动中国走向现代化', Summary: '平头哥围绕云计算场景定义了倚天710芯片……' },
  ],
};

const SUMMARIZATION = {
  TaskId: 't',
  Summarization: {
    ParagraphSummary: '会议讨论了发布计划。',
    QuestionsAnsweringSummary: [{ Question: '数据迁移采用哪个方案？', SentenceIdsOfQuestion: [1], Answer: '方案B。', SentenceIdsOfAnswer: [2] }],
  },
};
const MEETING_ASSISTANCE = { TaskId: 't', MeetingAssistance: { Keywords: ['预算'], Actions: [{ Id: 1, SentenceId: 2, Start: 6500, End: 9800, Text: '请发预算表。' }] } };
const TRANSLATION = { TaskId: 't', Translation: { Paragraphs: [{ ParagraphId: 'p1', Sentences: [{ SentenceId: 1, Start: 4970, End: 6176, Text: 'Hello, I am' }] }] } };

const ASK: MinutesTaskAsk = {
  taskId: 'mins_01',
  model: 'app-key-1',
  fileUrl: 'https://media.example.com/board.m4a',
  fileType: 'audio',
  fileBytes: 1000,
  language: 'zh_cn',
  speakerIdentification: true,
  numberOfSpeakers: 2,
  hotWords: ['Kubernetes'],
  wordTimestamps: false,
  extras: { all: false, features: ['summary', 'todos', 'translate'], targetLang: 'en_us' },
};

describe('Tingwu offline tasks (the tingwu protocol’s minutes adapter)', () => {
  describe('CreateTask', () => {
    it('is PUT /openapi/tingwu/v2/tasks?type=offline, its action and version in headers, the AppKey, the input and one parameter per extra asked', () => {
      const request = createOfflineTask(ASK);
      expect(request).to.deep.include({ method: 'PUT', path: '/openapi/tingwu/v2/tasks', query: { type: 'offline' }, headers: { 'x-acs-action': 'CreateTask', 'x-acs-version': '2023-09-30' } });
      expect(request.body).to.deep.equal({
        AppKey: 'app-key-1',
        Input: { SourceLanguage: 'cn', FileUrl: 'https://media.example.com/board.m4a', TaskKey: 'mins_01' },
        Parameters: {
          Transcription: { DiarizationEnabled: true, Diarization: { SpeakerCount: 2 } },
          SummarizationEnabled: true,
          Summarization: { Types: ['Paragraph'] },
          MeetingAssistanceEnabled: true,
          MeetingAssistance: { Types: ['Actions'] },
          TranslationEnabled: true,
          Translation: { TargetLanguages: ['en'] },
        },
      });
    });

    it('maps all_activate and each feature: qa is the Q&A review, chapters the auto chapters; no diarization when speakers are not asked for', () => {
      const all = createOfflineTask({ ...ASK, language: 'en_us', numberOfSpeakers: null, extras: { all: true, features: [], targetLang: 'zh_cn' } });
      expect(all.body).to.deep.include({ Input: { SourceLanguage: 'en', FileUrl: ASK.fileUrl, TaskKey: 'mins_01' } });
      expect((all.body as { Parameters: unknown }).Parameters).to.deep.equal({
        Transcription: { DiarizationEnabled: true, Diarization: { SpeakerCount: 0 } },
        SummarizationEnabled: true,
        Summarization: { Types: ['Paragraph', 'QuestionsAnswering'] },
        AutoChaptersEnabled: true,
        MeetingAssistanceEnabled: true,
        MeetingAssistance: { Types: ['Actions'] },
        TranslationEnabled: true,
        Translation: { TargetLanguages: ['cn'] },
      });
      const parameters = (features: MinutesTaskAsk['extras']) => (createOfflineTask({ ...ASK, speakerIdentification: false, extras: features }).body as { Parameters: unknown }).Parameters;
      expect(parameters({ all: false, features: ['qa'], targetLang: null })).to.deep.equal({ Transcription: { DiarizationEnabled: false }, SummarizationEnabled: true, Summarization: { Types: ['QuestionsAnswering'] } });
      expect(parameters({ all: false, features: ['chapters'], targetLang: null })).to.deep.equal({ Transcription: { DiarizationEnabled: false }, AutoChaptersEnabled: true });
      expect(parameters(null), 'a transcription only').to.deep.equal({ Transcription: { DiarizationEnabled: false } });
      expect(JSON.stringify(createOfflineTask(ASK).body), 'hot words are a vocabulary id at Tingwu, not words').not.to.include('Kubernetes');
    });

    it('asks SpeakerCount 2 for exactly two expected speakers and 0 (undetermined) for any other count: the only values the SDK documents', () => {
      const diarization = (numberOfSpeakers: number | null) => (createOfflineTask({ ...ASK, numberOfSpeakers }).body as { Parameters: { Transcription: unknown } }).Parameters.Transcription;
      expect(diarization(2)).to.deep.equal({ DiarizationEnabled: true, Diarization: { SpeakerCount: 2 } });
      for (const count of [null, 1, 3, 5, 100]) expect(diarization(count), String(count)).to.deep.equal({ DiarizationEnabled: true, Diarization: { SpeakerCount: 0 } });
    });

    it('reads the created task from the documented answer; a language Tingwu is not asked in is refused before sending', () => {
      expect(readTask(answer(200, DOCUMENTED_CREATED), 'tingwu')).to.deep.include({ taskId: 'c5394c6ee0fb474899d42215a3925c7e', status: 'ONGOING' });
      expect(thrown(() => createOfflineTask({ ...ASK, language: 'ja_jp' }))).to.include({ status: 400, code: 'unsupported_by_provider' });
    });
  });

  describe('GetTaskInfo', () => {
    it('is GET /openapi/tingwu/v2/tasks/{TaskId}', () => {
      expect(getTaskInfo('c5394c6e')).to.deep.equal({ method: 'GET', path: '/openapi/tingwu/v2/tasks/c5394c6e', headers: { 'x-acs-action': 'GetTaskInfo', 'x-acs-version': '2023-09-30' } });
    });

    it('reads the documented ONGOING and FAILED answers; INVALID fails; an unknown status or no TaskId is a protocol error', async () => {
      const ongoing = readTask(answer(200, DOCUMENTED_ONGOING), 'tingwu');
      expect(await readingOf(ongoing, ASK, 'tingwu', () => expect.fail('nothing to fetch'))).to.deep.equal({ state: 'pending', upstreamStatus: 'running', durationMs: null });
      expect(await readingOf(readTask(answer(200, DOCUMENTED_FAILED), 'tingwu'), ASK, 'tingwu')).to.deep.equal({ state: 'failed', error: { code: 'TSC.AudioFileLink', message: 'Audio file link invalid.' } });
      const invalid = readTask(answer(200, { Code: '0', Data: { TaskId: 'nope', TaskStatus: 'INVALID' } }), 'tingwu');
      expect(await readingOf(invalid, ASK, 'tingwu')).to.deep.equal({ state: 'failed', error: { code: 'upstream_task_invalid', message: 'Tingwu reports task nope invalid' } });
      expect(thrown(() => readTask(answer(200, { Code: '0', Data: { TaskId: 'x', TaskStatus: 'PAUSED' } }), 'tingwu'))).to.include({ status: 502, kind: 'protocol' });
      expect(thrown(() => readTask(answer(200, { Code: '0', Data: {} }), 'tingwu'))).to.include({ status: 502, kind: 'protocol' });
    });
  });

  describe('the result files', () => {
    let server: http.Server;
    let base: string;
    const files: Record<string, { status?: number; body: string | Buffer; type?: string }> = {};
    const fetched: string[] = [];

    before(async () => {
      server = http.createServer((req, res) => {
        // A file that never comes: the deadline ends the wait.
        if (req.url === '/slow.json') return;
        // A file of unannounced length, sent in chunks: counted as it comes.
        if (req.url === '/chunked.json') {
          res.writeHead(200, { 'content-type': 'application/json' });
          for (let i = 0; i < 3; i++) res.write(Buffer.alloc(600, 0x20));
          return res.end();
        }
        const file = files[req.url!];
        fetched.push(req.url!);
        res.writeHead(file?.status ?? (file ? 200 : 404), { 'content-type': file?.type ?? 'application/json' });
        res.end(file?.body ?? '<Error><Code>NoSuchKey</Code></Error>');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      Object.assign(files, {
        '/t_Transcription.json?Expires=1': { body: JSON.stringify(DOCUMENTED_TRANSCRIPTION) },
        '/t_AutoChapters.json?Expires=1': { body: JSON.stringify(DOCUMENTED_CHAPTERS) },
        '/t_Summarization.json?Expires=1': { body: JSON.stringify(SUMMARIZATION) },
        '/t_MeetingAssistance.json?Expires=1': { body: JSON.stringify(MEETING_ASSISTANCE) },
        '/t_Translation.json?Expires=1': { body: JSON.stringify(TRANSLATION) },
        '/big.json': { body: Buffer.alloc(2048, 0x20) },
        '/html.json': { body: '<html></html>', type: 'text/html' },
        '/gone.json': { status: 403, body: '<Error><Code>AccessDenied</Code></Error>' },
      });
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    beforeEach(() => {
      fetched.length = 0;
    });

    const completedWith = (names: string[]) =>
      readTask(answer(200, { Code: '0', Data: { TaskId: 't', TaskStatus: 'COMPLETED', Result: Object.fromEntries(names.map((n) => [n, `${base}/t_${n}.json?Expires=1`])) } }), 'tingwu');

    it('reads the documented transcription: sentences of words, Tingwu’s SpeakerIds, AudioInfo.Duration as the length billed', () => {
      const transcript = transcriptOf(DOCUMENTED_TRANSCRIPTION.Transcription, { ...ASK, wordTimestamps: true });
      expect(transcript).to.deep.equal({
        durationMs: 10394,
        language: 'zh_cn',
        segments: [
          {
            id: '1',
            text: '您好，我是',
            startMs: 4970,
            endMs: 6176,
            speakerId: '1',
            words: [
              { text: '您好，', startMs: 4970, endMs: 5560 },
              { text: '我是', startMs: 5730, endMs: 6176 },
            ],
          },
          { id: '2', text: '你好。', startMs: 6500, endMs: 9800, speakerId: '2', words: [{ text: '你好。', startMs: 6500, endMs: 9800 }] },
        ],
        speakers: [
          { id: '1', displayName: '发言人1' },
          { id: '2', displayName: '发言人2' },
        ],
      });
      const plain = transcriptOf(DOCUMENTED_TRANSCRIPTION.Transcription, { ...ASK, speakerIdentification: false, language: 'en_us' });
      expect(plain.segments.map((s) => [s.speakerId, 'words' in s])).to.deep.equal([
        [null, false],
        [null, false],
      ]);
      expect(plain.speakers).to.deep.equal([]);
      expect(plain.language, 'as AudioInfo.Language says').to.equal('zh_cn');
      const { AudioInfo: _none, ...withoutInfo } = DOCUMENTED_TRANSCRIPTION.Transcription;
      expect(transcriptOf(withoutInfo, ASK).durationMs, 'without AudioInfo: the end of the last sentence').to.equal(9800);
    });

    it('a COMPLETED task: the transcription and the files of the extras asked only, summary and chapters in the gateway’s legacy shape, the rest in Tingwu’s', async () => {
      const task = completedWith(['Transcription', 'AutoChapters', 'Summarization', 'MeetingAssistance', 'Translation']);
      const reading = await readingOf(task, { ...ASK, extras: { all: true, features: [], targetLang: 'en_us' } }, 'tingwu');
      expect(reading.state).to.equal('succeeded');
      if (reading.state !== 'succeeded') return;
      expect(reading.transcript.durationMs).to.equal(10394);
      expect(reading.extras).to.deep.equal({
        summary: { title: '', paragraph: '会议讨论了发布计划。' },
        chapters: [
          { title: '阿里巴巴云栖大会及技术责任', summary: '云栖大会作为中国产业界的盛会……', start_time: 1930, end_time: 283874 },
          { title: '云计算：推动中国走向现代化', summary: '平头哥围绕云计算场景定义了倚天710芯片……', start_time: 284050, end_time: 452084 },
        ],
        todos: MEETING_ASSISTANCE.MeetingAssistance.Actions,
        qa: SUMMARIZATION.Summarization.QuestionsAnsweringSummary,
        translation: TRANSLATION.Translation,
      });

      fetched.length = 0;
      const some = await readingOf(task, ASK, 'tingwu');
      expect(some.state === 'succeeded' && Object.keys(some.extras)).to.deep.equal(['summary', 'todos', 'translation']);
      expect(fetched.map((u) => u.split('?')[0]).sort(), 'no file of an extra not asked').to.deep.equal(['/t_MeetingAssistance.json', '/t_Summarization.json', '/t_Transcription.json', '/t_Translation.json']);
    });

    it('an extra Tingwu made no file for is absent; no transcription at all fails the task; an ONGOING task linking its transcription tells the length', async () => {
      const noChapters = await readingOf(completedWith(['Transcription']), { ...ASK, extras: { all: false, features: ['chapters'], targetLang: null } }, 'tingwu');
      expect(noChapters.state === 'succeeded' && noChapters.extras).to.deep.equal({});
      expect(await readingOf(completedWith([]), ASK, 'tingwu')).to.deep.equal({ state: 'failed', error: { code: 'task_failed', message: 'Tingwu completed the task without a transcription' } });
      const ongoing = readTask(answer(200, { Code: '0', Data: { TaskId: 't', TaskStatus: 'ONGOING', Result: { Transcription: `${base}/t_Transcription.json?Expires=1` } } }), 'tingwu');
      expect(await readingOf(ongoing, ASK, 'tingwu')).to.deep.equal({ state: 'pending', upstreamStatus: 'running', durationMs: 10394, upstreamId: 'length-read:t' });
    });

    it('reads the transcription of an ONGOING task once over many polls: the id it is polled by from then on says its length was read', async () => {
      const asked: string[] = [];
      const transport: WireTransport = {
        name: 'tingwu',
        call: async (request) => {
          asked.push(request.path);
          return answer(200, { Code: '0', Data: { TaskId: 't', TaskStatus: 'ONGOING', Result: { Transcription: `${base}/t_Transcription.json?Expires=1` } } });
        },
      };
      // As the task engine polls: each reading's new upstream id is the one the next poll uses.
      let upstreamId = 't';
      const readings = [];
      for (let poll = 0; poll < 4; poll++) {
        const reading = await tingwuMinutes.get(transport, upstreamId, ASK);
        readings.push(reading);
        if (reading.state === 'pending' && reading.upstreamId !== undefined) upstreamId = reading.upstreamId;
      }
      expect(fetched, 'the 32 MiB-capped file is downloaded on the first poll only').to.deep.equal(['/t_Transcription.json?Expires=1']);
      expect(asked, 'every poll asks GetTaskInfo of Tingwu’s own TaskId').to.deep.equal(Array(4).fill('/openapi/tingwu/v2/tasks/t'));
      expect(readings[0]).to.deep.equal({ state: 'pending', upstreamStatus: 'running', durationMs: 10394, upstreamId: 'length-read:t' });
      for (const later of readings.slice(1)) expect(later).to.deep.equal({ state: 'pending', upstreamStatus: 'running', durationMs: null });
      expect(tingwuTaskOf('length-read:t')).to.deep.equal({ taskId: 't', lengthRead: true });
      expect(tingwuTaskOf('t')).to.deep.equal({ taskId: 't', lengthRead: false });
    });

    it('refuses a file that is not 200, larger than the cap, not JSON, late, or behind a link that is not http(s): the provider’s failure, retried', async () => {
      const failure = (url: string, maxBytes = 1024) => upstreamErrorOf(() => fetchResultJson(url, 'tingwu', 'Transcription', { maxBytes, timeoutMs: 5_000 }));
      expect(await failure(`${base}/gone.json`)).to.include({ status: 502, kind: 'protocol', message: 'channel tingwu: the Transcription result file answered HTTP 403' });
      expect((await failure(`${base}/big.json`)).message).to.equal('channel tingwu: the Transcription result file is larger than 1024 bytes');
      expect((await failure(`${base}/chunked.json`)).message).to.equal('channel tingwu: the Transcription result file is larger than 1024 bytes');
      expect((await failure(`${base}/html.json`)).message).to.equal('channel tingwu: the Transcription result file is not JSON');
      expect((await failure('file:///etc/passwd')).message).to.equal('channel tingwu: the Transcription result file link is not an http(s) URL');
      const late = await upstreamErrorOf(() => fetchResultJson(`${base}/slow.json`, 'tingwu', 'Transcription', { maxBytes: 1024, timeoutMs: 200 }));
      expect(late).to.include({ status: 502, kind: 'protocol' });
      expect(late.message).to.match(/^channel tingwu: the Transcription result file could not be fetched: /);
      expect(await fetchResultJson(`${base}/big.json`, 'tingwu', 'x', { maxBytes: 4096, timeoutMs: 5_000 }).catch((e: Error) => e.message)).to.equal('channel tingwu: the x result file is not JSON');
    });
  });

  describe('errors (the protocol’s errorOf)', () => {
    const errorOf = (status: number, body: unknown) => tingwuProtocol.errorOf(answer(status, body), 'tingwu');

    it('a refusal of the AccessKey, its signature, the clock, the RAM policy or the project AppKey is the gateway’s credentials, whatever the status, without Alibaba’s words', () => {
      for (const [status, code] of [
        [404, 'InvalidAccessKeyId.NotFound'],
        [400, 'SignatureDoesNotMatch'],
        [400, 'IncompleteSignature'],
        [400, 'InvalidTimeStamp.Expired'],
        [403, 'Forbidden.RAM'],
        [400, 'BRK.InvalidAppKey'],
        [400, 'BRK.InvalidService'],
      ] as const) {
        const err = errorOf(status, { RequestId: 'r', Code: code, Message: `Specified access key LTAI5tSECRET is not ok (${code})` });
        expect(err, code).to.include({ code: 'upstream_auth_failed', status: status === 403 ? 403 : 401 });
        expect(err.message, code).not.to.include('LTAI5tSECRET');
      }
    });

    it('an overdue account is the operator’s balance; flow control a 429; other codes the provider’s refusal with its status; a 200 naming a code is a refusal too', () => {
      expect(errorOf(400, { Code: 'BRK.OverdueTenant', Message: 'Overdue tenant.' })).to.include({ status: 403, code: 'upstream_account_balance' });
      expect(tingwuProtocol.errorOf(answer(400, { Code: 'Throttling.User', Message: 'Request was denied due to user flow control.' }, { 'retry-after': '2' }), 'tingwu')).to.include({ status: 429, code: 'Throttling.User', retryAfter: '2' });
      expect(errorOf(400, { Code: 'BRK.InvalidLanguage', Message: 'Invalid language.' })).to.include({ status: 400, code: 'BRK.InvalidLanguage', message: 'Invalid language.' });
      expect(errorOf(500, { Code: 'ServerError', Message: 'Server error.' })).to.include({ status: 500, code: 'ServerError' });
      expect(errorOf(503, '<html>busy</html>')).to.include({ status: 503, code: null, message: 'channel tingwu: the provider answered HTTP 503 without an error it documents' });
      expect(thrown(() => readTask(answer(200, { Code: 'BRK.InvalidRoleSplitNum', Message: 'Invalid roleSplitNum.' }), 'tingwu'))).to.include({ status: 400, code: 'BRK.InvalidRoleSplitNum' });
    });
  });
});
