import Ajv from 'ajv';
import { expect } from 'chai';
import { assembleReport, unavailableReport, type ReportContext } from '../../src/minutes/report';
import { REPORT_V2_SCHEMA } from '../../src/minutes/report-schema';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { planSummaryParts, singleCallLimits, writeSummary } from '../../src/minutes/summarizer';
import type { Channel } from '../../src/upstreams/channel';
import type { Transcript } from '../../src/minutes/transcript';
import { ALL_MODEL_TYPES } from '../../src/model-types';

const transcript: Transcript = {
  durationMs: 60_000,
  language: 'en_us',
  speakers: [
    { id: 'spk-1', displayName: 'Ann' },
    { id: 'spk-2', displayName: 'Bo' },
  ],
  segments: [
    { id: 's1', text: 'We start.', startMs: 0, endMs: 20_000, speakerId: 'spk-1' },
    { id: 's2', text: 'Bo will send the plan.', startMs: 20_000, endMs: 40_000, speakerId: 'spk-2' },
    { id: 's3', text: 'Decided: plan B.', startMs: 40_000, endMs: 60_000, speakerId: 'spk-1' },
  ],
};
const context: ReportContext = { transcript, recordedAt: '2026-01-05T10:00:00+01:00', timezone: 'Europe/Berlin', fallbackTitle: 'sync' };
const b = (text: string, ...ids: string[]) => ({ text, sourceSegmentIds: ids });

function cleanDraft(): Record<string, any> {
  return {
    title: 'Weekly sync',
    overview: b('A short sync.', 's1', 's2'),
    keyPoints: [b('Plan B chosen.', 's3')],
    sections: [{ id: 'sec-1', heading: b('Start', 's1'), paragraphs: [b('We start.', 's1')], bullets: [], children: [{ id: 'sec-1-1', heading: b('Detail', 's1'), paragraphs: [], bullets: [b('x', 's1')], children: [] }] }],
    chapters: [{ id: 'ch-1', heading: b('All', 's1'), summary: b('Everything.', 's1', 's3'), startSegmentId: 's1', endSegmentId: 's3', startMs: 0, endMs: 60_000, children: [] }],
    todos: [{ id: 'todo-1', action: b('Send the plan', 's2'), assigneeSpeakerId: 'spk-2', assignmentQuote: 'Bo will send the plan.', deadline: '' }],
    decisions: [{ id: 'dec-1', question: b('Which plan?', 's3'), options: [{ proposal: b('Plan B', 's3'), proposerSpeakerId: 'spk-1' }], conclusion: b('Plan B', 's3'), basis: [b('Said so', 's3')], confirmationQuote: 'Decided: plan B.' }],
    quotes: [{ id: 'q-1', text: 'We start.', speakerId: 'spk-1', startMs: 0, endMs: 20_000, reason: b('Opening', 's1'), sourceSegmentIds: ['s1'] }],
    reviewItems: [{ id: 'r-1', originalText: 'Bo', candidates: ['Bo', 'Beau'], sourceSegmentIds: ['s2'] }],
    visuals: [
      {
        id: 'v-1',
        heading: b('Structure', 's1'),
        nodes: [{ id: 'n-1', label: b('Root', 's1'), children: [{ id: 'n-2', label: b('Leaf', 's2'), children: [] }] }],
        edges: [{ id: 'e-1', from: 'n-1', to: 'n-2', relation: b('has', 's1') }],
        columns: [{ id: 'c-1', label: b('Topic', 's1') }],
        rows: [{ id: 'row-1', cells: [b('Start', 's1')] }],
      },
    ],
  };
}

describe('minutes report version 2: assembling and checking a draft', () => {
  const ajv = new Ajv({ strict: true, allErrors: true });
  const validate = ajv.compile(REPORT_V2_SCHEMA);

  it('turns a clean draft into a complete report with the metadata from the request and the authoritative transcript', () => {
    const report = assembleReport(cleanDraft(), context)!;
    expect(validate(report), ajv.errorsText(validate.errors)).to.equal(true);
    expect(report.quality).to.deep.equal({ status: 'complete', issues: [] });
    expect(report.metadata).to.deep.equal({ title: 'Weekly sync', recordedAt: '2026-01-05T10:00:00+01:00', timezone: 'Europe/Berlin', durationMs: 60_000 });
    expect(report.overview).to.deep.equal({ content: [{ type: 'text', text: 'A short sync.' }], sourceSegmentIds: ['s1', 's2'], verification: 'sourced' });
    expect(report.todos[0]!.status).to.equal('pending');
    expect(report.decisions[0]!.status).to.equal('proposed');
    expect(report.reviewItems[0]!.kind).to.equal('proper_noun');
    expect(report.visuals[0]).to.include({ type: 'hierarchy', origin: 'summary_structure' });
    expect(report.segments).to.deep.equal(transcript.segments.map((s) => ({ id: s.id, text: s.text, startMs: s.startMs, endMs: s.endMs, speakerId: s.speakerId })));
    expect(report.speakers).to.deep.equal(transcript.speakers);
  });

  it('removes every invalid item, keeps the rest, and lists each removal with its path', () => {
    const draft = cleanDraft();
    draft.keyPoints.push(b('Ghost', 's9'));
    draft.sections[0].children.push({ id: 'sec-1-2', heading: b('Ghost', 's1', 's404'), paragraphs: [], bullets: [], children: [] });
    draft.sections[0].paragraphs.push(b('ghost paragraph', 'nope'));
    draft.chapters.push({ ...draft.chapters[0], id: 'ch-2', startMs: 50_000, endMs: 61_000 });
    draft.chapters.push({ ...draft.chapters[0], id: 'ch-3', startMs: 30_000, endMs: 10_000 });
    draft.chapters.push({ ...draft.chapters[0], id: 'ch-4', endSegmentId: 's7' });
    draft.todos.push({ ...draft.todos[0], id: 'todo-1' });
    draft.todos.push({ ...draft.todos[0], id: 'todo-3', assigneeSpeakerId: 'spk-9' });
    draft.todos.push({ ...draft.todos[0], id: 'todo-4', assigneeSpeakerId: '' });
    draft.decisions[0].options.push({ proposal: b('Plan C', 's8'), proposerSpeakerId: 'spk-1' });
    draft.quotes.push({ ...draft.quotes[0], id: 'q-2', sourceSegmentIds: [] });
    draft.quotes.push('not an object');
    draft.visuals[0].edges.push({ id: 'e-2', from: 'n-1', to: 'n-404', relation: b('has', 's1') });
    draft.reviewItems[0].candidates = 'Bo';
    const report = assembleReport(draft, context)!;
    expect(validate(report), ajv.errorsText(validate.errors)).to.equal(true);
    expect(report.quality.status).to.equal('partial');
    expect(report.quality.issues).to.deep.equal([
      { code: 'dangling_segment_reference', path: '/keyPoints/1' },
      { code: 'dangling_segment_reference', path: '/sections/0/paragraphs/1' },
      { code: 'dangling_segment_reference', path: '/sections/0/children/1' },
      { code: 'time_out_of_range', path: '/chapters/1' },
      { code: 'time_out_of_range', path: '/chapters/2' },
      { code: 'dangling_segment_reference', path: '/chapters/3' },
      { code: 'duplicate_id', path: '/todos/1' },
      { code: 'unknown_speaker', path: '/todos/2' },
      { code: 'dangling_segment_reference', path: '/decisions/0/options/1' },
      { code: 'invalid_item', path: '/quotes/1' },
      { code: 'invalid_item', path: '/quotes/2' },
      { code: 'invalid_item', path: '/reviewItems/0' },
      { code: 'dangling_node_reference', path: '/visuals/0/edges/1' },
    ]);
    expect(report.keyPoints).to.have.length(1);
    expect(report.sections[0]!.children.map((c) => c.id)).to.deep.equal(['sec-1-1']);
    expect(report.chapters.map((c) => c.id)).to.deep.equal(['ch-1']);
    expect(report.todos.map((t) => t.id)).to.deep.equal(['todo-1', 'todo-4']);
    expect(report.decisions[0]!.options).to.have.length(1);
    expect(report.reviewItems).to.deep.equal([]);
    expect(report.visuals[0]!.edges.map((e) => e.id)).to.deep.equal(['e-1']);
  });

  it('fills missing members with empty ones, marked partial; a draft that is no object gives nothing', () => {
    const report = assembleReport({ keyPoints: [b('Only this', 's1')] }, context)!;
    expect(validate(report), ajv.errorsText(validate.errors)).to.equal(true);
    expect(report.metadata.title).to.equal('sync');
    expect(report.quality.status).to.equal('partial');
    expect(report.quality.issues.map((i) => i.path)).to.deep.equal(['/title', '/overview', '/sections', '/chapters', '/todos', '/decisions', '/quotes', '/reviewItems', '/visuals']);
    expect(new Set(report.quality.issues.map((i) => i.code))).to.deep.equal(new Set(['missing_member']));
    for (const value of [null, [], 'text', 42]) expect(assembleReport(value, context)).to.equal(null);
  });

  it('gives nothing for a draft without one usable content member: an empty object, a title alone, only invalid items', () => {
    expect(assembleReport({}, context)).to.equal(null);
    expect(assembleReport({ title: 'Weekly sync' }, context)).to.equal(null);
    const empty = { title: 'Weekly sync', overview: b('', 's1'), keyPoints: [], sections: [], chapters: [], todos: [], decisions: [], quotes: [], reviewItems: [], visuals: [] };
    expect(assembleReport(empty, context), 'every member present, all empty').to.equal(null);
    expect(assembleReport({ ...empty, keyPoints: [b('Ghost', 's9')], todos: [{ id: 't', action: b('x', 's1'), assigneeSpeakerId: 'spk-9', assignmentQuote: '', deadline: '' }] }, context), 'every item removed').to.equal(null);
    // One usable member is enough for a (partial) report.
    expect(assembleReport({ overview: b('A short sync.', 's1') }, context)!.quality.status).to.equal('partial');
    expect(assembleReport({ ...empty, keyPoints: [b('Plan B chosen.', 's3')] }, context)!.quality.status).to.equal('partial');
  });

  it('turns an empty {} answer of the summary model into the unparseable outcome (the report becomes unavailable), with its tokens', async () => {
    const chat = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES).get('chat-fast')!;
    const plan = planSummaryParts(chat, transcript, singleCallLimits(chat, 4096)).parts[0]!;
    const answering = (content: string) => ({ json: async () => ({ choices: [{ message: { content }, finish_reason: 'stop' }], usage: { prompt_tokens: 321, completion_tokens: 2 } }) }) as unknown as Channel;
    const empty = await writeSummary(answering('{}'), plan, context);
    expect(empty).to.deep.equal({ kind: 'unparseable', reason: 'the summary has no usable content', inputTokens: 321, outputTokens: 2 });
    const notObject = await writeSummary(answering('[1]'), plan, context);
    expect(notObject).to.deep.include({ kind: 'unparseable', reason: 'the summary is not a JSON object' });
    const usable = await writeSummary(answering(JSON.stringify(cleanDraft())), plan, context);
    expect(usable.kind).to.equal('report');
  });

  it('keeps issues known before the model ran (a truncated transcript) and makes the report partial', () => {
    const report = assembleReport(cleanDraft(), context, [{ code: 'transcript_truncated', path: '/segments' }])!;
    expect(report.quality).to.deep.equal({ status: 'partial', issues: [{ code: 'transcript_truncated', path: '/segments' }] });
  });

  it('builds the unavailable report: the transcript stays, everything generated is empty', () => {
    const report = unavailableReport(context, [{ code: 'summary_timeout', path: '' }]);
    expect(validate(report), ajv.errorsText(validate.errors)).to.equal(true);
    expect(report.quality).to.deep.equal({ status: 'unavailable', issues: [{ code: 'summary_timeout', path: '' }] });
    expect(report.segments).to.have.length(3);
    expect(report.keyPoints).to.deep.equal([]);
    expect(report.metadata.recordedAt).to.equal('2026-01-05T10:00:00+01:00');
  });

  it('has a schema that refuses reports off the specification\'s shapes', () => {
    const good = assembleReport(cleanDraft(), context)!;
    const variants: [string, (r: any) => void][] = [
      ['a missing member', (r) => delete r.visuals],
      ['an extra member', (r) => (r.extra = 1)],
      ['another version', (r) => (r.version = 3)],
      ['a block without verification', (r) => delete r.overview.verification],
      ['another todo status', (r) => (r.todos[0].status = 'done')],
      ['a non-integer time', (r) => (r.chapters[0].startMs = 1.5)],
      ['an unknown quality status', (r) => (r.quality.status = 'fine')],
      ['a recursive node off shape', (r) => (r.sections[0].children[0].children = [{ id: 'x' }])],
    ];
    for (const [what, change] of variants) {
      const copy = JSON.parse(JSON.stringify(good));
      change(copy);
      expect(validate(copy), what).to.equal(false);
    }
  });
});
