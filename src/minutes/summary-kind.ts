import type { Catalog } from '../billing/catalog';
import { tokenCharge } from '../billing/money';
import type { UrlSigner } from '../files/signed-urls';
import type { TaskState } from '../tasks/decider';
import { taskStream } from '../tasks/events';
import type { TaskKind, UpstreamPoll } from '../tasks/kind';
import { isRefusal } from '../tasks/upstream-task';
import type { TaskRow } from '../tasks/view-row';
import type { Upstreams } from '../upstreams/registry';
import { minutesRequestOf } from './kind';
import { ISSUE, unavailableReport } from './report';
import { reportContext } from './summary-stage';
import { planSummary, writeSummary } from './summarizer';
import { transcriptOf } from './transcript';
import { renderSummary } from './view';

/** The request of a summary task, frozen at POST /v1/summaries. */
export interface SummaryRequest {
  readonly request_id: string;
  /** The minutes task whose transcript is summarised. */
  readonly task_id: string;
  readonly summary: { model: string; input_per_million: number; output_per_million: number; max_output_tokens: number };
}

/**
 * A new summary of a minutes task (POST /v1/summaries): its own task `summary-<id>`, with its own
 * reservation (the summary's upper bound: the exact prompt plus the maximum output) settled by
 * the tokens observed. The chat API answers synchronously, so there is no upstream task to
 * create: submission only acknowledges, and the first poll makes the call.
 *
 * An answer that cannot be used is stored as the upstream's result with an `unavailable` report
 * (its tokens are billed, they were spent); such a summary reads as `failed`.
 */
export function summaryKind(deps: { catalog: Catalog; upstreams: Upstreams; loadTask: (stream: string) => Promise<TaskState>; pollMs: number }): TaskKind {
  const requestOf = (task: { request: Record<string, unknown> }) => task.request as unknown as SummaryRequest;

  return {
    kind: 'summary',
    idPrefix: 'sum',

    async submit(task: TaskState) {
      return { upstreamId: `chat:${task.taskId}` };
    },

    async poll(task: TaskState): Promise<UpstreamPoll> {
      const r = requestOf(task);
      const minutes = await deps.loadTask(taskStream('minutes', r.task_id));
      const transcript = transcriptOf(minutes.result);
      if (!transcript) return { state: 'failed', error: { code: 'transcription_unavailable', message: `task ${r.task_id} has no transcription` } };
      const chat = deps.catalog.get(r.summary.model);
      if (!chat) return { state: 'failed', error: { code: 'summary_failed', message: `the summary model ${r.summary.model} is not in the catalog` } };
      const context = reportContext(minutesRequestOf(minutes), transcript);
      const plan = planSummary(chat, transcript, r.summary.max_output_tokens);
      let outcome;
      try {
        outcome = await writeSummary(deps.upstreams.channel(chat.channel), plan, context);
      } catch (err) {
        // A refusal is final; anything transient is retried by the poll job, then fails (released).
        if (isRefusal(err)) {
          return { state: 'failed', error: { code: 'summary_failed', message: `the summary failed: ${err.message}` } };
        }
        throw err;
      }
      const usage = { flash_input_tokens: outcome.inputTokens, flash_output_tokens: outcome.outputTokens };
      if (outcome.kind === 'unparseable') {
        return {
          state: 'succeeded',
          result: { report: unavailableReport(context, [{ code: ISSUE.summaryUnparseable, path: '' }]), summary_status: 'failed', reason: outcome.reason },
          usage,
          artifacts: [],
        };
      }
      return { state: 'succeeded', result: { report: outcome.report, summary_status: 'succeeded' }, usage, artifacts: [] };
    },

    pollDelayMs: () => deps.pollMs,

    succeedsBeforeArchive: () => true,

    settlement(task: TaskState) {
      const r = requestOf(task);
      const input = Number(task.usage?.flash_input_tokens ?? 0);
      const output = Number(task.usage?.flash_output_tokens ?? 0);
      return {
        amount: tokenCharge(r.summary, input, output),
        usage: { model: r.summary.model, task_id: r.task_id, flash_input_tokens: input, flash_output_tokens: output },
      };
    },

    render: (row: TaskRow, _signer: UrlSigner) => renderSummary(row),
  };
}
