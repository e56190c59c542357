/**
 * JSON Schemas of the minutes report.
 *
 * - REPORT_V2_SCHEMA: the report version 2 exactly as the interface specification shapes it, as
 *   clients receive it (`report` of GET /v1/audio/minutes/{taskId}). Every object lists its
 *   members exhaustively. The gateway checks each report it stores against it.
 * - DRAFT_SCHEMA: what the summary model is asked to produce (structured output named
 *   `minutes_report_v2`): content only, blocks as {text, sourceSegmentIds}. The gateway adds the
 *   version, metadata, speakers, segments, the fixed enum members and the quality verdict.
 */
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const strings = { type: 'array', items: str } as const;

function object(properties: Record<string, unknown>): Record<string, unknown> {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
const listOf = (name: string) => ({ type: 'array', items: ref(name) });

/**
 * Sections and chapters have one shape in the model's draft and in the stored report; only what a
 * `block` is differs between the two, and each schema defines its own.
 */
const STRUCTURE_DEFS = {
    section: object({ id: str, heading: ref('block'), paragraphs: listOf('block'), bullets: listOf('block'), children: listOf('section') }),
    chapter: object({
      id: str,
      heading: ref('block'),
      summary: ref('block'),
      startSegmentId: str,
      endSegmentId: str,
      startMs: int,
      endMs: int,
      children: listOf('chapter'),
    }),
};

export const REPORT_V2_SCHEMA = {
  $id: 'https://gateway.example/schemas/minutes-report-v2.json',
  $defs: {
    richText: object({ type: { const: 'text' }, text: str }),
    block: object({ content: listOf('richText'), sourceSegmentIds: strings, verification: { const: 'sourced' } }),
    ...STRUCTURE_DEFS,
    todo: object({ id: str, action: ref('block'), assigneeSpeakerId: str, assignmentQuote: str, deadline: str, status: { const: 'pending' } }),
    decision: object({
      id: str,
      question: ref('block'),
      options: { type: 'array', items: object({ proposal: ref('block'), proposerSpeakerId: str }) },
      conclusion: ref('block'),
      basis: listOf('block'),
      status: { const: 'proposed' },
      confirmationQuote: str,
    }),
    quote: object({ id: str, text: str, speakerId: str, startMs: int, endMs: int, reason: ref('block'), sourceSegmentIds: strings }),
    reviewItem: object({ id: str, kind: { const: 'proper_noun' }, originalText: str, candidates: strings, sourceSegmentIds: strings, status: { const: 'pending' } }),
    visualNode: object({ id: str, label: ref('block'), children: listOf('visualNode') }),
    visual: object({
      id: str,
      type: { const: 'hierarchy' },
      origin: { const: 'summary_structure' },
      heading: ref('block'),
      nodes: listOf('visualNode'),
      edges: { type: 'array', items: object({ id: str, from: str, to: str, relation: ref('block') }) },
      columns: { type: 'array', items: object({ id: str, label: ref('block') }) },
      rows: { type: 'array', items: object({ id: str, cells: listOf('block') }) },
    }),
  },
  ...object({
    version: { const: 2 },
    metadata: object({ title: str, recordedAt: str, timezone: str, durationMs: int }),
    overview: ref('block'),
    keyPoints: listOf('block'),
    sections: listOf('section'),
    chapters: listOf('chapter'),
    todos: listOf('todo'),
    decisions: listOf('decision'),
    quotes: listOf('quote'),
    reviewItems: listOf('reviewItem'),
    visuals: listOf('visual'),
    speakers: { type: 'array', items: object({ id: str, displayName: str }) },
    segments: { type: 'array', items: object({ id: str, text: str, startMs: int, endMs: int, speakerId: str }) },
    quality: object({
      status: { enum: ['complete', 'partial', 'unavailable'] },
      issues: { type: 'array', items: object({ code: str, path: str }) },
    }),
  }),
} as const;

/** The name the structured-output request carries (providers, and the simulator, key on it). */
export const DRAFT_SCHEMA_NAME = 'minutes_report_v2';

export const DRAFT_SCHEMA = {
  $defs: {
    block: object({ text: str, sourceSegmentIds: strings }),
    ...STRUCTURE_DEFS,
    visualNode: object({ id: str, label: ref('block'), children: listOf('visualNode') }),
  },
  ...object({
    title: str,
    overview: ref('block'),
    keyPoints: listOf('block'),
    sections: listOf('section'),
    chapters: listOf('chapter'),
    todos: { type: 'array', items: object({ id: str, action: ref('block'), assigneeSpeakerId: str, assignmentQuote: str, deadline: str }) },
    decisions: {
      type: 'array',
      items: object({
        id: str,
        question: ref('block'),
        options: { type: 'array', items: object({ proposal: ref('block'), proposerSpeakerId: str }) },
        conclusion: ref('block'),
        basis: listOf('block'),
        confirmationQuote: str,
      }),
    },
    quotes: { type: 'array', items: object({ id: str, text: str, speakerId: str, startMs: int, endMs: int, reason: ref('block'), sourceSegmentIds: strings }) },
    reviewItems: { type: 'array', items: object({ id: str, originalText: str, candidates: strings, sourceSegmentIds: strings }) },
    visuals: {
      type: 'array',
      items: object({
        id: str,
        heading: ref('block'),
        nodes: listOf('visualNode'),
        edges: { type: 'array', items: object({ id: str, from: str, to: str, relation: ref('block') }) },
        columns: { type: 'array', items: object({ id: str, label: ref('block') }) },
        rows: { type: 'array', items: object({ id: str, cells: listOf('block') }) },
      }),
    },
  }),
} as const;
