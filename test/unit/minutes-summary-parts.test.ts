import Ajv from 'ajv';
import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { countMessageTokens, type TokenMessage } from '../../src/billing/tokens';
import { assembleReport, type ReportContext } from '../../src/minutes/report';
import { REPORT_V2_SCHEMA } from '../../src/minutes/report-schema';
import { planSummaryParts } from '../../src/minutes/summarizer';
import { MERGE_CAPS, mergePartReports, partReportOf } from '../../src/minutes/summary-merge';
import type { Transcript } from '../../src/minutes/transcript';
import { authoritativeOf } from '../../src/minutes/report';
import { ALL_MODEL_TYPES } from '../../src/model-types';

const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
const chat = catalog.get('chat-fast')!;
const validate = new Ajv({ strict: true, allErrors: true }).compile(REPORT_V2_SCHEMA);

function transcriptOf(segments: number): Transcript {
  return {
    durationMs: segments * 10_000,
    language: 'en_us',
    speakers: [{ id: 'spk-1', displayName: 'Ann' }],
    segments: Array.from({ length: segments }, (_, i) => ({ id: `s${i + 1}`, text: `Line number ${i + 1} of the meeting, please follow up.`, startMs: i * 10_000, endMs: (i + 1) * 10_000, speakerId: 'spk-1' })),
  };
}

const promptOf = (body: Record<string, unknown>) => (body.messages as { content: string }[])[1]!.content;
const idsIn = (prompt: string) => [...prompt.matchAll(/^\[(\S+) \|/gm)].map((m) => m[1]);

describe('minutes summaries in parts: planning and the merge', () => {
  it('cuts a transcript into consecutive parts within the part prompt, every segment once, in order', () => {
    const t = transcriptOf(300);
    const { parts, preIssues } = planSummaryParts(chat, t, { maxOutputTokens: 4096, partPromptTokens: 1024, maxParts: 32 });
    expect(parts.length).to.be.greaterThan(1);
    expect(preIssues).to.deep.equal([]);
    for (const p of parts) {
      expect(p.promptTokens).to.be.at.most(1024);
      expect(p.promptTokens, 'the count of the exact messages sent').to.equal(countMessageTokens(p.body.messages as TokenMessage[], chat.tokenizer));
      expect(p.maxTokens).to.equal(4096);
    }
    expect(parts.flatMap((p) => idsIn(promptOf(p.body)))).to.deep.equal(t.segments.map((s) => s.id));
    expect(promptOf(parts[1]!.body)).to.include('Transcript part 2, from');
  });

  it('sends a transcript that fits one part as a whole, and records transcript_truncated past the last reserved part', () => {
    const short = planSummaryParts(chat, transcriptOf(5), { maxOutputTokens: 4096, partPromptTokens: 1024, maxParts: 32 });
    expect(short.parts).to.have.length(1);
    expect(promptOf(short.parts[0]!.body)).to.include('\nTranscript:\n');
    // Its prompt was checked with a part's header, then sent with the whole's: counted as sent.
    expect(short.parts[0]!.promptTokens).to.equal(countMessageTokens(short.parts[0]!.body.messages as TokenMessage[], chat.tokenizer));
    const oneCall = planSummaryParts(chat, transcriptOf(300), { maxOutputTokens: 4096, partPromptTokens: 100_000, maxParts: 1 });
    expect(oneCall.parts[0]!.promptTokens).to.equal(countMessageTokens(oneCall.parts[0]!.body.messages as TokenMessage[], chat.tokenizer));
    const cut = planSummaryParts(chat, transcriptOf(300), { maxOutputTokens: 4096, partPromptTokens: 1024, maxParts: 2 });
    expect(cut.parts).to.have.length(2);
    expect(cut.preIssues).to.deep.equal([{ code: 'transcript_truncated', path: '/segments' }]);
  });

  it('merges part reports: ids prefixed by part, edges following their nodes, lists capped, chapters grouped to cover everything', () => {
    const t = transcriptOf(200);
    const context: ReportContext = { transcript: t, recordedAt: '', timezone: '', fallbackTitle: 'sync' };
    const block = (text: string, id: string) => ({ text, sourceSegmentIds: [id] });
    const partDraft = (from: number, to: number) => {
      const segs = t.segments.slice(from, to);
      return {
        title: `Part from ${from}`,
        sections: [],
        decisions: [],
        quotes: [],
        reviewItems: [],
        overview: block(`Overview ${from}`, segs[0]!.id),
        keyPoints: segs.map((s) => block(s.text, s.id)),
        chapters: segs.map((s, k) => ({ id: `ch-${k + 1}`, heading: block('h', s.id), summary: block('s', s.id), startSegmentId: s.id, endSegmentId: s.id, startMs: s.startMs, endMs: s.endMs, children: [] })),
        todos: segs.map((s, k) => ({ id: `todo-${k + 1}`, action: block(s.text, s.id), assigneeSpeakerId: 'spk-1', assignmentQuote: '', deadline: '' })),
        visuals: [{ id: 'vis-1', heading: block('v', segs[0]!.id), nodes: [{ id: 'n-root', label: block('r', segs[0]!.id), children: [{ id: 'n-1', label: block('c', segs[0]!.id), children: [] }] }], edges: [{ id: 'e-1', from: 'n-root', to: 'n-1', relation: block('has', segs[0]!.id) }], columns: [], rows: [] }],
      };
    };
    const parts = [partDraft(0, 100), partDraft(100, 200)].map((d) => partReportOf(assembleReport(d, context)!));
    const merged = mergePartReports(parts, authoritativeOf(t), []);
    expect(validate(merged), JSON.stringify(validate.errors)).to.equal(true);
    expect(merged.metadata.title).to.equal('Part from 0');
    expect(merged.overview.content.map((c) => c.text)).to.deep.equal(['Overview 0', '\nOverview 100']);
    expect(merged.keyPoints).to.have.length(MERGE_CAPS.keyPoints);
    expect(merged.todos.map((x) => x.id).slice(99, 101)).to.deep.equal(['p1-todo-100', 'p2-todo-1']);
    expect(merged.chapters).to.have.length(MERGE_CAPS.chapters);
    expect(merged.chapters.flatMap((c) => (c.children.length > 0 ? c.children : [c])).map((c) => c.startSegmentId)).to.deep.equal(t.segments.map((s) => s.id));
    expect(merged.chapters[0]).to.include({ startMs: 0, endMs: 50_000 });
    expect(merged.visuals[1]!.edges[0]).to.include({ id: 'p2-e-1', from: 'p2-n-root', to: 'p2-n-1' });
    expect(merged.quality).to.deep.equal({ status: 'complete', issues: [] });

    const withIssue = mergePartReports([parts[0]!, { ...parts[1]!, quality: { status: 'partial', issues: [{ code: 'dangling_segment_reference', path: '/todos/3' }] } }], authoritativeOf(t), []);
    expect(withIssue.quality).to.deep.equal({ status: 'partial', issues: [{ code: 'dangling_segment_reference', path: '/parts/1/todos/3' }] });
  });
});
