/**
 * The chat simulator's answer to the minutes summary request: a chat completion whose content is
 * a report draft (the structured output `minutes_report_v2`), built from the transcript lines it
 * is given, so every reference it makes names a real segment. Deterministic.
 *
 * A `[sim:summary=…]` directive anywhere in the transcript selects a behaviour:
 * `fail` HTTP 500 every time; `invalid` an answer that is not JSON; `invalid-once` that, but only
 * the first time this transcript is summarised; `slow` the answer comes after 60 s (or never, if
 * the caller gives up first); `dangling` the draft also carries items that reference missing
 * segments, times outside the recording, a reused id and an unknown speaker.
 */
import { createHash } from 'node:crypto';
import { countMessageTokens, countTokens, splitTokens, type TokenMessage } from '../src/billing/tokens';
import { parseDirectives } from './directives';
import { sendError, sendJson, waitUnlessGone } from './http';
import type { SimContext } from './route';

export const MINUTES_SUMMARY_SCHEMA_NAME = 'minutes_report_v2';
const SLOW_MS = 60_000;

/** True for a chat request asking for the minutes report structured output. */
export function isMinutesSummaryRequest(body: unknown): boolean {
  const format = (body as { response_format?: { type?: unknown; json_schema?: { name?: unknown } } } | null)?.response_format;
  return format?.type === 'json_schema' && format.json_schema?.name === MINUTES_SUMMARY_SCHEMA_NAME;
}

interface Line {
  id: string;
  startMs: number;
  endMs: number;
  speaker: string;
  text: string;
}

const LINE = /^\[(\S+) \| (\d+)-(\d+) ms \| (\S*)\] (.*)$/;

function parseLines(prompt: string): Line[] {
  const lines: Line[] = [];
  for (const raw of prompt.split('\n')) {
    const m = LINE.exec(raw.trim());
    if (m) lines.push({ id: m[1]!, startMs: Number(m[2]), endMs: Number(m[3]), speaker: m[4]!, text: m[5]!.replace(/\[sim:[^\]]*\]\s*/g, '') });
  }
  return lines;
}

const block = (text: string, ids: string[]) => ({ text, sourceSegmentIds: ids });
const firstWords = (text: string, zh: boolean) => (zh ? text.slice(0, 12) : text.split(/\s+/).slice(0, 6).join(' '));

/** A draft report of the transcript. */
export function draftFromLines(lines: Line[], durationMs: number): Record<string, unknown> {
  const zh = lines.some((l) => /[\u4e00-\u9fff]/.test(l.text));
  const ids = (ls: Line[]) => ls.map((l) => l.id);
  const chunks: Line[][] = [];
  for (let i = 0; i < lines.length; i += 4) chunks.push(lines.slice(i, i + 4));
  const chapters = chunks.map((chunk, k) => ({
    id: `ch-${k + 1}`,
    heading: block(firstWords(chunk[0]!.text, zh), [chunk[0]!.id]),
    summary: block(chunk.map((l) => l.text).join(' '), ids(chunk)),
    startSegmentId: chunk[0]!.id,
    endSegmentId: chunk[chunk.length - 1]!.id,
    startMs: chunk[0]!.startMs,
    endMs: chunk[chunk.length - 1]!.endMs,
    children:
      k === 0 && chunk.length >= 2
        ? [chunk.slice(0, 2), chunk.slice(2)].filter((c) => c.length > 0).map((c, j) => ({
            id: `ch-1-${j + 1}`,
            heading: block(firstWords(c[0]!.text, zh), [c[0]!.id]),
            summary: block(c.map((l) => l.text).join(' '), ids(c)),
            startSegmentId: c[0]!.id,
            endSegmentId: c[c.length - 1]!.id,
            startMs: c[0]!.startMs,
            endMs: c[c.length - 1]!.endMs,
            children: [],
          }))
        : [],
  }));
  const sections = chunks.map((chunk, k) => ({
    id: `sec-${k + 1}`,
    heading: block(firstWords(chunk[0]!.text, zh), [chunk[0]!.id]),
    paragraphs: [block(chunk.map((l) => l.text).join(' '), ids(chunk))],
    bullets: chunk.map((l) => block(l.text, [l.id])),
    children: k === 0 ? [{ id: 'sec-1-1', heading: block(zh ? '要点' : 'Highlights', [chunk[0]!.id]), paragraphs: [], bullets: [block(chunk[0]!.text, [chunk[0]!.id])], children: [] }] : [],
  }));
  const todoLines = lines.filter((l) => /please|follow up|请|负责/i.test(l.text));
  const decisionLines = lines.filter((l) => /decided|决定/.test(l.text));
  const nounLines = lines.filter((l) => l.text.includes('Kubernetes'));
  return {
    title: zh ? `会议纪要：${firstWords(lines[0]?.text ?? '', zh)}` : `Minutes: ${firstWords(lines[0]?.text ?? '', zh)}`,
    overview: block(
      zh ? `本次会议时长约 ${Math.round(durationMs / 60_000)} 分钟，讨论了 ${chunks.length} 个部分。` : `The meeting ran about ${Math.round(durationMs / 60_000)} minutes and covered ${chunks.length} parts.`,
      ids(lines.slice(0, 3)),
    ),
    keyPoints: lines.filter((_, i) => i % 4 === 1).slice(0, 5).map((l) => block(l.text, [l.id])),
    sections,
    chapters,
    todos: todoLines.map((l, k) => ({
      id: `todo-${k + 1}`,
      action: block(l.text, [l.id]),
      assigneeSpeakerId: l.speaker,
      assignmentQuote: l.text,
      deadline: /Friday|周五/.test(l.text) ? (zh ? '下周五' : 'next Friday') : '',
    })),
    decisions: decisionLines.map((l, k) => ({
      id: `dec-${k + 1}`,
      question: block(zh ? '数据迁移采用哪个方案？' : 'Which plan does the data migration follow?', [l.id]),
      options: [{ proposal: block(zh ? '方案B' : 'Plan B', [l.id]), proposerSpeakerId: l.speaker }],
      conclusion: block(l.text, [l.id]),
      basis: [block(l.text, [l.id])],
      confirmationQuote: l.text,
    })),
    quotes: lines
      .filter((l) => l.speaker !== '')
      .slice(0, 2)
      .map((l, k) => ({
        id: `quote-${k + 1}`,
        text: l.text,
        speakerId: l.speaker,
        startMs: l.startMs,
        endMs: l.endMs,
        reason: block(zh ? '设定了会议议程' : 'Sets the agenda', [l.id]),
        sourceSegmentIds: [l.id],
      })),
    reviewItems: nounLines.slice(0, 1).map((l, k) => ({ id: `rev-${k + 1}`, originalText: 'Kubernetes', candidates: ['Kubernetes', 'K8s'], sourceSegmentIds: [l.id] })),
    visuals:
      chunks.length === 0
        ? []
        : [
            {
              id: 'vis-1',
              heading: block(zh ? '会议结构' : 'Meeting structure', [lines[0]!.id]),
              nodes: [
                {
                  id: 'node-root',
                  label: block(zh ? '会议' : 'Meeting', [lines[0]!.id]),
                  children: chapters.map((c) => ({ id: `node-${c.id}`, label: block(c.heading.text, c.heading.sourceSegmentIds), children: [] })),
                },
              ],
              edges: chapters.map((c) => ({ id: `edge-${c.id}`, from: 'node-root', to: `node-${c.id}`, relation: block(zh ? '包含' : 'contains', [c.startSegmentId]) })),
              columns: [
                { id: 'col-topic', label: block(zh ? '议题' : 'Topic', [lines[0]!.id]) },
                { id: 'col-time', label: block(zh ? '时间' : 'Time', [lines[0]!.id]) },
              ],
              rows: chapters.map((c) => ({ id: `row-${c.id}`, cells: [block(c.heading.text, c.heading.sourceSegmentIds), block(`${c.startMs}-${c.endMs} ms`, [c.startSegmentId])] })),
            },
          ],
  };
}

/** Adds the broken items a careless model might produce. */
function addDangling(draft: Record<string, unknown>, lines: Line[], durationMs: number): void {
  const first = lines[0]!;
  (draft.keyPoints as unknown[]).push(block('A point nobody made.', ['seg-9999']));
  (draft.todos as unknown[]).push({ id: 'todo-ghost', action: block('Chase a ghost.', [first.id, 'seg-9998']), assigneeSpeakerId: first.speaker, assignmentQuote: '', deadline: '' });
  (draft.chapters as unknown[]).push({
    id: 'ch-late',
    heading: block('After the end', [first.id]),
    summary: block('Past the recording.', [first.id]),
    startSegmentId: first.id,
    endSegmentId: first.id,
    startMs: durationMs + 1_000,
    endMs: durationMs + 60_000,
    children: [],
  });
  const quotes = draft.quotes as Record<string, unknown>[];
  if (quotes[0]) quotes.push({ ...quotes[0], text: `${String(quotes[0].text)} (again)` });
  quotes.push({ id: 'quote-stranger', text: first.text, speakerId: 'spk-404', startMs: first.startMs, endMs: first.endMs, reason: block('Who said it?', [first.id]), sourceSegmentIds: [first.id] });
}

const failedOnce = new Set<string>();

export async function handleMinutesSummary(ctx: SimContext, seq: number): Promise<void> {
  const body = ctx.body as { model?: string; messages?: { role?: string; content?: unknown }[]; max_tokens?: number; max_completion_tokens?: number };
  const messages: TokenMessage[] = (body.messages ?? []).map((m) => ({ role: String(m.role ?? 'user'), content: typeof m.content === 'string' ? m.content : '' }));
  const prompt = messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
  const directive = parseDirectives(prompt).raw['summary'];
  const lines = parseLines(prompt);
  if (directive === 'slow' && !(await waitUnlessGone(ctx.res, SLOW_MS))) return;
  if (directive === 'fail') return sendError(ctx.res, 500, 'Simulated summary failure (HTTP 500)', 'internal_error');
  const durationMs = Number(/Recording length: (\d+) ms/.exec(prompt)?.[1] ?? lines[lines.length - 1]?.endMs ?? 0);

  let content: string;
  const key = createHash('sha256').update(prompt).digest('hex');
  if (directive === 'invalid' || (directive === 'invalid-once' && !failedOnce.has(key))) {
    failedOnce.add(key);
    content = 'I am sorry, here are the minutes in prose rather than JSON.';
  } else {
    const draft = draftFromLines(lines, durationMs);
    if (directive === 'dangling' && lines.length > 0) addDangling(draft, lines, durationMs);
    content = JSON.stringify(draft);
  }
  const limit = body.max_completion_tokens ?? body.max_tokens;
  let finish = 'stop';
  if (typeof limit === 'number' && countTokens(content) > limit) {
    content = splitTokens(content).slice(0, limit).join('');
    finish = 'length';
  }
  const promptTokens = countMessageTokens(messages);
  const completionTokens = countTokens(content);
  sendJson(ctx.res, 200, {
    id: `chatcmpl-sim-${seq}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'unknown',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finish }],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  });
}
