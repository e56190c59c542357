import type { KindRow } from '../tasks/kind';
import type { TaskRowHead } from '../tasks/view-row';
import { blockText, type ChapterNode, type Report } from './report';
import { REPORT_V2_SCHEMA } from './report-schema';
import { minutesCharges, type NormalizedMinutesRequest } from './request';
import type { MinutesResult, MinutesUsage } from './result';
import type { SummaryRequest } from './summary-parts';
import { transcriptOf, type Transcript } from './transcript';

/**
 * The API views of minutes tasks and summaries, rendered from the `tasks` read model. Stored data
 * is never rewritten: a stored result whose report is `unavailable` reads as `failed` here.
 */

type Status = 'processing' | 'succeeded' | 'failed' | 'cancelled';

/** A minutes task or a summary as the view reads its status and report. */
type ReportRow = TaskRowHead & { readonly result: MinutesResult | null };

function isFinished(row: ReportRow): boolean {
  return row.status === 'succeeded' || row.status === 'failed' || row.status === 'cancelled';
}

function unavailableReport(row: ReportRow): boolean {
  const report = row.result?.report;
  return report?.quality?.status === 'unavailable';
}

/** The status a client sees: queued and running are `processing`; an unavailable report is `failed`. */
export function presentedStatus(row: ReportRow): Status {
  if (!isFinished(row)) return 'processing';
  if (row.status === 'succeeded' && unavailableReport(row)) return 'failed';
  return row.status as Status;
}

/**
 * The summary status a client sees, once finished: `failed` whenever the report is unavailable
 * (a historical result may have stored `succeeded`, or nothing), else the stored one, else
 * `succeeded` for a stored report without it. Read-time only: the stored row is never rewritten.
 */
export function presentedSummaryStatus(row: ReportRow): 'succeeded' | 'failed' | undefined {
  if (!isFinished(row)) return undefined;
  const report = row.result?.report;
  if (!report) return row.result?.summary_status;
  if (report.quality?.status === 'unavailable') return 'failed';
  return row.result?.summary_status ?? 'succeeded';
}

function speakerNames(transcript: Transcript | null, report: Report | null): Map<string, string> {
  // Speaker ids are resolved with report.speakers at display time (the transcript's, without a report).
  const list = report?.speakers ?? transcript?.speakers ?? [];
  return new Map(list.map((s) => [s.id, s.displayName]));
}

function renderTranscription(t: Transcript, names: Map<string, string>): Record<string, unknown> {
  return {
    language: t.language,
    duration_ms: t.durationMs,
    speakers: t.speakers.map((s) => ({ id: s.id, name: names.get(s.id) ?? s.displayName })),
    sentences: t.segments.map((s) => ({
      id: s.id,
      content: s.text,
      start_time: s.startMs,
      end_time: s.endMs,
      speaker: s.speakerId ? { id: s.speakerId, name: names.get(s.speakerId) ?? s.speakerId } : null,
      ...(s.words ? { words: s.words.map((w) => ({ text: w.text, start_time: w.startMs, end_time: w.endMs })) } : {}),
    })),
  };
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member of a JSON schema node (undefined when the node is not an object or lacks it). */
function schemaMember(node: unknown, name: string): unknown {
  return isObject(node) ? node[name] : undefined;
}

const DEFS = schemaMember(REPORT_V2_SCHEMA, '$defs');

/** A schema node, with a `$ref` to the report's `$defs` followed. */
function resolved(schema: unknown): unknown {
  const ref = schemaMember(schema, '$ref');
  return typeof ref === 'string' ? schemaMember(DEFS, ref.slice('#/$defs/'.length)) : schema;
}

/** The report with its members in the specification's order (the read model's jsonb sorts keys its own way). */
function inSchemaOrder(value: unknown, schema: unknown): unknown {
  const s = resolved(schema);
  const items = schemaMember(s, 'items');
  const properties = schemaMember(s, 'properties');
  if (Array.isArray(value)) return items ? value.map((v) => inSchemaOrder(v, items)) : value;
  if (!isObject(value) || !isObject(properties)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(properties)) if (key in value) out[key] = inSchemaOrder(value[key], sub);
  for (const key of Object.keys(value)) if (!(key in out)) out[key] = value[key];
  return out;
}

function storedReport(row: ReportRow): Report | null {
  const report = row.result?.report;
  return report ? (inSchemaOrder(report, REPORT_V2_SCHEMA) as Report) : null;
}

// --- legacy members rendered from the report --------------------------------------------------

export function legacySummary(report: Report): Record<string, unknown> {
  return { title: report.metadata.title, paragraph: blockText(report.overview), quality: report.quality.status };
}

function legacyChapter(c: ChapterNode): Record<string, unknown> {
  return {
    id: c.id,
    title: blockText(c.heading),
    summary: blockText(c.summary),
    start_time: c.startMs,
    end_time: c.endMs,
    start_segment_id: c.startSegmentId,
    end_segment_id: c.endSegmentId,
    ...(c.children.length > 0 ? { children_paras: c.children.map(legacyChapter) } : {}),
  };
}

export function legacyChapters(report: Report): Record<string, unknown> | null {
  return report.quality.status === 'unavailable' ? null : { chapter_summary: report.chapters.map(legacyChapter) };
}

export function legacyExtraction(report: Report): Record<string, unknown> | null {
  if (report.quality.status === 'unavailable') return null;
  const name = (id: string) => report.speakers.find((s) => s.id === id)?.displayName ?? null;
  return {
    todos: report.todos.map((t) => ({
      id: t.id,
      content: blockText(t.action),
      assignee: t.assigneeSpeakerId ? name(t.assigneeSpeakerId) : null,
      assignee_speaker_id: t.assigneeSpeakerId || null,
      deadline: t.deadline || null,
      source_segment_ids: t.action.sourceSegmentIds,
    })),
    decisions: report.decisions.map((d) => ({
      id: d.id,
      question: blockText(d.question),
      content: blockText(d.conclusion),
      options: d.options.map((o) => blockText(o.proposal)),
      basis: d.basis.map(blockText),
      source_segment_ids: d.conclusion.sourceSegmentIds,
    })),
    quotes: report.quotes.map((q) => ({
      id: q.id,
      text: q.text,
      speaker: name(q.speakerId),
      speaker_id: q.speakerId,
      start_time: q.startMs,
      end_time: q.endMs,
      reason: blockText(q.reason),
    })),
  };
}

// --- minutes tasks --------------------------------------------------------------------------------

function usageOf(row: MinutesRow, r: NormalizedMinutesRequest): Record<string, unknown> {
  const c = minutesCharges(r, row.usage);
  // Total settled: the settlement once billed; 0 when released; until then what is due so far.
  const amount = row.billing_status === 'settled' ? Number(row.billed_amount) : row.billing_status === 'released' ? 0 : c.amount;
  return {
    duration_ms: c.durationMs,
    features: r.features,
    all_activate: r.all_activate,
    engine: r.engine,
    rate_per_hour: r.rate_per_hour,
    amount,
    ...(r.summary ? { asr_amount: c.asrAmount, flash_amount: c.flashAmount } : {}),
    flash_input_tokens: c.inputTokens,
    flash_output_tokens: c.outputTokens,
  };
}

export type MinutesRow = KindRow<NormalizedMinutesRequest, MinutesResult, MinutesUsage>;
export type SummaryRow = KindRow<SummaryRequest, MinutesResult, MinutesUsage>;

export function renderMinutes(row: MinutesRow): Record<string, unknown> {
  const r = row.request;
  const result = row.result ?? {};
  const finished = isFinished(row);
  const transcript = finished ? transcriptOf(result) : null;
  const report = finished ? storedReport(row) : null;
  const extras = result.extras ?? {};
  const names = speakerNames(transcript, report);
  const status = presentedStatus(row);
  const summaryStatus = presentedSummaryStatus(row);

  let summary: unknown = null;
  let chapters: unknown = null;
  let extraction: unknown = null;
  let translation: unknown = null;
  if (report) {
    summary = legacySummary(report);
    chapters = legacyChapters(report);
    extraction = legacyExtraction(report);
  } else if (transcript) {
    summary = extras.summary ?? null;
    chapters = extras.chapters ? { chapter_summary: extras.chapters } : null;
    const wanted = r.features.filter((f) => f === 'todos' || f === 'qa');
    extraction = wanted.length > 0 ? Object.fromEntries(wanted.map((f) => [f, extras[f] ?? []])) : null;
    translation = extras.translation ?? null;
  }
  const unavailable = report?.quality.status === 'unavailable';
  return {
    id: row.task_id,
    request_id: r.request_id,
    model: row.model,
    status,
    ...(transcript ? { transcription_status: 'succeeded' } : {}),
    ...(summaryStatus ? { summary_status: summaryStatus } : {}),
    report,
    transcription: transcript ? renderTranscription(transcript, names) : null,
    summary,
    chapters,
    extraction,
    translation,
    usage: usageOf(row, r),
    error: row.error?.message ?? (status === 'failed' && unavailable ? 'the summary is unavailable' : null),
    error_code: row.error?.code ?? (status === 'failed' && unavailable ? 'summary_unavailable' : null),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

// --- summaries (POST /v1/summaries) ---------------------------------------------------------------

export function renderSummary(row: SummaryRow): Record<string, unknown> {
  const request = row.request;
  const finished = isFinished(row);
  const report = finished ? storedReport(row) : null;
  const status = presentedStatus(row);
  const summaryStatus = presentedSummaryStatus(row);
  const usage = row.usage ?? {};
  const amount = row.billing_status === 'settled' ? Number(row.billed_amount) : 0;
  const unavailable = report?.quality.status === 'unavailable';
  return {
    id: row.task_id,
    object: 'minutes.summary',
    request_id: request.request_id,
    task_id: request.task_id,
    model: row.model,
    status,
    ...(summaryStatus ? { summary_status: summaryStatus } : {}),
    report,
    summary: report ? legacySummary(report) : null,
    chapters: report ? legacyChapters(report) : null,
    extraction: report ? legacyExtraction(report) : null,
    usage: {
      flash_input_tokens: Number(usage.flash_input_tokens ?? 0),
      flash_output_tokens: Number(usage.flash_output_tokens ?? 0),
      amount,
    },
    error: row.error?.message ?? (status === 'failed' && unavailable ? 'the summary is unavailable' : null),
    error_code: row.error?.code ?? (status === 'failed' && unavailable ? 'summary_unavailable' : null),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
