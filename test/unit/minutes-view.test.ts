import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { assembleReport, unavailableReport, type ReportContext } from '../../src/minutes/report';
import { minutesModel, normalizeMinutesRequest, parseMinutesRequest } from '../../src/minutes/request';
import type { Transcript } from '../../src/minutes/transcript';
import { MINUTES_TASK } from '../../src/minutes/kind';
import { SUMMARY_TASK } from '../../src/minutes/summary-kind';
import { presentedStatus, presentedSummaryStatus, renderMinutes as renderMinutesRow, renderSummary as renderSummaryRow } from '../../src/minutes/view';
import { decodeRow } from '../../src/tasks/kind';
import type { TaskRow } from '../../src/tasks/view-row';
import { ALL_MODEL_TYPES } from '../../src/model-types';

/** The views read rows decoded by their kind's codec, as the engine hands them over. */
const renderMinutes = (row: TaskRow) => renderMinutesRow(decodeRow(MINUTES_TASK, row));
const renderSummary = (row: TaskRow) => renderSummaryRow(decodeRow(SUMMARY_TASK, row));

const transcript: Transcript = {
  durationMs: 40_000,
  language: 'en_us',
  speakers: [{ id: 'spk-1', displayName: 'Ann' }],
  segments: [
    { id: 's1', text: 'We start.', startMs: 0, endMs: 20_000, speakerId: 'spk-1' },
    { id: 's2', text: 'We stop.', startMs: 20_000, endMs: 40_000, speakerId: 'spk-1' },
  ],
};
const context: ReportContext = { transcript, recordedAt: '', timezone: '', fallbackTitle: 'sync' };

describe('minutes views: a stored result whose summary is unavailable', () => {
  const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const service = minutesModel(catalog, 'service-minutes');
  const request = { ...normalizeMinutesRequest(catalog, service, parseMinutesRequest({ model: 'service-minutes', file_url: 'https://media.example/sync.mp3' }), 'req_1'), file_bytes: null };

  function row(kind: 'minutes' | 'summary', status: TaskRow['status'], result: Record<string, unknown> | null): TaskRow {
    return {
      task_id: kind === 'minutes' ? 'mins_1' : 'sum_1',
      kind,
      account_id: 'acct_1',
      model: kind === 'minutes' ? 'service-minutes' : 'chat-fast',
      status,
      request: (kind === 'minutes' ? request : { request_id: 'req_2', task_id: 'mins_1', summary: request.summary }) as unknown as Record<string, unknown>,
      upstream_id: 'up-1',
      upstream_channel: null,
      upstream_status: null,
      progress: null,
      result,
      usage: { duration_ms: 40_000, flash_input_tokens: 100, flash_output_tokens: 10 },
      artifacts: [],
      archived: [],
      archive_error: null,
      error: null,
      reserved_amount: '2445056',
      billing_status: 'settled',
      billed_amount: '13474',
      callback: null,
      deliveries: [],
      created_at: new Date('2026-01-01T00:00:00Z'),
      updated_at: new Date('2026-01-01T00:01:00Z'),
      finished_at: new Date('2026-01-01T00:01:00Z'),
    };
  }

  const unavailable = () => unavailableReport(context, [{ code: 'summary_unparseable', path: '' }]);

  it('reads a stored succeeded minutes task with an unavailable report as failed/failed, whatever summary_status was stored, without touching the row', () => {
    for (const stored of [{ summary_status: 'succeeded' }, {}]) {
      const r = row('minutes', 'succeeded', { transcript, report: unavailable(), ...stored });
      const before = JSON.parse(JSON.stringify(r));
      const view = renderMinutes(r);
      expect(view, JSON.stringify(stored)).to.deep.include({ status: 'failed', summary_status: 'failed', transcription_status: 'succeeded', error_code: 'summary_unavailable' });
      expect(presentedStatus(r)).to.equal('failed');
      expect(presentedSummaryStatus(r)).to.equal('failed');
      expect(JSON.parse(JSON.stringify(r)), 'the stored row is not rewritten').to.deep.equal(before);
      expect(r.status).to.equal('succeeded');
    }
  });

  it('reads a stored succeeded summary with an unavailable report as failed/failed', () => {
    for (const stored of [{ summary_status: 'succeeded' }, {}]) {
      const view = renderSummary(row('summary', 'succeeded', { report: unavailable(), ...stored }));
      expect(view, JSON.stringify(stored)).to.deep.include({ status: 'failed', summary_status: 'failed', error_code: 'summary_unavailable' });
    }
  });

  it('keeps the stored status of a usable report, presents succeeded for a report stored without one, and nothing while running or without a report', () => {
    const report = assembleReport({ overview: { text: 'Short.', sourceSegmentIds: ['s1'] } }, context)!;
    expect(renderMinutes(row('minutes', 'succeeded', { transcript, report, summary_status: 'succeeded' }))).to.deep.include({ status: 'succeeded', summary_status: 'succeeded', error_code: null });
    expect(renderMinutes(row('minutes', 'succeeded', { transcript, report }))).to.deep.include({ status: 'succeeded', summary_status: 'succeeded' });
    expect(renderMinutes(row('minutes', 'running', { transcript, report: unavailable() }))).to.include({ status: 'processing' }).and.not.have.property('summary_status');
    expect(renderMinutes(row('minutes', 'failed', null))).to.not.have.property('summary_status');
  });
});
