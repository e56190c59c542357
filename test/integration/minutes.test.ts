import Ajv from 'ajv';
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WrongExpectedVersionError } from '../../src/eventstore/port';
import { assembleReport, unavailableReport } from '../../src/minutes/report';
import { MERGE_CAPS, partReportOf } from '../../src/minutes/summary-merge';
import { simulatedTranscript } from '../../simulator/asr';
import { REPORT_V2_SCHEMA } from '../../src/minutes/report-schema';
import type { Transcript } from '../../src/minutes/transcript';
import { wav } from '../../simulator/media';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { leaseSecondsLeft } from '../support/idempotency';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

// Prices of the built-in catalog, in minor units.
const SERVICE_RATE = 1_200_000; // service-minutes rate_per_hour
const PARTNER_RATE = 2_400_000; // partner-minutes rate_per_hour
const FLASH = { input: 1_000_000, output: 4_000_000 }; // chat-fast per million tokens
const ceilDiv = (a: bigint, b: bigint) => Number((a + b - 1n) / b);
const asrAmount = (ms: number, rate: number) => ceilDiv(BigInt(ms) * BigInt(rate), 3_600_000n);
const flashAmount = (input: number, output: number) => ceilDiv(BigInt(input) * BigInt(FLASH.input) + BigInt(output) * BigInt(FLASH.output), 1_000_000n);
/**
 * The frozen estimate: 2 hours of ASR, plus for service-minutes every summary part 2 hours can
 * need (32 at 240 tokens a minute), each with its full prompt (4096 / 4 tokens) and chat-fast's
 * maximum output (4096).
 */
const SUMMARY_PARTS = 32;
const SERVICE_ESTIMATE = asrAmount(7_200_000, SERVICE_RATE) + SUMMARY_PARTS * flashAmount(1_024, 4_096);
const PARTNER_ESTIMATE = asrAmount(7_200_000, PARTNER_RATE);

const ajv = new Ajv({ strict: true, allErrors: true });
const validateReport = ajv.compile(REPORT_V2_SCHEMA);

function expectValidReport(report: unknown): void {
  const ok = validateReport(report);
  expect(ok, `report matches the report version 2 schema: ${ajv.errorsText(validateReport.errors)}`).to.equal(true);
}

/** Every structural rule the gateway promises, checked independently over the whole report. */
function expectReferencesSound(report: any): void {
  const segmentIds = new Set<string>(report.segments.map((s: any) => s.id));
  const speakerIds = new Set<string>(report.speakers.map((s: any) => s.id));
  const ids: string[] = [];
  const duration = report.metadata.durationMs;
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${path}/${i}`));
    if (typeof value !== 'object' || value === null) return;
    const o = value as Record<string, unknown>;
    if (Array.isArray(o.sourceSegmentIds)) for (const id of o.sourceSegmentIds) expect(segmentIds.has(id as string), `${path} cites ${String(id)}`).to.equal(true);
    for (const key of ['startSegmentId', 'endSegmentId']) if (typeof o[key] === 'string') expect(segmentIds.has(o[key] as string), `${path}.${key}`).to.equal(true);
    if (typeof o.startMs === 'number') {
      expect(o.startMs, `${path}.startMs`).to.be.within(0, duration);
      expect(o.endMs as number, `${path}.endMs`).to.be.within(o.startMs as number, duration);
    }
    if (typeof o.speakerId === 'string') expect(speakerIds.has(o.speakerId), `${path}.speakerId`).to.equal(true);
    if (typeof o.id === 'string') ids.push(o.id);
    for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
  };
  for (const member of ['overview', 'keyPoints', 'sections', 'chapters', 'todos', 'decisions', 'quotes', 'reviewItems', 'visuals']) walk(report[member], `/${member}`);
  expect(new Set(ids).size, 'ids are unique').to.equal(ids.length);
}

const blockText = (b: any) => b.content.map((c: any) => c.text).join('');

describe('meeting minutes @integration', () => {
  let gw: TestGateway;
  let key: string;
  let other: string;

  before(async () => {
    // The summary time limit keeps its default (30 minutes) here: a 2-hour recording is summarised in
    // about 26 calls, which on a busy machine can take longer than any short limit; the limit itself
    // is tested in the next suite.
    gw = await startTestGateway({ TASK_POLL_MS: '20', FILE_URL_ALLOW_PRIVATE_TARGETS: 'true' });
    ({ key } = await gw.fundedAccount(100_000_000));
    ({ key: other } = await gw.fundedAccount(100_000_000));
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key, other]));
  after(async () => gw.close());

  /** A recording served by the simulator; its query parameters steer the simulated providers. */
  const media = (name: string, params: Record<string, string> = {}) => `${gw.simulator.url}/sim/media/${name}?${new URLSearchParams(params)}`;
  const create = (body: Record<string, unknown>, k: string | null = key) => gw.api(k, 'POST', '/v1/audio/minutes', body);
  /**
   * A recording over flash's 100 MB as its server announces it: service-minutes sends it to the
   * standard recognition (submitted, then queried); smaller ones go to the flash recognition.
   */
  const STANDARD = { sim_bytes: '150000000' };
  /** The calls the simulated Volcengine speech provider had for a task, by endpoint (the task id is the request id). */
  const speechCalls = async (taskId: string) => (await (await fetch(`${gw.simulator.url}/openspeech/api/v3/sim/recognitions/${taskId}`)).json()) as { submit: number; query: number; flash: number };
  const get = (id: string, k: string | null = key) => gw.api(k, 'GET', `/v1/audio/minutes/${id}`);
  const balance = (k = key) => gw.balance(k);
  const finished = (id: string, k = key) =>
    waitFor(`minutes task ${id} to finish`, async () => {
      const t = (await get(id, k)).body;
      return t.status !== 'processing' ? t : null;
    });
  /** Finished, and its reservation closed (the usage amount is then the settled one). */
  const settled = async (id: string, k = key) => {
    await finished(id, k);
    await waitFor('the reservation to close', async () => (await balance(k)).frozen === 0);
    return (await get(id, k)).body;
  };
  const lastLedgerEntry = async (k = key) => {
    const entries = (await gw.api(k, 'GET', '/v1/account/ledger?limit=100')).body.data as any[];
    return entries[entries.length - 1];
  };

  it('runs a service-minutes task end to end: transcript, report version 2, legacy members, usage and the settlement', async () => {
    const before = await balance();
    const recordedAt = '2026-03-02T09:30:00+08:00';
    const res = await create({
      model: 'service-minutes',
      file_url: media('weekly-sync.mp3', { sim_duration_ms: '180000', sim_asr_delay_ms: '600' }),
      recorded_at: recordedAt,
      timezone: 'Asia/Shanghai',
      source_lang: 'en_us',
      // Ignored for service-minutes: its report always covers the same ground.
      all_activate: true,
      features: { qa: true },
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.have.keys(['id', 'request_id', 'model', 'status', 'created_at']);
    expect(res.body).to.deep.include({ model: 'service-minutes', status: 'processing', request_id: res.headers.get('x-request-id') });
    expect(res.body.id).to.match(/^mins_/);
    expect((await balance()).frozen - before.frozen).to.equal(SERVICE_ESTIMATE);

    const early = (await get(res.body.id)).body;
    expect(early.status).to.equal('processing');
    for (const member of ['transcription', 'summary', 'chapters', 'extraction', 'translation', 'report']) expect(early[member], member).to.equal(null);

    const task = await settled(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task).to.include({ transcription_status: 'succeeded', summary_status: 'succeeded', error: null });

    const report = task.report;
    expectValidReport(report);
    expectReferencesSound(report);
    expect(report.version).to.equal(2);
    expect(report.metadata).to.deep.equal({ title: report.metadata.title, recordedAt, timezone: 'Asia/Shanghai', durationMs: 180_000 });
    expect(report.metadata.title).to.be.a('string').and.not.equal('');
    expect(report.quality).to.deep.equal({ status: 'complete', issues: [] });
    expect(report.overview.verification).to.equal('sourced');
    expect(report.overview.sourceSegmentIds).to.have.length.greaterThan(0);
    for (const member of ['keyPoints', 'sections', 'chapters', 'todos', 'decisions', 'quotes', 'reviewItems', 'visuals']) expect(report[member], member).to.have.length.greaterThan(0);
    expect(report.sections[0].children, 'sections are recursive').to.have.length(1);
    expect(report.chapters[0].children, 'chapters are recursive').to.have.length(2);
    expect(report.todos[0]).to.include({ status: 'pending', deadline: 'next Friday' });
    expect(report.decisions[0].status).to.equal('proposed');
    expect(report.reviewItems[0]).to.include({ kind: 'proper_noun', originalText: 'Kubernetes', status: 'pending' });
    expect(report.visuals[0]).to.include({ type: 'hierarchy', origin: 'summary_structure' });
    expect(report.speakers).to.have.length(3);
    // The segments are the transcript's, authoritative.
    expect(report.segments.map((s: any) => [s.id, s.text, s.startMs, s.endMs, s.speakerId])).to.deep.equal(
      task.transcription.sentences.map((s: any) => [s.id, s.content, s.start_time, s.end_time, s.speaker.id]),
    );
    expect(report.segments[report.segments.length - 1].endMs).to.equal(180_000);

    expect(task.transcription.duration_ms).to.equal(180_000);
    expect(task.transcription.sentences[0]).to.include.keys(['id', 'content', 'start_time', 'end_time', 'speaker']);
    expect(task.transcription.sentences[0].speaker).to.deep.equal({ id: 'spk-1', name: 'Speaker 1' });

    // The legacy members, rendered from the report.
    expect(task.summary).to.deep.equal({ title: report.metadata.title, paragraph: blockText(report.overview), quality: 'complete' });
    expect(task.chapters.chapter_summary).to.have.length(report.chapters.length);
    expect(task.chapters.chapter_summary[0]).to.include({ title: blockText(report.chapters[0].heading), start_time: report.chapters[0].startMs, end_time: report.chapters[0].endMs });
    expect(task.chapters.chapter_summary[0].children_paras).to.have.length(2);
    expect(task.chapters.chapter_summary[1]).not.to.have.property('children_paras');
    expect(task.extraction).to.have.keys(['todos', 'decisions', 'quotes']);
    expect(task.extraction.todos).to.have.length(report.todos.length);
    expect(task.extraction.todos[0]).to.include({ content: blockText(report.todos[0].action), deadline: 'next Friday' });
    expect(task.extraction.quotes[0]).to.include({ text: report.quotes[0].text, speaker: 'Speaker 1' });
    expect(task.translation).to.equal(null);

    const u = task.usage;
    expect(u).to.have.keys(['duration_ms', 'features', 'all_activate', 'engine', 'rate_per_hour', 'amount', 'asr_amount', 'flash_amount', 'flash_input_tokens', 'flash_output_tokens']);
    expect(u).to.deep.include({ duration_ms: 180_000, features: ['summary', 'chapters', 'todos'], all_activate: false, engine: 'auc_flash', rate_per_hour: SERVICE_RATE });
    expect(u.flash_input_tokens).to.be.greaterThan(100);
    expect(u.flash_output_tokens).to.be.greaterThan(100);
    expect(u.asr_amount).to.equal(asrAmount(180_000, SERVICE_RATE));
    expect(u.flash_amount).to.equal(flashAmount(u.flash_input_tokens, u.flash_output_tokens));
    expect(u.amount).to.equal(u.asr_amount + u.flash_amount);

    const after = await balance();
    expect(before.available - after.available).to.equal(u.amount);
    const entry = await lastLedgerEntry();
    expect(entry).to.include({ type: 'settlement', amount: u.amount });
    expect(await speechCalls(res.body.id), 'a recording within 100 MB: one flash call, nothing submitted').to.deep.equal({ submit: 0, query: 0, flash: 1 });
  });

  it('Idempotency-Key: concurrent creates make one task and one reservation; in progress is 429 with Retry-After, another body 400, in shape B', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const body = { model: 'service-minutes', file_url: media('once.mp3', { sim_duration_ms: '60000' }) };
    const headers = { 'idempotency-key': 'minutes-burst' };
    const sentAt = Date.now();
    const answers = await Promise.all(Array.from({ length: 6 }, async () => ({ ...(await gw.api(fresh.key, 'POST', '/v1/audio/minutes', body, headers)), receivedAt: Date.now() })));
    const created = answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') === null);
    expect(created, JSON.stringify(answers.map((a) => a.status))).to.have.length(1);
    // A loser is told the whole seconds left on the winner's lease (IDEMPOTENCY_LEASE_MS) when it was answered.
    const secondsLeftAt = await leaseSecondsLeft(gw.store, fresh.accountId, 'minutes-burst');
    for (const a of answers) {
      if (a.status === 200) {
        expect(a.body.id).to.equal(created[0]!.body.id);
      } else {
        expect(a.status, JSON.stringify(a.body)).to.equal(429);
        expect(a.body).to.have.keys('error', 'type');
        expect(a.body.type).to.equal('rate_limit_error');
        expect(Number(a.headers.get('retry-after'))).to.be.within(secondsLeftAt(a.receivedAt), secondsLeftAt(sentAt));
      }
    }
    const reused = await gw.api(fresh.key, 'POST', '/v1/audio/minutes', { ...body, source_lang: 'en_us' }, headers);
    expect(reused.status).to.equal(400);
    expect(reused.body).to.deep.equal({ error: reused.body.error, type: 'invalid_request_error' });
    expect(reused.body.error).to.match(/Idempotency-Key/);
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${fresh.accountId}/ledger`)).body.data as { type: string }[];
    expect(ledger.filter((e) => e.type === 'reservation'), 'exactly one reservation').to.have.length(1);
    expect(ledger.filter((e) => e.type === 'release'), 'nothing reserved and released by the others').to.have.length(0);
    await settled(created[0]!.body.id, fresh.key);
  });

  it('runs partner-minutes on Tingwu with the requested features: transcript, summary, todos and a translation, billed by duration', async () => {
    const before = await balance();
    const res = await create({
      model: 'partner-minutes',
      file_url: media('board.m4a', { sim_duration_ms: '95000' }),
      source_lang: 'zh_cn',
      speaker_identification: true,
      number_of_speakers: 2,
      features: { summary: true, todos: true, translate: true, target_lang: 'en_us' },
    });
    expect(res.status).to.equal(200);
    expect((await balance()).frozen - before.frozen).to.equal(PARTNER_ESTIMATE);
    const task = await settled(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task.report).to.equal(null);
    const sentences = task.transcription.sentences as any[];
    expect(sentences).to.have.length.greaterThan(5);
    // Tingwu's SpeakerIds, named as Tingwu names them in its summaries.
    expect(task.transcription.speakers).to.deep.equal([{ id: '1', name: '发言人1' }, { id: '2', name: '发言人2' }]);
    expect(new Set(sentences.map((s) => s.speaker.id))).to.deep.equal(new Set(['1', '2']));
    expect(sentences[sentences.length - 1].end_time).to.equal(95_000);
    expect(task.summary).to.have.keys(['title', 'paragraph']);
    expect(task.summary.paragraph).to.include('项目例会');
    expect(task.chapters, 'not requested').to.equal(null);
    // The extraction keeps Tingwu's structure: MeetingAssistance's action items, each naming its sentence.
    expect(task.extraction).to.have.keys(['todos']);
    const todo = task.extraction.todos[0];
    expect(todo).to.have.keys(['Id', 'SentenceId', 'Start', 'End', 'Text']);
    expect(todo.Text).to.include('预算表');
    expect(sentences.find((s) => s.id === String(todo.SentenceId))).to.deep.include({ content: todo.Text, start_time: todo.Start, end_time: todo.End });
    // So does the translation: Tingwu's paragraphs of sentences, one for each sentence transcribed.
    expect(task.translation).to.have.keys(['Paragraphs']);
    const translated = (task.translation.Paragraphs as any[]).flatMap((p) => p.Sentences);
    expect(translated.map((s) => String(s.SentenceId))).to.deep.equal(sentences.map((s) => s.id));
    expect(translated[0].Text).to.equal("Good morning everyone, let's start the weekly project sync.");
    const u = task.usage;
    expect(u).to.have.keys(['duration_ms', 'features', 'all_activate', 'engine', 'rate_per_hour', 'amount', 'flash_input_tokens', 'flash_output_tokens']);
    expect(u).to.deep.equal({
      duration_ms: 95_000,
      features: ['summary', 'todos', 'translate'],
      all_activate: false,
      engine: 'partner_minutes',
      rate_per_hour: PARTNER_RATE,
      amount: asrAmount(95_000, PARTNER_RATE),
      flash_input_tokens: 0,
      flash_output_tokens: 0,
    });
    expect(before.available - (await balance()).available).to.equal(asrAmount(95_000, PARTNER_RATE));
  });

  it('runs partner-minutes on Tingwu with all_activate: every extra, word times on request', async () => {
    const res = await create({ model: 'partner-minutes', file_url: media('all-hands.mp4', { sim_duration_ms: '61000' }), source_lang: 'en_us', all_activate: true, need_word_time_series: true });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task.summary.title).to.equal('Meeting minutes');
    expect(task.chapters.chapter_summary).to.have.length.greaterThan(0);
    expect(task.chapters.chapter_summary[0]).to.have.keys(['title', 'summary', 'start_time', 'end_time']);
    expect(task.chapters.chapter_summary[0].start_time).to.equal(task.transcription.sentences[0].start_time);
    expect(task.extraction).to.have.keys(['todos', 'qa']);
    expect(task.extraction.qa[0]).to.have.keys(['Question', 'SentenceIdsOfQuestion', 'Answer', 'SentenceIdsOfAnswer']);
    expect(task.extraction.qa[0].Answer).to.include('plan B');
    expect(task.translation.Paragraphs[0].Sentences[0].Text, 'into the other language').to.equal('大家早上好，我们开始本周的项目例会。');
    expect(task.transcription.speakers.map((s: any) => s.name)).to.deep.equal(['Speaker 1', 'Speaker 2', 'Speaker 3']);
    const first = task.transcription.sentences[0];
    expect(first.words.length).to.be.greaterThan(3);
    expect(first.words.map((w: any) => w.text).join(' ')).to.equal(first.content);
    expect(first.words[0].start_time).to.equal(first.start_time);
    expect(first.words[first.words.length - 1].end_time).to.equal(first.end_time);
    expect(task.usage).to.deep.include({ all_activate: true, features: ['summary', 'chapters', 'todos', 'qa', 'translate'], amount: asrAmount(61_000, PARTNER_RATE) });
  });

  /** The settlement of a task's reservation as the ledger records it, with its event's data (the entry's `event_id` in the log). */
  const settlementOf = async (taskId: string) => {
    const submitted = (await gw.store.readStream(`minutes-${taskId}`)).find((e) => e.type === 'TaskSubmitted')!;
    const reservationId = (submitted.data as { reservationId: string }).reservationId;
    const rows = await waitFor('the settlement in the ledger', async () => {
      const { rows } = await gw.pool.query(`SELECT l.amount, e.data AS details FROM rm.ledger_entries l JOIN es_events e USING (event_id) WHERE l.reservation_id = $1 AND l.entry_type = 'settlement'`, [reservationId]);
      return rows.length > 0 ? rows : null;
    });
    expect(rows, 'one settlement of the task reservation').to.have.length(1);
    return rows[0].details as { amount: number; reservedAmount: number; overrun: number; usage: Record<string, any>; channel?: string; channels?: string[] };
  };
  /** What a minutes task's settlement names: the transcription's channel as its main call, and the summary's beside it. */
  const minutesChannels = (model: string) => {
    const asr = gw.catalog.get(model)!.channel;
    const summary = gw.catalog.get('chat-fast')!.channel;
    expect(asr).to.not.equal(summary);
    return { channel: asr, channels: [asr, summary].sort() };
  };
  const stepsOf = async (taskId: string) => (await gw.store.readStream(`minutes-${taskId}`)).filter((e) => e.type === 'TaskStageStepCompleted').map((e) => (e.data as { step: number }).step);

  /** A complete, bounded report on the whole recording, every summary call settled within the reservation. */
  async function expectSummarisedInParts(id: string, durationMs: number, minCalls: number) {
    const task = await settled(id);
    expect(task).to.include({ status: 'succeeded', transcription_status: 'succeeded', summary_status: 'succeeded', error: null });
    const report = task.report;
    expectValidReport(report);
    expectReferencesSound(report);
    expect(report.version).to.equal(2);
    expect(report.quality).to.deep.equal({ status: 'complete', issues: [] });
    expect(report.metadata.durationMs).to.equal(durationMs);
    expect(report.segments[report.segments.length - 1].endMs).to.equal(durationMs);
    // Bounded, and the chapters still span the whole recording.
    for (const [member, cap] of Object.entries(MERGE_CAPS)) expect(report[member].length, member).to.be.within(1, cap);
    expect(report.chapters[0].startMs).to.equal(0);
    expect(report.chapters[report.chapters.length - 1].endMs).to.equal(durationMs);
    expect(report.todos.length).to.be.greaterThan(minCalls);

    const settlement = await settlementOf(id);
    const calls = settlement.usage.flash_calls as { input_tokens: number; output_tokens: number; amount: number }[];
    expect(calls.length, 'summary calls settled').to.be.at.least(minCalls);
    expect(await stepsOf(id), 'one recorded step per call').to.deep.equal(calls.map((_, k) => k));
    for (const c of calls) {
      expect(c.amount).to.equal(flashAmount(c.input_tokens, c.output_tokens));
      expect(c.input_tokens, 'within a part prompt').to.be.at.most(1_024);
      expect(c.output_tokens, 'within the output limit').to.be.at.most(4_096);
    }
    expect(settlement.usage.flash_amount).to.equal(calls.reduce((sum, c) => sum + c.amount, 0));
    expect(settlement.amount).to.equal(asrAmount(durationMs, SERVICE_RATE) + settlement.usage.flash_amount);
    expect(settlement.reservedAmount, 'the frozen estimate').to.equal(SERVICE_ESTIMATE);
    expect(settlement.overrun, 'the reservation covers every call').to.equal(0);
    expect({ channel: settlement.channel, channels: settlement.channels }).to.deep.equal(minutesChannels('service-minutes'));
    expect(task.usage).to.deep.include({ amount: settlement.amount, flash_amount: settlement.usage.flash_amount });
    expect(task.usage.flash_input_tokens).to.equal(calls.reduce((sum, c) => sum + c.input_tokens, 0));
    return { task, calls };
  }

  it('summarises exactly 2 hours in parts on service-minutes, and transcribes 2 hours on partner-minutes', async () => {
    const zh = await create({ model: 'service-minutes', file_url: media('offsite.mp3', { sim_duration_ms: '7200000', sim_asr_delay_ms: '0', ...STANDARD }) });
    const en = await create({ model: 'service-minutes', file_url: media('offsite-en.mp3', { sim_duration_ms: '7200000', sim_asr_delay_ms: '0' }), source_lang: 'en_us' });
    const partner = await create({ model: 'partner-minutes', file_url: media('offsite.m4a', { sim_duration_ms: '7200000', sim_asr_delay_ms: '0' }), all_activate: true });
    for (const r of [zh, en, partner]) expect(r.status).to.equal(200);

    const { task, calls } = await expectSummarisedInParts(zh.body.id, 7_200_000, 2);
    const standard = await speechCalls(zh.body.id);
    expect([standard.submit, standard.flash], 'over 100 MB: submitted once to the standard recognition').to.deep.equal([1, 0]);
    expect(standard.query).to.be.at.least(1);
    // 2 hours of the simulator's speech give more chapters than the cap: grouped, not dropped.
    expect(task.chapters.chapter_summary).to.have.length(report(task).chapters.length);
    expect(report(task).chapters.some((c: any) => c.children.length > 1)).to.equal(true);
    expect(calls.length).to.be.at.most(SUMMARY_PARTS);
    await expectSummarisedInParts(en.body.id, 7_200_000, 2);

    const p = await settled(partner.body.id);
    expect(p).to.include({ status: 'succeeded', error: null });
    expect(p.transcription.sentences[p.transcription.sentences.length - 1].end_time).to.equal(7_200_000);
    expect(p.usage).to.deep.include({ duration_ms: 7_200_000, amount: asrAmount(7_200_000, PARTNER_RATE) });
  });
  const report = (task: any) => task.report;

  it('summarises 9 and 10 minutes (past one call\'s output limit) in parts, and so does POST /v1/summaries', async () => {
    const ids: string[] = [];
    for (const ms of [540_000, 600_000]) {
      const res = await create({ model: 'service-minutes', file_url: media(`sync-${ms}.mp3`, { sim_duration_ms: String(ms), sim_asr_delay_ms: '0' }) });
      expect(res.status).to.equal(200);
      await expectSummarisedInParts(res.body.id, ms, 2);
      ids.push(res.body.id);
    }

    // A new summary of the 10-minute task: in parts too, each call settled within its own reservation.
    const asked = await gw.api(key, 'POST', '/v1/summaries', { task_id: ids[1] });
    expect(asked.status).to.equal(202);
    const summary = await waitFor('the new summary', async () => {
      const s = (await gw.api(key, 'GET', `/v1/summaries/${asked.body.id}`)).body;
      return s.status !== 'processing' ? s : null;
    });
    expect(summary).to.include({ status: 'succeeded', summary_status: 'succeeded' });
    expectValidReport(summary.report);
    expectReferencesSound(summary.report);
    expect(summary.report.quality.status).to.equal('complete');
    await waitFor('the summary reservation to close', async () => (await balance()).frozen === 0);
    const submitted = (await gw.store.readStream(`summary-${asked.body.id}`)).find((e) => e.type === 'TaskSubmitted')!.data as { reservationId: string };
    const settlement = await waitFor('the summary settlement in the ledger', async () => {
      const { rows } = await gw.pool.query(`SELECT e.data AS details FROM rm.ledger_entries l JOIN es_events e USING (event_id) WHERE l.reservation_id = $1 AND l.entry_type = 'settlement'`, [submitted.reservationId]);
      return rows[0]?.details;
    });
    expect(settlement.usage.flash_calls.length).to.be.at.least(2);
    expect(settlement.amount).to.equal(settlement.usage.flash_calls.reduce((sum: number, c: any) => sum + flashAmount(c.input_tokens, c.output_tokens), 0));
    expect(settlement.overrun).to.equal(0);
    // The summary task's calls all went to the summary model's one channel.
    expect([settlement.channel, settlement.channels]).to.deep.equal([gw.catalog.get('chat-fast')!.channel, undefined]);
  });

  it('resumes a summary in parts after a restart at the first part not recorded, without calling or billing a recorded part again', async () => {
    // A task whose transcription never ends by itself: its stream gets the transcription and the
    // first summary part appended, as a process that died after recording that part left them.
    const res = await create({ model: 'service-minutes', file_url: media('resume.mp3', { sim_asr_delay_ms: '600000', ...STANDARD }) });
    expect(res.status).to.equal(200);
    const id = res.body.id as string;
    const stream = `minutes-${id}`;
    const sim = simulatedTranscript({ durationMs: 1_200_000, language: 'zh_cn', speakers: 3, speakerIdentification: true, words: false, summaryDirective: null });
    const transcript: Transcript = { ...sim, speakers: sim.speakers.map((s) => ({ id: s.id, displayName: s.name })) };
    const context = { transcript, recordedAt: '', timezone: '', fallbackTitle: 'resume' };
    const first = assembleReport({ title: 'Recorded before the restart', overview: { text: 'The first part.', sourceSegmentIds: ['seg-1'] } }, context)!;
    const recorded = { flash_input_tokens: 1_000, flash_output_tokens: 3_000 };
    for (;;) {
      const head = await gw.store.streamHead(stream);
      const at = new Date().toISOString();
      try {
        await gw.store.append(
          stream,
          [
            { type: 'TaskUpstreamSucceeded', data: { result: { transcript }, usage: { duration_ms: 1_200_000 }, artifacts: [], stage: 'summary', at } },
            { type: 'TaskStageStepCompleted', data: { stage: 'summary', step: 0, result: { report: partReportOf(first) }, usage: recorded, at } },
          ],
          { expectedVersion: head!.revision },
        );
        break;
      } catch (err) {
        if (!(err instanceof WrongExpectedVersionError)) throw err; // a poll recorded progress meanwhile
      }
    }
    const task = await settled(id);
    expect(task).to.include({ status: 'succeeded', summary_status: 'succeeded' });
    expect(task.report.metadata.title, 'the recorded part was kept, not written again').to.equal('Recorded before the restart');
    expectValidReport(task.report);
    expectReferencesSound(task.report);
    const calls = (await settlementOf(id)).usage.flash_calls;
    expect(calls.length).to.be.at.least(3);
    expect(calls[0]).to.deep.equal({ input_tokens: 1_000, output_tokens: 3_000, amount: flashAmount(1_000, 3_000) });
    expect(await stepsOf(id), 'each part recorded once').to.deep.equal(calls.map((_: unknown, k: number) => k));
  });

  it('fails a recording one millisecond over 2 hours with an error that shows the millisecond, and releases the money', async () => {
    const before = await balance();
    const res = await create({ model: 'service-minutes', file_url: media('standup.mp3', { sim_duration_ms: '7200001', sim_asr_delay_ms: '0', ...STANDARD }) });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect([task.status, task.error_code, task.error]).to.deep.equal(['failed', 'duration_exceeded', 'the recording is 120 min 0.001 s long; at most 120 min 0 s are accepted']);
    expect((await balance()).available).to.equal(before.available);
  });

  it('fails a task whose transcription fails and releases everything', async () => {
    const before = await balance();
    const res = await create({ model: 'service-minutes', file_url: media('broken.wav', { sim: 'asr_fail' }) });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect(task.status).to.equal('failed');
    expect(task.error_code).to.equal('transcription_failed');
    expect(task.error).to.include('could not be decoded');
    for (const member of ['report', 'transcription', 'summary', 'chapters', 'extraction', 'translation']) expect(task[member], member).to.equal(null);
    expect(task).not.to.have.property('transcription_status');
    expect(task.usage).to.deep.include({ duration_ms: 0, amount: 0, asr_amount: 0, flash_amount: 0 });
    expect(await balance()).to.deep.equal({ ...before, currency: 'CNY' });
  });

  it('downloads the transcription of a partner task Tingwu runs for a while once for its length, not on every poll, and once more for the result', async () => {
    // Tingwu links the transcription from 1.2 s (a fifth of the 6 s it takes) until it completes:
    // the polls at about 20 ms × 2ⁿ see it ONGOING and linked several times.
    const res = await create({ model: 'partner-minutes', file_url: media('standup.mp3', { sim_duration_ms: '30000', sim_asr_delay_ms: '6000' }), features: { summary: true } });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task.usage.duration_ms).to.equal(30000);
    const calls = (await (await fetch(`${gw.simulator.url}/sim/tingwu/calls/${res.body.id}`)).json()) as { ongoingLinked: number; downloads: Record<string, number> };
    expect(calls.ongoingLinked, 'polls that saw the transcription linked while ONGOING').to.be.at.least(2);
    expect(calls.downloads).to.deep.equal({ Transcription: 2, Summarization: 1 });
  });

  it('fails a recording over 2 hours with a clear error, as soon as the ASR reports its length, and releases the money', async () => {
    const before = await balance();
    // The simulated ASR reports the length while running and never finishes (asr_hold): the task
    // can only fail on the length reported while the ASR runs.
    const res = await create({ model: 'partner-minutes', file_url: media('offsite.mp3', { sim_duration_ms: '7300000', sim: 'asr_hold' }), features: { summary: true } });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect(task.status).to.equal('failed');
    expect(task.error_code).to.equal('duration_exceeded');
    expect(task.error).to.equal('the recording is 121 min 40 s long; at most 120 min 0 s are accepted');
    expect(task.transcription).to.equal(null);
    expect((await balance()).available).to.equal(before.available);
  });

  it('fails a service-minutes recording over 2 hours learned only from the final ASR result, and releases the money', async () => {
    const before = await balance();
    // The ASR finishes at once: no poll ever sees it running, the length comes with the result.
    const res = await create({ model: 'service-minutes', file_url: media('retreat.mp3', { sim_duration_ms: '7300000', sim_asr_delay_ms: '0', ...STANDARD }) });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect(task.status).to.equal('failed');
    expect(task.error_code).to.equal('duration_exceeded');
    expect(task.error).to.equal('the recording is 121 min 40 s long; at most 120 min 0 s are accepted');
    for (const member of ['report', 'transcription', 'summary', 'chapters', 'extraction']) expect(task[member], member).to.equal(null);
    expect(task).not.to.have.property('summary_status');
    expect(task.usage).to.deep.include({ amount: 0, asr_amount: 0, flash_amount: 0 });
    const events = (await gw.store.readStream(`minutes-${res.body.id}`)).map((e) => e.type);
    expect(events, 'never seen running').not.to.include('TaskProgressed');
    expect(events).not.to.include('TaskUpstreamSucceeded');
    expect(events).to.include('TaskFailed');
    expect(await balance()).to.deep.equal({ ...before, currency: 'CNY' });
  });

  it('on the flash recognition, fails a recording over 2 hours with the refusal flash answers for it, and releases the money', async () => {
    const before = await balance();
    // Within 100 MB, so flash, whose reference refuses recordings over 2 hours: the gateway learns no length, only the refusal.
    const res = await create({ model: 'service-minutes', file_url: media('retreat-low-bitrate.mp3', { sim_duration_ms: '7300000', sim_asr_delay_ms: '0' }) });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect([task.status, task.error_code, task.error]).to.deep.equal(['failed', 'transcription_failed', 'the transcription failed: the audio is longer than 2 hours: use the standard recognition (45000001)']);
    expect(task.usage).to.deep.include({ duration_ms: 0, amount: 0 });
    expect(await balance()).to.deep.equal({ ...before, currency: 'CNY' });
    expect(await speechCalls(res.body.id)).to.deep.equal({ submit: 0, query: 0, flash: 1 });
  });

  it("on the flash recognition, learns the provider's refusal of the file or its silence at the first poll (flash has no submission): failed, released", async () => {
    const before = await balance();
    const refused = await create({ model: 'service-minutes', file_url: media('a.mp3', { sim: 'asr_reject' }) });
    const silent = await create({ model: 'service-minutes', file_url: media('quiet.mp3', { sim: 'asr_silent' }) });
    for (const res of [refused, silent]) expect([res.status, res.body.status], JSON.stringify(res.body)).to.deep.equal([200, 'processing']);
    const r = await settled(refused.body.id);
    expect([r.status, r.error_code, r.error]).to.deep.equal(['failed', 'transcription_failed', 'the transcription failed: the audio format is not supported (45000151)']);
    const q = await settled(silent.body.id);
    expect([q.status, q.error_code, q.error]).to.deep.equal(['failed', 'transcription_failed', 'the transcription failed: the recording is silent: no speech was recognised (20000003)']);
    expect(await balance()).to.deep.equal({ ...before, currency: 'CNY' });
  });

  it('calls flash again when its answer was lost (a dropped connection, as a crash mid-call leaves it), and bills the recording once', async () => {
    const before = await balance();
    const res = await create({ model: 'service-minutes', file_url: media('dropped.mp3', { sim_duration_ms: '60000', sim: 'asr_drop_once' }), source_lang: 'en_us' });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect(task).to.include({ status: 'succeeded', error: null });
    expect(task.transcription.duration_ms).to.equal(60_000);
    expect(await speechCalls(res.body.id), 'the lost call, then the one that completed the task').to.deep.equal({ submit: 0, query: 0, flash: 2 });
    const settlement = await settlementOf(res.body.id);
    expect(settlement.amount).to.equal(asrAmount(60_000, SERVICE_RATE) + settlement.usage.flash_amount);
    expect(before.available - (await balance()).available, 'charged once').to.equal(settlement.amount);
  });

  it('keeps the transcript and bills it when only the summary fails: failed, unavailable report, ASR settled, the rest released', async () => {
    const before = await balance();
    const res = await create({ model: 'service-minutes', file_url: media('standup.mp3', { sim_duration_ms: '120000', sim_summary: 'fail' }), recorded_at: '2026-03-03T10:00:00Z' });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect(task.status).to.equal('failed');
    expect(task).to.include({ transcription_status: 'succeeded', summary_status: 'failed', error_code: 'summary_failed' });
    expectValidReport(task.report);
    expect(task.report.quality).to.deep.equal({ status: 'unavailable', issues: [{ code: 'summary_failed', path: '' }] });
    expect(task.report.metadata).to.deep.equal({ title: 'standup', recordedAt: '2026-03-03T10:00:00Z', timezone: '', durationMs: 120_000 });
    expect(task.report.segments).to.have.length(task.transcription.sentences.length);
    expect(task.report.keyPoints).to.deep.equal([]);
    expect(task.transcription.sentences.length).to.be.greaterThan(5);
    expect(task.summary).to.deep.equal({ title: 'standup', paragraph: '', quality: 'unavailable' });
    expect(task.chapters).to.equal(null);
    expect(task.extraction).to.equal(null);
    // The transcription is billed; no summary tokens were observed (every attempt failed).
    expect(task.usage).to.deep.include({ duration_ms: 120_000, asr_amount: asrAmount(120_000, SERVICE_RATE), flash_amount: 0, flash_input_tokens: 0, flash_output_tokens: 0 });
    expect(task.usage.amount).to.equal(asrAmount(120_000, SERVICE_RATE));
    expect(before.available - (await balance()).available).to.equal(task.usage.amount);
    expect(await lastLedgerEntry()).to.include({ type: 'settlement', amount: task.usage.amount });
  });

  it('marks a report partial when the model references missing segments, and removes those items', async () => {
    const res = await create({ model: 'service-minutes', file_url: media('retro.mp3', { sim_duration_ms: '150000', sim_summary: 'dangling' }), source_lang: 'en_us' });
    const task = await settled(res.body.id);
    expect(task.status).to.equal('succeeded');
    const report = task.report;
    expectValidReport(report);
    expectReferencesSound(report);
    expect(report.quality.status).to.equal('partial');
    const issues = report.quality.issues as { code: string; path: string }[];
    const keyPoints = report.keyPoints.length;
    expect(issues).to.deep.include({ code: 'dangling_segment_reference', path: `/keyPoints/${keyPoints}` });
    expect(issues.map((i) => i.code)).to.include.members(['dangling_segment_reference', 'time_out_of_range', 'duplicate_id', 'unknown_speaker']);
    expect(report.todos.map((t: any) => t.id)).not.to.include('todo-ghost');
    expect(report.chapters.map((c: any) => c.id)).not.to.include('ch-late');
    expect(report.quotes.map((q: any) => q.id)).to.deep.equal(['quote-1', 'quote-2']);
    // recordedAt comes only from the request: none given, none invented (not the creation time).
    expect(report.metadata.recordedAt).to.equal('');
    expect(task.summary.quality).to.equal('partial');
    expect(task.usage.amount).to.equal(task.usage.asr_amount + task.usage.flash_amount);
  });

  it('bills the observed tokens of an unusable summary; POST /v1/summaries then writes a new one, billed on its own', async () => {
    const before = await balance();
    const res = await create({ model: 'service-minutes', file_url: media('review.mp3', { sim_duration_ms: '90000', sim_summary: 'invalid-once' }), source_lang: 'en_us' });
    const task = await settled(res.body.id);
    expect(task.status).to.equal('failed');
    expect(task).to.include({ summary_status: 'failed', error_code: 'summary_unavailable' });
    expect(task.report.quality).to.deep.equal({ status: 'unavailable', issues: [{ code: 'summary_unparseable', path: '' }] });
    expect(task.usage.flash_input_tokens).to.be.greaterThan(0);
    expect(task.usage.flash_output_tokens).to.be.greaterThan(0);
    expect(task.usage.flash_amount).to.equal(flashAmount(task.usage.flash_input_tokens, task.usage.flash_output_tokens));
    expect(task.usage.amount).to.equal(asrAmount(90_000, SERVICE_RATE) + task.usage.flash_amount);
    // The unusable call is billed, and so is its channel named.
    const charged = await settlementOf(res.body.id);
    expect({ channel: charged.channel, channels: charged.channels }).to.deep.equal(minutesChannels('service-minutes'));
    const afterTask = await balance();
    expect(before.available - afterTask.available).to.equal(task.usage.amount);

    // Nothing retries by itself: no summary work is left scheduled for the task (its timeout timer
    // may still be, and only fails a summary that is running), so it stays failed until one is asked for.
    const { rows: scheduled } = await gw.pool.query(`SELECT kind FROM jobs WHERE key = $1 AND kind = 'minutes.summary'`, [`minutes-${res.body.id}`]);
    expect(scheduled).to.deep.equal([]);
    expect((await get(res.body.id)).body.summary_status).to.equal('failed');

    expect((await gw.api(other, 'POST', '/v1/summaries', { task_id: res.body.id })).status, "another account's task").to.equal(404);
    const asked = await gw.api(key, 'POST', '/v1/summaries', { task_id: res.body.id });
    expect(asked.status).to.equal(202);
    expect(asked.body).to.have.keys(['id', 'object', 'request_id', 'task_id', 'model', 'status', 'created_at']);
    expect(asked.body).to.deep.include({ object: 'minutes.summary', task_id: res.body.id, model: 'chat-fast', status: 'processing' });
    expect(asked.body.id).to.match(/^sum_/);
    const summary = await waitFor('the new summary', async () => {
      const s = (await gw.api(key, 'GET', `/v1/summaries/${asked.body.id}`)).body;
      return s.status !== 'processing' ? s : null;
    });
    await waitFor('the summary reservation to close', async () => (await balance()).frozen === 0);
    const done = (await gw.api(key, 'GET', `/v1/summaries/${asked.body.id}`)).body;
    expect(summary.status).to.equal('succeeded');
    expectValidReport(done.report);
    expectReferencesSound(done.report);
    expect(done.report.quality).to.deep.equal({ status: 'complete', issues: [] });
    expect(done.report.segments).to.deep.equal(task.report.segments);
    expect(done.summary.quality).to.equal('complete');
    expect(done.usage.amount).to.equal(flashAmount(done.usage.flash_input_tokens, done.usage.flash_output_tokens));
    expect(afterTask.available - (await balance()).available).to.equal(done.usage.amount);
    expect(await lastLedgerEntry()).to.include({ type: 'settlement', amount: done.usage.amount });
    // The minutes task itself is history: neither its data nor its billing changed.
    expect((await get(res.body.id)).body).to.deep.equal(task);
    const list = (await gw.api(key, 'GET', '/v1/summaries')).body;
    expect(list.data.map((s: any) => s.id)).to.include(asked.body.id);
  });

  it('reads a stored result whose summary is unavailable as failed, without rewriting its data or billing', async () => {
    const res = await create({ model: 'service-minutes', file_url: media('garbled.mp3', { sim_duration_ms: '30000', sim_summary: 'invalid' }), source_lang: 'en_us' });
    await settled(res.body.id);
    // A new summary whose answer is unusable again: stored as the upstream's result, billed by its tokens.
    const asked = await gw.api(key, 'POST', '/v1/summaries', { task_id: res.body.id });
    expect(asked.status).to.equal(202);
    await waitFor('the summary to be billed', async () => {
      const { rows } = await gw.pool.query(`SELECT billing_status FROM rm.tasks WHERE task_id = $1`, [asked.body.id]);
      return rows[0]?.billing_status === 'settled';
    });
    const { rows } = await gw.pool.query(`SELECT status, billed_amount, usage, result->'report'->'quality' AS quality FROM rm.tasks WHERE task_id = $1`, [asked.body.id]);
    expect(rows[0].status, 'stored as the upstream answered').to.equal('succeeded');
    expect(rows[0].quality).to.deep.equal({ status: 'unavailable', issues: [{ code: 'summary_unparseable', path: '' }] });
    const view = (await gw.api(key, 'GET', `/v1/summaries/${asked.body.id}`)).body;
    expect(view).to.deep.include({ status: 'failed', summary_status: 'failed', error_code: 'summary_unavailable' });
    expect(view.usage.amount).to.equal(Number(rows[0].billed_amount));
    expect(view.usage.amount).to.equal(flashAmount(rows[0].usage.flash_input_tokens, rows[0].usage.flash_output_tokens));
    const listed = (await gw.api(key, 'GET', '/v1/summaries?limit=100')).body.data.find((s: any) => s.id === asked.body.id);
    expect(listed.status, 'the list view agrees').to.equal('failed');
  });

  it('reads a historical succeeded minutes task whose report is unavailable as failed/failed in both views, rewriting nothing', async () => {
    // A task whose transcription runs for minutes: its stream gets a historical ending appended
    // while it waits, the shape results had before the summary stage existed (the report in the
    // upstream's result, stored as succeeded).
    const res = await create({ model: 'service-minutes', file_url: media('legacy.mp3', { sim_asr_delay_ms: '600000', ...STANDARD }), source_lang: 'en_us' });
    expect(res.status).to.equal(200);
    const id = res.body.id as string;
    const stream = `minutes-${id}`;
    const transcript: Transcript = {
      durationMs: 60_000,
      language: 'en_us',
      speakers: [{ id: 'spk-1', displayName: 'Speaker 1' }],
      segments: [
        { id: 'seg-1', text: 'Good morning everyone.', startMs: 0, endMs: 30_000, speakerId: 'spk-1' },
        { id: 'seg-2', text: 'That is all for today.', startMs: 30_000, endMs: 60_000, speakerId: 'spk-1' },
      ],
    };
    const report = unavailableReport({ transcript, recordedAt: '', timezone: '', fallbackTitle: 'legacy' }, [{ code: 'summary_unparseable', path: '' }]);
    const usage = { duration_ms: 60_000, flash_input_tokens: 1_200, flash_output_tokens: 30 };
    for (;;) {
      const head = await gw.store.streamHead(stream);
      const at = new Date().toISOString();
      try {
        await gw.store.append(
          stream,
          [
            { type: 'TaskUpstreamSucceeded', data: { result: { transcript, report, transcription_status: 'succeeded', summary_status: 'succeeded' }, usage, artifacts: [], at } },
            { type: 'TaskSucceeded', data: { at } },
          ],
          { expectedVersion: head!.revision },
        );
        break;
      } catch (err) {
        if (!(err instanceof WrongExpectedVersionError)) throw err; // a poll recorded progress meanwhile
      }
    }
    // Settled as stored (ASR + the recorded tokens), archived, and the read model caught up.
    const stored = await waitFor('the historical task to be settled and folded', async () => {
      const head = await gw.store.streamHead(stream);
      const { rows } = await gw.pool.query(`SELECT * FROM rm.tasks WHERE task_id = $1`, [id]);
      const row = rows[0];
      return row && row.billing_status === 'settled' && row.archived !== null && Number(row.revision) === head!.revision ? row : null;
    });
    expect(stored.status, 'stored as succeeded').to.equal('succeeded');
    expect(stored.result.summary_status).to.equal('succeeded');
    expect(Number(stored.billed_amount)).to.equal(asrAmount(60_000, SERVICE_RATE) + flashAmount(1_200, 30));
    const ledgerBefore = (await gw.api(key, 'GET', '/v1/account/ledger?limit=100')).body;
    const eventsBefore = (await gw.store.readStream(stream)).map((e) => e.id);

    const byId = (await get(id)).body;
    expect(byId).to.deep.include({ status: 'failed', transcription_status: 'succeeded', summary_status: 'failed', error_code: 'summary_unavailable' });
    expect(byId.report.quality).to.deep.equal({ status: 'unavailable', issues: [{ code: 'summary_unparseable', path: '' }] });
    expect(byId.usage.amount).to.equal(Number(stored.billed_amount));
    const listed = (await gw.api(key, 'GET', '/v1/audio/minutes?limit=100')).body.data.find((t: any) => t.id === id);
    expect(listed).to.deep.include({ status: 'failed', summary_status: 'failed', error_code: 'summary_unavailable' });

    // Reading changed nothing: the row, the stream and the ledger are as they were.
    const { rows: after } = await gw.pool.query(`SELECT * FROM rm.tasks WHERE task_id = $1`, [id]);
    expect(after[0]).to.deep.equal(stored);
    expect((await gw.store.readStream(stream)).map((e) => e.id)).to.deep.equal(eventsBefore);
    expect((await gw.api(key, 'GET', '/v1/account/ledger?limit=100')).body).to.deep.equal(ledgerBefore);
  });

  it('refuses POST /v1/summaries in shape B without touching any balance: partner task, failed transcription, another account, no money', async () => {
    const partner = await create({ model: 'partner-minutes', file_url: media('talk.mp3', { sim_duration_ms: '20000' }), features: { summary: true } });
    const broken = await create({ model: 'service-minutes', file_url: media('broken.mp3', { sim: 'asr_fail' }) });
    const fine = await create({ model: 'service-minutes', file_url: media('fine.mp3', { sim_duration_ms: '20000' }), source_lang: 'en_us' });
    for (const res of [partner, broken, fine]) expect(res.status).to.equal(200);
    for (const res of [partner, broken, fine]) await settled(res.body.id);
    const summarise = (taskId: string, k = key) => gw.api(k, 'POST', '/v1/summaries', { task_id: taskId });
    const mine = await balance();
    const theirs = await balance(other);

    const notSupported = await summarise(partner.body.id);
    expect(notSupported.status).to.equal(400);
    expect(notSupported.body).to.deep.equal({
      error: 'partner-minutes tasks are summarised by their provider; summaries are written for models with a summary model',
      type: 'invalid_request_error',
    });
    const noTranscript = await summarise(broken.body.id);
    expect(noTranscript.status).to.equal(400);
    expect(noTranscript.body).to.deep.equal({ error: `task ${broken.body.id} has no completed transcription to summarise`, type: 'invalid_request_error' });
    const foreign = await summarise(fine.body.id, other);
    expect(foreign.status).to.equal(404);
    expect(foreign.body).to.deep.equal({ error: `minutes task ${fine.body.id} not found`, type: 'invalid_request_error' });
    expect(await balance(), 'nothing reserved or charged').to.deep.equal(mine);
    expect(await balance(other)).to.deep.equal(theirs);

    // An account that cannot cover a summary's reservation: a short transcript (its summary failing,
    // so only its ASR is billed: 1,000), then exactly 2 hours of partner-minutes (4,800,000), leaves 10.
    const poor = await gw.fundedAccount(1_000 + 4_800_000 + 10);
    const short = await create({ model: 'service-minutes', file_url: media('short.mp3', { sim_duration_ms: '3000', sim_summary: 'fail' }) }, poor.key);
    expect(short.status).to.equal(200);
    expect((await settled(short.body.id, poor.key)).usage.amount).to.equal(1_000);
    const long = await create({ model: 'partner-minutes', file_url: media('long.mp3', { sim_duration_ms: '7200000' }), features: { qa: true } }, poor.key);
    expect(long.status).to.equal(200);
    expect((await settled(long.body.id, poor.key)).usage.amount).to.equal(4_800_000);
    expect(await balance(poor.key)).to.deep.equal({ available: 10, frozen: 0, currency: 'CNY' });
    const broke = await summarise(short.body.id, poor.key);
    expect(broke.status).to.equal(402);
    expect(broke.body).to.deep.equal({ error: 'insufficient balance for this request', type: 'insufficient_balance_error' });
    expect(await balance(poor.key)).to.deep.equal({ available: 10, frozen: 0, currency: 'CNY' });
    expect((await gw.api(poor.key, 'GET', '/v1/summaries')).body.data, 'no summary was created').to.deep.equal([]);
  });

  it('refuses a file of exactly max_file_bytes (the spec\'s "under 1 GB") and accepts one byte less', async () => {
    const before = await balance();
    const atLimit = await create({ model: 'service-minutes', file_url: media('edge.mp4', { sim_bytes: '1073741824' }) });
    expect(atLimit.status).to.equal(400);
    expect(atLimit.body).to.deep.equal({ error: 'the file has 1073741824 bytes; service-minutes accepts files under 1073741824 bytes', type: 'invalid_request_error' });
    expect(await balance()).to.deep.equal({ ...before, currency: 'CNY' });
    const below = await create({ model: 'service-minutes', file_url: media('edge.mp4', { sim_bytes: '1073741823', sim_duration_ms: '20000' }) });
    expect(below.status).to.equal(200);
    await settled(below.body.id);
  });

  it('learns the file size through redirects, or from a one-byte ranged GET when HEAD is refused, and refuses files too large', async () => {
    const ranges: (string | null)[] = [];
    const server = http.createServer((req, res) => {
      if (req.url === '/moved.mp3') {
        res.writeHead(302, { location: media('huge.mp4', { sim_bytes: '1500000000' }) });
        return res.end();
      }
      if (req.method === 'HEAD') {
        res.writeHead(403);
        return res.end();
      }
      ranges.push((req.headers.range as string | undefined) ?? null);
      res.writeHead(206, { 'content-range': 'bytes 0-0/2147483648', 'content-length': '1' });
      res.end('x');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const before = await balance();
      const moved = await create({ model: 'service-minutes', file_url: `${base}/moved.mp3` });
      expect(moved.status).to.equal(400);
      expect(moved.body).to.deep.equal({ error: 'the file has 1500000000 bytes; service-minutes accepts files under 1073741824 bytes', type: 'invalid_request_error' });
      const noHead = await create({ model: 'partner-minutes', file_url: `${base}/no-head.mp3`, features: { qa: true } });
      expect(noHead.status).to.equal(400);
      expect(noHead.body).to.deep.equal({ error: 'the file has 2147483648 bytes; partner-minutes accepts files under 1073741824 bytes', type: 'invalid_request_error' });
      expect(ranges).to.deep.equal(['bytes=0-0']);
      expect(await balance()).to.deep.equal({ ...before, currency: 'CNY' });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('transcribes a file uploaded through POST /v1/files, fetched by the provider through its signed link', async () => {
    const form = new FormData();
    form.append('purpose', 'minutes');
    form.append('file', new Blob([wav(75, 100)], { type: 'audio/wav' }), 'interview.wav');
    const uploaded = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(uploaded.status).to.equal(200);
    const file = (await uploaded.json()) as any;
    expect(file.url).to.match(/\/files\/uploads\/file_[0-9a-f]+\.wav\?expires=\d+&sig=[0-9a-f]{64}$/);
    const res = await create({ model: 'service-minutes', file_url: file.url, source_lang: 'en_us' });
    expect(res.status).to.equal(200);
    const task = await settled(res.body.id);
    expect(task.status).to.equal('succeeded');
    // The simulated provider downloaded the WAV and measured it: 75 s.
    expect(task.usage.duration_ms).to.equal(75_000);
    expect(task.report.metadata.title).to.match(/^Minutes: /);
    expect(task.usage.asr_amount).to.equal(asrAmount(75_000, SERVICE_RATE));

    // A link to a deleted upload is refused up front.
    expect((await gw.api(key, 'DELETE', `/v1/files/${file.id}`)).status).to.equal(200);
    const gone = await create({ model: 'service-minutes', file_url: file.url });
    expect(gone.status).to.equal(400);
    expect(gone.body).to.deep.equal({ error: 'file_url names a file that no longer exists', type: 'invalid_request_error' });
  });

  it('answers errors in shape B: 401, 400 naming the field, 404 for unknown tasks and for other accounts', async () => {
    const shapeB = (res: { body: any }) => expect(res.body).to.have.keys(['error', 'type']);
    for (const res of [await create({ model: 'service-minutes', file_url: media('a.mp3') }, null), await get('mins_x', null), await gw.api('tr-invalid', 'GET', '/v1/audio/minutes')]) {
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({ error: 'invalid or missing API key', type: 'auth_error' });
    }
    expect((await gw.api(null, 'POST', '/v1/summaries', { task_id: 'x' })).body).to.deep.equal({ error: 'invalid or missing API key', type: 'auth_error' });

    const url = media('a.mp3');
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ file_url: url }, /^model is required$/],
      [{ model: 'chat-fast', file_url: url }, /^model must be one of /],
      [{ model: 'service-minutes' }, /^file_url is required$/],
      [{ model: 'service-minutes', file_url: 'ftp://files.example/a.mp3' }, /^file_url must match/],
      [{ model: 'service-minutes', file_url: url, recorded_at: '2026-03-02T09:30:00' }, /^recorded_at must be an RFC 3339 date-time with its offset, e\.g\. 2026-11-01T00:00:00\+08:00$/],
      [{ model: 'service-minutes', file_url: url, recorded_at: '2026-02-30T09:30:00+08:00' }, /^recorded_at must be an RFC 3339 date-time with its offset, e\.g\. 2026-11-01T00:00:00\+08:00$/],
      [{ model: 'service-minutes', file_url: url, timezone: 'Mars/Olympus_Mons' }, /^timezone Mars\/Olympus_Mons is not an IANA time zone$/],
      // The simulator serves application/octet-stream by default: neither the suffix nor the type tells.
      [{ model: 'service-minutes', file_url: media('recording') }, /^file_type is required when neither the file_url's suffix nor the Content-Type/],
      [{ model: 'service-minutes', file_url: url, source_lang: 'fr_fr' }, /^source_lang must be one of zh_cn, en_us$/],
      [{ model: 'service-minutes', file_url: url, number_of_speakers: -1 }, /^number_of_speakers must be at least 0$/],
      [{ model: 'service-minutes', file_url: url, colour: 'blue' }, /^colour is not a recognised field$/],
      [{ model: 'partner-minutes', file_url: url }, /^partner-minutes needs at least one of features/],
      [{ model: 'partner-minutes', file_url: url, features: { summary: false, qa: false } }, /^partner-minutes needs at least one of features/],
      [{ model: 'partner-minutes', file_url: url, features: { translate: true, target_lang: 'zh_cn' } }, /^features.target_lang must differ from source_lang$/],
      [{ model: 'service-minutes', file_url: media('huge.mp4', { sim_bytes: '1073741825' }) }, /^the file has 1073741825 bytes; service-minutes accepts files under 1073741824 bytes$/],
    ];
    const before = await balance();
    for (const [body, message] of bad) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      shapeB(res);
      expect(res.body.type).to.equal('invalid_request_error');
      expect(res.body.error, JSON.stringify(body)).to.match(message);
    }
    expect((await create({ model: 'service-minutes', file_url: 'not json' })).status).to.equal(400);
    expect(await balance(), 'a refused request changes nothing').to.deep.equal({ ...before, currency: 'CNY' });

    // A recording without a suffix is accepted with an explicit file_type; a HEAD-less server is no obstacle.
    const explicit = await create({ model: 'partner-minutes', file_url: media('recording', { sim_head: 'none' }), file_type: 'audio', features: { qa: true } });
    expect(explicit.status).to.equal(200);

    const missing = await get('mins_0000000000000000000000000000');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ error: 'minutes task mins_0000000000000000000000000000 not found', type: 'invalid_request_error' });
    expect((await get(explicit.body.id, other)).status, "another account's task").to.equal(404);
    shapeB(await get(explicit.body.id, other));
    const otherList = (await gw.api(other, 'GET', '/v1/audio/minutes?limit=100')).body.data.map((t: any) => t.id);
    expect(otherList).not.to.include(explicit.body.id);
    await settled(explicit.body.id);
  });

  it('takes file_type from the Content-Type the file server gives when the URL has no known suffix (HEAD, or the ranged GET)', async () => {
    const mine = await gw.fundedAccount(100_000_000);
    const video = await create({ model: 'service-minutes', file_url: media('recording', { sim_content_type: 'video/mp4', sim_duration_ms: '20000' }) }, mine.key);
    expect(video.status, JSON.stringify(video.body)).to.equal(200);
    const audio = await create({ model: 'service-minutes', file_url: media('recording', { sim_content_type: 'audio/mpeg; charset=binary', sim_head: 'none', sim_duration_ms: '20000' }) }, mine.key);
    expect(audio.status, JSON.stringify(audio.body)).to.equal(200);
    const fileTypeOf = async (id: string) => ((await gw.tasks.read('minutes', id, mine.accountId))!.request as { file_type: string }).file_type;
    expect(await fileTypeOf(video.body.id)).to.equal('video');
    expect(await fileTypeOf(audio.body.id)).to.equal('audio');
    expect((await settled(video.body.id, mine.key)).status).to.equal('succeeded');
    expect((await settled(audio.body.id, mine.key)).status).to.equal('succeeded');
  });

  it('answers 402 in shape B when the estimate cannot be frozen, and changes nothing', async () => {
    const poor = await gw.fundedAccount(SERVICE_ESTIMATE - 1);
    const res = await create({ model: 'service-minutes', file_url: media('a.mp3') }, poor.key);
    expect(res.status).to.equal(402);
    expect(res.body).to.deep.equal({ error: 'insufficient balance for this request', type: 'insufficient_balance_error' });
    expect((await balance(poor.key)).available).to.equal(SERVICE_ESTIMATE - 1);
    // The partner model's estimate is higher still; a smaller one fits.
    const rich = await gw.fundedAccount(PARTNER_ESTIMATE);
    expect((await create({ model: 'partner-minutes', file_url: media('a.mp3'), features: { qa: true } }, rich.key)).status).to.equal(200);
    await waitFor('the partner task to be billed', async () => (await balance(rich.key)).frozen === 0);
  });

  it('answers 502 in shape B when the speech provider is unavailable at submission, and releases the freeze', async () => {
    const before = await balance();
    // Over 100 MB: the standard recognition, whose submission gives the provider's verdict inline.
    const res = await create({ model: 'service-minutes', file_url: media('a.mp3', { sim: 'asr_unavailable', ...STANDARD }) });
    expect(res.status).to.equal(502);
    expect(res.body).to.have.keys(['error', 'type']);
    expect(res.body.type).to.equal('upstream_error');
    expect(res.body.error).to.match(/^upstream: the service is busy: the speech service is temporarily unavailable \(55000031, logid [0-9A-F]{34}\)$/);
    await waitFor('the release', async () => (await balance()).frozen === 0);
    expect((await balance()).available).to.equal(before.available);
    // A provider's refusal of the file is a 400.
    const refused = await create({ model: 'service-minutes', file_url: media('a.mp3', { sim: 'asr_reject', ...STANDARD }) });
    expect(refused.status).to.equal(400);
    expect(refused.body).to.have.keys(['error', 'type']);
    expect(refused.body.error).to.match(/^the speech provider refused the file: the audio format is not supported \(45000151, logid [0-9A-F]{34}\)$/);
    await waitFor('the release', async () => (await balance()).frozen === 0);
    expect(await balance()).to.deep.equal({ ...before, currency: 'CNY' });
  });

  it('answers 502 and 400 in shape B for partner-minutes when Tingwu is unavailable or refuses the file, and fails a task Tingwu failed with its code, releasing every freeze', async () => {
    const before = await balance();
    const unavailable = await create({ model: 'partner-minutes', file_url: media('a.mp3', { sim: 'asr_unavailable' }), features: { summary: true } });
    expect(unavailable.status).to.equal(502);
    expect(unavailable.body).to.deep.equal({ error: 'upstream: The request has failed due to a temporary failure of the server.', type: 'upstream_error' });
    const refused = await create({ model: 'partner-minutes', file_url: media('a.mp3', { sim: 'asr_reject' }), features: { summary: true } });
    expect(refused.status).to.equal(400);
    expect(refused.body).to.deep.equal({ error: 'the speech provider refused the file: Invalid audio format.', type: 'invalid_request_error' });
    const broken = await create({ model: 'partner-minutes', file_url: media('broken.mp3', { sim: 'asr_fail' }), features: { qa: true } });
    expect(broken.status).to.equal(200);
    const task = await settled(broken.body.id);
    expect(task).to.include({ status: 'failed', error_code: 'transcription_failed', error: 'the transcription failed: Audio format invalid. (TSC.AudioFormat)' });
    for (const member of ['transcription', 'summary', 'chapters', 'extraction', 'translation']) expect(task[member], member).to.equal(null);
    expect(await balance()).to.deep.equal({ ...before, currency: 'CNY' });
  });

  it('lists the caller\'s minutes tasks newest first with a cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ model: 'partner-minutes', file_url: media(`p${i}.mp3`, { sim_duration_ms: '20000' }), features: { summary: true } })).body.id);
    const first = (await gw.api(key, 'GET', '/v1/audio/minutes?limit=2')).body;
    expect(first).to.include({ object: 'list', has_more: true });
    expect(first.data.map((t: any) => t.id)).to.deep.equal([ids[2], ids[1]]);
    const second = (await gw.api(key, 'GET', `/v1/audio/minutes?limit=2&after=${first.next_after}`)).body;
    expect(second.data[0].id).to.equal(ids[0]);
    expect(second.data[0]).to.include.keys(['id', 'model', 'status', 'usage', 'created_at', 'updated_at']);
    for (const id of ids) await settled(id);
  });
});

describe('meeting minutes: the summary time limit and the rate limit @integration', () => {
  let gw: TestGateway;
  let key: string;

  before(async () => {
    gw = await startTestGateway({ TASK_POLL_MS: '20', FILE_URL_ALLOW_PRIVATE_TARGETS: 'true', MINUTES_SUMMARY_TIMEOUT_MS: '1200', RATE_LIMIT_PER_MINUTE: '4' });
    ({ key } = await gw.fundedAccount(100_000_000));
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key]));
  after(async () => gw.close());

  const media = (name: string, params: Record<string, string> = {}) => `${gw.simulator.url}/sim/media/${name}?${new URLSearchParams(params)}`;

  it('fails a summary still unfinished at the limit after the transcription, by a server-side timer, with summary_timeout and no retry', async () => {
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance;
    const res = await gw.api(key, 'POST', '/v1/audio/minutes', { model: 'service-minutes', file_url: media('slow.mp3', { sim_duration_ms: '60000', sim_summary: 'slow' }) });
    expect(res.status).to.equal(200);
    const stream = `minutes-${res.body.id}`;
    // No GET while it runs: only the server's own jobs can finish it.
    const row = await waitFor(
      'the task to fail',
      async () => {
        const { rows } = await gw.pool.query(`SELECT status, billing_status FROM rm.tasks WHERE task_id = $1`, [res.body.id]);
        return rows[0]?.status === 'failed' && rows[0].billing_status !== 'reserved' ? rows[0] : null;
      },
      15_000,
    );
    expect(row.billing_status).to.equal('settled');
    const events = (await gw.store.readStream(stream)).map((e) => e.type);
    const succeededAt = Date.parse(((await gw.store.readStream(stream)).find((e) => e.type === 'TaskUpstreamSucceeded')!.data as { at: string }).at);
    const failedAt = Date.parse(((await gw.store.readStream(stream)).find((e) => e.type === 'TaskFailed')!.data as { at: string }).at);
    expect(failedAt - succeededAt, 'the limit counts from the transcription').to.be.within(1_200, 4_000);

    const task = (await gw.api(key, 'GET', `/v1/audio/minutes/${res.body.id}`)).body;
    expect(task.status).to.equal('failed');
    expect(task).to.include({ transcription_status: 'succeeded', summary_status: 'failed', error_code: 'summary_timeout' });
    expect(task.report.quality.status).to.equal('unavailable');
    expect(task.report.quality.issues).to.deep.include({ code: 'summary_timeout', path: '' });
    expectValidReport(task.report);
    expect(task.transcription.sentences.length).to.be.greaterThan(0);
    expect(task.usage).to.deep.include({ amount: asrAmount(60_000, SERVICE_RATE), flash_amount: 0 });
    await waitFor('the release', async () => (await gw.api(key, 'GET', '/v1/account')).body.balance.frozen === 0);
    expect(before.available - (await gw.api(key, 'GET', '/v1/account')).body.balance.available).to.equal(asrAmount(60_000, SERVICE_RATE));

    // No automatic retry: no summary work is left scheduled, and the stage completed exactly once.
    const { rows: jobs } = await gw.pool.query(`SELECT kind FROM jobs WHERE key = $1 AND kind LIKE 'minutes.%'`, [stream]);
    expect(jobs).to.deep.equal([]);
    const later = (await gw.store.readStream(stream)).map((e) => e.type);
    expect(later).to.deep.equal(events);
    expect(later.filter((t) => t === 'TaskStageCompleted')).to.have.length(1);
  });

  it('answers 429 in shape B beyond the rate limit of the key', async () => {
    const { key: limited } = await gw.fundedAccount(100_000_000);
    const statuses: number[] = [];
    let last: { status: number; body: any; headers: Headers } | null = null;
    for (let i = 0; i < 6; i++) {
      last = await gw.api(limited, 'POST', '/v1/audio/minutes', { model: 'partner-minutes', file_url: media(`r${i}.mp3`, { sim_duration_ms: '10000' }), features: { summary: true } });
      statuses.push(last.status);
    }
    expect(statuses.filter((s) => s === 200)).to.have.length(4);
    expect(statuses.slice(4)).to.deep.equal([429, 429]);
    expect(last!.body).to.deep.equal({ error: 'rate limit of 4 requests per minute exceeded for this key', type: 'rate_limit_error' });
    expect(last!.headers.get('retry-after')).to.match(/^\d+$/);
    await waitFor('the tasks to be billed', async () => (await gw.api(limited, 'GET', '/v1/account')).body.balance.frozen === 0);
  });
});
