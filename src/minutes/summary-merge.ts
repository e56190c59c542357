import { blockText, type Block, type ChapterNode, type QualityIssue, type Report, type SectionNode, type Visual, type VisualNode } from './report';

/**
 * The report of a summary written in parts: the parts' reports (each already checked against the
 * transcript) merged deterministically, in transcript order, without a further model call.
 *
 * - ids are prefixed with the part (`p2-ch-1`), so they stay unique; edges follow their nodes;
 * - the title is the first part's; the overview holds each part's overview as one text run;
 * - every list is concatenated and bounded by MERGE_CAPS. Chapters and sections over their cap
 *   are grouped: consecutive runs become one top-level node (the first member's heading, the
 *   members as its children), so the whole recording stays covered; other lists keep their first
 *   items (earliest in the recording).
 * - quality issues keep their path under the part (`/parts/1/todos/3`); the status is `complete`
 *   only if no part and no planning step had one.
 */
export const MERGE_CAPS = {
  chapters: 40,
  sections: 40,
  keyPoints: 30,
  todos: 200,
  decisions: 100,
  quotes: 20,
  reviewItems: 50,
  visuals: 5,
} as const;

/** What a part keeps in its stage step: its report without the transcript (the task has that). */
export type PartReport = Omit<Report, 'segments' | 'speakers'>;

export function partReportOf(report: Report): PartReport {
  const { segments: _segments, speakers: _speakers, ...rest } = report;
  return rest;
}

const renamer = (prefix: string) => (id: string) => `${prefix}${id}`;

function sectionWithIds(s: SectionNode, id: (x: string) => string): SectionNode {
  return { ...s, id: id(s.id), children: s.children.map((c) => sectionWithIds(c, id)) };
}

function chapterWithIds(c: ChapterNode, id: (x: string) => string): ChapterNode {
  return { ...c, id: id(c.id), children: c.children.map((x) => chapterWithIds(x, id)) };
}

function nodeWithIds(n: VisualNode, id: (x: string) => string): VisualNode {
  return { ...n, id: id(n.id), children: n.children.map((c) => nodeWithIds(c, id)) };
}

function visualWithIds(v: Visual, id: (x: string) => string): Visual {
  return {
    ...v,
    id: id(v.id),
    nodes: v.nodes.map((n) => nodeWithIds(n, id)),
    edges: v.edges.map((e) => ({ ...e, id: id(e.id), from: id(e.from), to: id(e.to) })),
    columns: v.columns.map((c) => ({ ...c, id: id(c.id) })),
    rows: v.rows.map((r) => ({ ...r, id: id(r.id) })),
  };
}

function withPartIds(report: PartReport, prefix: string): PartReport {
  const id = renamer(prefix);
  return {
    ...report,
    sections: report.sections.map((s) => sectionWithIds(s, id)),
    chapters: report.chapters.map((c) => chapterWithIds(c, id)),
    todos: report.todos.map((t) => ({ ...t, id: id(t.id) })),
    decisions: report.decisions.map((d) => ({ ...d, id: id(d.id) })),
    quotes: report.quotes.map((q) => ({ ...q, id: id(q.id) })),
    reviewItems: report.reviewItems.map((r) => ({ ...r, id: id(r.id) })),
    visuals: report.visuals.map((v) => visualWithIds(v, id)),
  };
}

/** Consecutive runs of `items`, at most `cap` runs, sizes differing by at most one. */
function runs<T>(items: readonly T[], cap: number): T[][] {
  const count = Math.min(cap, items.length);
  const out: T[][] = [];
  let at = 0;
  for (let k = 0; k < count; k++) {
    const size = Math.floor(items.length / count) + (k < items.length % count ? 1 : 0);
    out.push(items.slice(at, at + size));
    at += size;
  }
  return out;
}

function groupChapters(chapters: readonly ChapterNode[], cap: number): ChapterNode[] {
  if (chapters.length <= cap) return [...chapters];
  return runs(chapters, cap).map((members, k) => {
    const first = members[0]!;
    const last = members[members.length - 1]!;
    if (members.length === 1) return first;
    return {
      id: `chg-${k + 1}`,
      heading: first.heading,
      summary: first.summary,
      startSegmentId: first.startSegmentId,
      endSegmentId: last.endSegmentId,
      startMs: first.startMs,
      endMs: last.endMs,
      children: members,
    };
  });
}

function groupSections(sections: readonly SectionNode[], cap: number): SectionNode[] {
  if (sections.length <= cap) return [...sections];
  return runs(sections, cap).map((members, k) =>
    members.length === 1 ? members[0]! : { id: `secg-${k + 1}`, heading: members[0]!.heading, paragraphs: [], bullets: [], children: members },
  );
}

function mergedOverview(parts: readonly PartReport[]): Block {
  const blocks = parts.map((p) => p.overview).filter((b) => b.content.length > 0);
  return {
    // One run per part, each after a line break, so the plain text reads as paragraphs.
    content: blocks.map((b, k) => ({ type: 'text', text: `${k > 0 ? '\n' : ''}${blockText(b)}` })),
    sourceSegmentIds: [...new Set(blocks.flatMap((b) => b.sourceSegmentIds))],
    verification: 'sourced',
  };
}

/**
 * Merges the parts' reports (in transcript order) into one report on the whole transcript. A
 * single part is returned as it is, with the planning issues added.
 */
export function mergePartReports(parts: readonly PartReport[], authoritative: Pick<Report, 'segments' | 'speakers'>, planIssues: readonly QualityIssue[]): Report {
  if (parts.length === 1) {
    const only = parts[0]!;
    const issues = [...planIssues, ...only.quality.issues];
    return { ...only, ...authoritative, quality: { status: issues.length === 0 ? 'complete' : 'partial', issues } };
  }
  const renamed = parts.map((p, k) => withPartIds(p, `p${k + 1}-`));
  const all = <K extends 'keyPoints' | 'todos' | 'decisions' | 'quotes' | 'reviewItems' | 'visuals'>(member: K) =>
    renamed.flatMap((p) => p[member] as PartReport[K][number][]).slice(0, MERGE_CAPS[member]) as PartReport[K];
  const issues = [...planIssues, ...parts.flatMap((p, k) => p.quality.issues.map((i) => ({ code: i.code, path: `/parts/${k}${i.path}` })))];
  const first = parts[0]!;
  return {
    version: 2,
    metadata: first.metadata,
    overview: mergedOverview(parts),
    keyPoints: all('keyPoints'),
    sections: groupSections(renamed.flatMap((p) => p.sections), MERGE_CAPS.sections),
    chapters: groupChapters(renamed.flatMap((p) => p.chapters), MERGE_CAPS.chapters),
    todos: all('todos'),
    decisions: all('decisions'),
    quotes: all('quotes'),
    reviewItems: all('reviewItems'),
    visuals: all('visuals'),
    ...authoritative,
    quality: { status: issues.length === 0 ? 'complete' : 'partial', issues },
  };
}
