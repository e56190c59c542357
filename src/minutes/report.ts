import type { Segment, Transcript } from './transcript';

/**
 * The minutes report, version 2 (see the interface specification): what the summary model wrote,
 * after the gateway checked every reference against the transcript. The model only supplies
 * content (a "draft", see report-schema.ts); the gateway adds the version, the metadata, the
 * authoritative speakers and segments, the fixed enum members and the quality verdict.
 */
export interface RichText {
  readonly type: 'text';
  readonly text: string;
}

export interface Block {
  readonly content: RichText[];
  readonly sourceSegmentIds: string[];
  readonly verification: 'sourced';
}

export interface SectionNode {
  readonly id: string;
  readonly heading: Block;
  readonly paragraphs: Block[];
  readonly bullets: Block[];
  readonly children: SectionNode[];
}

export interface ChapterNode {
  readonly id: string;
  readonly heading: Block;
  readonly summary: Block;
  readonly startSegmentId: string;
  readonly endSegmentId: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly children: ChapterNode[];
}

export interface Todo {
  readonly id: string;
  readonly action: Block;
  readonly assigneeSpeakerId: string;
  readonly assignmentQuote: string;
  readonly deadline: string;
  readonly status: 'pending';
}

export interface Decision {
  readonly id: string;
  readonly question: Block;
  readonly options: { proposal: Block; proposerSpeakerId: string }[];
  readonly conclusion: Block;
  readonly basis: Block[];
  readonly status: 'proposed';
  readonly confirmationQuote: string;
}

export interface Quote {
  readonly id: string;
  readonly text: string;
  readonly speakerId: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly reason: Block;
  readonly sourceSegmentIds: string[];
}

export interface ReviewItem {
  readonly id: string;
  readonly kind: 'proper_noun';
  readonly originalText: string;
  readonly candidates: string[];
  readonly sourceSegmentIds: string[];
  readonly status: 'pending';
}

export interface VisualNode {
  readonly id: string;
  readonly label: Block;
  readonly children: VisualNode[];
}

export interface Visual {
  readonly id: string;
  readonly type: 'hierarchy';
  readonly origin: 'summary_structure';
  readonly heading: Block;
  readonly nodes: VisualNode[];
  readonly edges: { id: string; from: string; to: string; relation: Block }[];
  readonly columns: { id: string; label: Block }[];
  readonly rows: { id: string; cells: Block[] }[];
}

export interface QualityIssue {
  readonly code: string;
  /** JSON Pointer to the member concerned, in the model's output ('' = the whole report). */
  readonly path: string;
}

export type QualityStatus = 'complete' | 'partial' | 'unavailable';

export interface Report {
  readonly version: 2;
  readonly metadata: { title: string; recordedAt: string; timezone: string; durationMs: number };
  readonly overview: Block;
  readonly keyPoints: Block[];
  readonly sections: SectionNode[];
  readonly chapters: ChapterNode[];
  readonly todos: Todo[];
  readonly decisions: Decision[];
  readonly quotes: Quote[];
  readonly reviewItems: ReviewItem[];
  readonly visuals: Visual[];
  readonly speakers: { id: string; displayName: string }[];
  readonly segments: { id: string; text: string; startMs: number; endMs: number; speakerId: string }[];
  readonly quality: { status: QualityStatus; issues: QualityIssue[] };
}

/** What the report's metadata is made of: only the request's values, never the task's creation time. */
export interface ReportContext {
  readonly transcript: Transcript;
  /** RFC 3339 from the request, or '' when the request gave none. */
  readonly recordedAt: string;
  /** IANA zone from the request, or ''. */
  readonly timezone: string;
  /** Used when the model gives no usable title (the recording's file name). */
  readonly fallbackTitle: string;
}

/** Issue codes the gateway writes. */
export const ISSUE = {
  invalidItem: 'invalid_item',
  missingMember: 'missing_member',
  danglingSegment: 'dangling_segment_reference',
  timeOutOfRange: 'time_out_of_range',
  duplicateId: 'duplicate_id',
  unknownSpeaker: 'unknown_speaker',
  danglingNode: 'dangling_node_reference',
  transcriptTruncated: 'transcript_truncated',
  summaryFailed: 'summary_failed',
  summaryUnparseable: 'summary_unparseable',
  summaryTimeout: 'summary_timeout',
} as const;

const EMPTY_BLOCK: Block = Object.freeze({ content: [], sourceSegmentIds: [], verification: 'sourced' }) as Block;

class Invalid extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Structural validation of a draft against its transcript. Every item that names a segment that
 * does not exist, lies outside the recording, reuses an id or has the wrong shape is removed, and
 * an issue records where it was. Items are validated before their id is registered, so a removed
 * item never blocks a later one.
 */
class Checker {
  readonly issues: QualityIssue[] = [];
  private readonly ids = new Set<string>();
  private readonly segments: ReadonlyMap<string, Segment>;
  private readonly speakers: ReadonlySet<string>;

  constructor(private readonly transcript: Transcript) {
    this.segments = new Map(transcript.segments.map((s) => [s.id, s]));
    this.speakers = new Set(transcript.speakers.map((s) => s.id));
  }

  issue(code: string, path: string): void {
    this.issues.push({ code, path });
  }

  string(raw: unknown, allowEmpty = true): string {
    if (typeof raw !== 'string' || (!allowEmpty && raw.trim() === '')) throw new Invalid(ISSUE.invalidItem);
    return raw;
  }

  segmentIds(raw: unknown, required: boolean): string[] {
    if (!Array.isArray(raw) || raw.some((id) => typeof id !== 'string')) throw new Invalid(ISSUE.invalidItem);
    if (required && raw.length === 0) throw new Invalid(ISSUE.invalidItem);
    if (raw.some((id) => !this.segments.has(id as string))) throw new Invalid(ISSUE.danglingSegment);
    return [...new Set(raw as string[])];
  }

  segmentId(raw: unknown): string {
    const id = this.string(raw, false);
    if (!this.segments.has(id)) throw new Invalid(ISSUE.danglingSegment);
    return id;
  }

  /** A time inside the recording. */
  ms(raw: unknown): number {
    if (typeof raw !== 'number' || !Number.isInteger(raw)) throw new Invalid(ISSUE.invalidItem);
    if (raw < 0 || raw > this.transcript.durationMs) throw new Invalid(ISSUE.timeOutOfRange);
    return raw;
  }

  range(start: unknown, end: unknown): [number, number] {
    const s = this.ms(start);
    const e = this.ms(end);
    if (s > e) throw new Invalid(ISSUE.timeOutOfRange);
    return [s, e];
  }

  /** A speaker of the transcript; '' (nobody) when `allowNone`. */
  speaker(raw: unknown, allowNone: boolean): string {
    const id = this.string(raw);
    if (id === '' && allowNone) return id;
    if (!this.speakers.has(id)) throw new Invalid(ISSUE.unknownSpeaker);
    return id;
  }

  /** Draft blocks are {text, sourceSegmentIds}; report blocks carry rich text and the verification. */
  block(raw: unknown): Block {
    if (!isObject(raw)) throw new Invalid(ISSUE.invalidItem);
    const text = this.string(raw.text, false);
    return { content: [{ type: 'text', text }], sourceSegmentIds: this.segmentIds(raw.sourceSegmentIds, false), verification: 'sourced' };
  }

  /** Checks an id for uniqueness across the report; call once the rest of the item is valid. */
  claimId(raw: unknown): string {
    const id = this.string(raw, false);
    if (this.ids.has(id)) throw new Invalid(ISSUE.duplicateId);
    this.ids.add(id);
    return id;
  }

  /** Keeps the valid items of a draft array, recording an issue at the path of each removed one. */
  list<T>(raw: unknown, path: string, item: (value: unknown, path: string) => T): T[] {
    if (!Array.isArray(raw)) {
      this.issue(ISSUE.missingMember, path);
      return [];
    }
    const kept: T[] = [];
    raw.forEach((value, i) => {
      try {
        kept.push(item(value, `${path}/${i}`));
      } catch (err) {
        if (!(err instanceof Invalid)) throw err;
        this.issue(err.code, `${path}/${i}`);
      }
    });
    return kept;
  }

  section(raw: unknown, path: string): SectionNode {
    if (!isObject(raw)) throw new Invalid(ISSUE.invalidItem);
    const heading = this.block(raw.heading);
    const id = this.claimId(raw.id);
    return {
      id,
      heading,
      paragraphs: this.list(raw.paragraphs, `${path}/paragraphs`, (v) => this.block(v)),
      bullets: this.list(raw.bullets, `${path}/bullets`, (v) => this.block(v)),
      children: this.list(raw.children, `${path}/children`, (v, p) => this.section(v, p)),
    };
  }

  chapter(raw: unknown, path: string): ChapterNode {
    if (!isObject(raw)) throw new Invalid(ISSUE.invalidItem);
    const heading = this.block(raw.heading);
    const summary = this.block(raw.summary);
    const startSegmentId = this.segmentId(raw.startSegmentId);
    const endSegmentId = this.segmentId(raw.endSegmentId);
    const [startMs, endMs] = this.range(raw.startMs, raw.endMs);
    const id = this.claimId(raw.id);
    return {
      id,
      heading,
      summary,
      startSegmentId,
      endSegmentId,
      startMs,
      endMs,
      children: this.list(raw.children, `${path}/children`, (v, p) => this.chapter(v, p)),
    };
  }

  todo(raw: unknown): Todo {
    if (!isObject(raw)) throw new Invalid(ISSUE.invalidItem);
    const action = this.block(raw.action);
    const assigneeSpeakerId = this.speaker(raw.assigneeSpeakerId, true);
    const assignmentQuote = this.string(raw.assignmentQuote);
    const deadline = this.string(raw.deadline);
    return { id: this.claimId(raw.id), action, assigneeSpeakerId, assignmentQuote, deadline, status: 'pending' };
  }

  decision(raw: unknown, path: string): Decision {
    if (!isObject(raw)) throw new Invalid(ISSUE.invalidItem);
    const question = this.block(raw.question);
    const conclusion = this.block(raw.conclusion);
    const confirmationQuote = this.string(raw.confirmationQuote);
    const id = this.claimId(raw.id);
    return {
      id,
      question,
      options: this.list(raw.options, `${path}/options`, (v) => {
        if (!isObject(v)) throw new Invalid(ISSUE.invalidItem);
        return { proposal: this.block(v.proposal), proposerSpeakerId: this.speaker(v.proposerSpeakerId, true) };
      }),
      conclusion,
      basis: this.list(raw.basis, `${path}/basis`, (v) => this.block(v)),
      status: 'proposed',
      confirmationQuote,
    };
  }

  quote(raw: unknown): Quote {
    if (!isObject(raw)) throw new Invalid(ISSUE.invalidItem);
    const text = this.string(raw.text, false);
    const speakerId = this.speaker(raw.speakerId, false);
    const [startMs, endMs] = this.range(raw.startMs, raw.endMs);
    const reason = this.block(raw.reason);
    const sourceSegmentIds = this.segmentIds(raw.sourceSegmentIds, true);
    return { id: this.claimId(raw.id), text, speakerId, startMs, endMs, reason, sourceSegmentIds };
  }

  reviewItem(raw: unknown): ReviewItem {
    if (!isObject(raw)) throw new Invalid(ISSUE.invalidItem);
    const originalText = this.string(raw.originalText, false);
    if (!Array.isArray(raw.candidates) || raw.candidates.some((c) => typeof c !== 'string')) throw new Invalid(ISSUE.invalidItem);
    const sourceSegmentIds = this.segmentIds(raw.sourceSegmentIds, true);
    return { id: this.claimId(raw.id), kind: 'proper_noun', originalText, candidates: raw.candidates as string[], sourceSegmentIds, status: 'pending' };
  }

  visual(raw: unknown, path: string): Visual {
    if (!isObject(raw)) throw new Invalid(ISSUE.invalidItem);
    const heading = this.block(raw.heading);
    const id = this.claimId(raw.id);
    const nodeIds = new Set<string>();
    const node = (v: unknown, p: string): VisualNode => {
      if (!isObject(v)) throw new Invalid(ISSUE.invalidItem);
      const label = this.block(v.label);
      const nodeId = this.claimId(v.id);
      nodeIds.add(nodeId);
      return { id: nodeId, label, children: this.list(v.children, `${p}/children`, node) };
    };
    const nodes = this.list(raw.nodes, `${path}/nodes`, node);
    return {
      id,
      type: 'hierarchy',
      origin: 'summary_structure',
      heading,
      nodes,
      edges: this.list(raw.edges, `${path}/edges`, (v) => {
        if (!isObject(v)) throw new Invalid(ISSUE.invalidItem);
        const from = this.string(v.from, false);
        const to = this.string(v.to, false);
        if (!nodeIds.has(from) || !nodeIds.has(to)) throw new Invalid(ISSUE.danglingNode);
        const relation = this.block(v.relation);
        return { id: this.claimId(v.id), from, to, relation };
      }),
      columns: this.list(raw.columns, `${path}/columns`, (v) => {
        if (!isObject(v)) throw new Invalid(ISSUE.invalidItem);
        const label = this.block(v.label);
        return { id: this.claimId(v.id), label };
      }),
      rows: this.list(raw.rows, `${path}/rows`, (v, p) => {
        if (!isObject(v)) throw new Invalid(ISSUE.invalidItem);
        const cells = this.list(v.cells, `${p}/cells`, (c) => this.block(c));
        return { id: this.claimId(v.id), cells };
      }),
    };
  }
}

/** The report members the transcript decides: its speakers and segments. */
export function authoritativeOf(transcript: Transcript): Pick<Report, 'speakers' | 'segments'> {
  return {
    speakers: transcript.speakers.map((s) => ({ id: s.id, displayName: s.displayName })),
    segments: transcript.segments.map((s) => ({ id: s.id, text: s.text, startMs: s.startMs, endMs: s.endMs, speakerId: s.speakerId ?? '' })),
  };
}

function metadataOf(context: ReportContext, title: string): Report['metadata'] {
  return { title, recordedAt: context.recordedAt, timezone: context.timezone, durationMs: context.transcript.durationMs };
}

/**
 * Builds the report from the model's draft (already parsed JSON). Returns null when the draft is
 * not a JSON object at all, or when no content member of it is usable (no valid overview and not
 * one valid item in any list, e.g. `{}`): its format failed, and the caller makes the report
 * `unavailable`. `preIssues` are issues found before the model ran (e.g. a truncated transcript).
 */
export function assembleReport(draft: unknown, context: ReportContext, preIssues: readonly QualityIssue[] = []): Report | null {
  if (!isObject(draft)) return null;
  const check = new Checker(context.transcript);
  for (const i of preIssues) check.issue(i.code, i.path);
  let title = context.fallbackTitle;
  if (typeof draft.title === 'string' && draft.title.trim() !== '') title = draft.title.trim();
  else check.issue(ISSUE.missingMember, '/title');
  let overview = EMPTY_BLOCK;
  try {
    overview = check.block(draft.overview);
  } catch (err) {
    if (!(err instanceof Invalid)) throw err;
    check.issue(draft.overview === undefined ? ISSUE.missingMember : err.code, '/overview');
  }
  const report: Report = {
    version: 2,
    metadata: metadataOf(context, title),
    overview,
    keyPoints: check.list(draft.keyPoints, '/keyPoints', (v) => check.block(v)),
    sections: check.list(draft.sections, '/sections', (v, p) => check.section(v, p)),
    chapters: check.list(draft.chapters, '/chapters', (v, p) => check.chapter(v, p)),
    todos: check.list(draft.todos, '/todos', (v) => check.todo(v)),
    decisions: check.list(draft.decisions, '/decisions', (v, p) => check.decision(v, p)),
    quotes: check.list(draft.quotes, '/quotes', (v) => check.quote(v)),
    reviewItems: check.list(draft.reviewItems, '/reviewItems', (v) => check.reviewItem(v)),
    visuals: check.list(draft.visuals, '/visuals', (v, p) => check.visual(v, p)),
    ...authoritativeOf(context.transcript),
    quality: { status: check.issues.length === 0 ? 'complete' : 'partial', issues: check.issues },
  };
  const lists = [report.keyPoints, report.sections, report.chapters, report.todos, report.decisions, report.quotes, report.reviewItems, report.visuals];
  if (overview === EMPTY_BLOCK && lists.every((list) => list.length === 0)) return null;
  return report;
}

/** Whether a parsed draft is a JSON object (assembleReport's first condition). */
export function isDraftObject(draft: unknown): boolean {
  return isObject(draft);
}

/** The report when no summary could be had: the transcript remains, everything generated is empty. */
export function unavailableReport(context: ReportContext, issues: readonly QualityIssue[]): Report {
  return {
    version: 2,
    metadata: metadataOf(context, context.fallbackTitle),
    overview: EMPTY_BLOCK,
    keyPoints: [],
    sections: [],
    chapters: [],
    todos: [],
    decisions: [],
    quotes: [],
    reviewItems: [],
    visuals: [],
    ...authoritativeOf(context.transcript),
    quality: { status: 'unavailable', issues: [...issues] },
  };
}

/** The plain text of a block. */
export function blockText(block: Block): string {
  return block.content.map((c) => c.text).join('');
}
