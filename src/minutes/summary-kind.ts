import { pricingOf } from '../billing/money';
import type { Catalog } from '../billing/catalog';
import type { UrlSigner } from '../files/signed-urls';
import type { TaskState } from '../tasks/decider';
import { taskStream } from '../tasks/events';
import { objectCodec } from '../tasks/codec';
import type { CreationPolicy } from '../tasks/creation';
import type { KindTask, TaskKind, TaskKindCodec, UpstreamPoll } from '../tasks/kind';
import { isRefusal } from '../tasks/upstream-task';
import type { Router } from '../upstreams/routing/router';
import { minutesRequestOf } from './kind';
import { authoritativeOf, ISSUE, unavailableReport } from './report';
import { reportContext } from './summary-stage';
import { expectReportV2, planSummaryParts, writeSummary } from './summarizer';
import { mergePartReports, partReportOf, type PartReport } from './summary-merge';
import { callsUsage, partLimitsOf, summaryCharges, type SummaryCall, type SummaryRequest } from './summary-parts';
import { transcriptOf } from './transcript';
import type { MinutesResult, MinutesUsage } from './result';
import { renderSummary, type SummaryRow } from './view';

export type { SummaryRequest } from './summary-parts';

/** Summaries: their result is the report part of a minutes result, their usage the calls' tokens. */
export const SUMMARY_TASK: TaskKindCodec<SummaryRequest, MinutesResult, MinutesUsage> = {
  kind: 'summary',
  idPrefix: 'sum',
  request: objectCodec<SummaryRequest>('summary request', { request_id: true, task_id: true, summary: true }),
  result: objectCodec<MinutesResult>('summary result', {}),
  usage: objectCodec<MinutesUsage>('summary usage', {}),
};

/** No provider task to create: the submit job acknowledges at once and the first poll writes the summary; 202. */
export const SUMMARY_CREATION: CreationPolicy = {
  endpoint: 'POST /v1/summaries',
  rateLimit: 'after_checks',
  submission: 'background',
  whenUnreachable: null,
  whenRefused: null,
  refusedParam: null,
  status: 202,
};

type SummaryTask = KindTask<SummaryRequest, MinutesResult, MinutesUsage>;


/**
 * A new summary of a minutes task (POST /v1/summaries): its own task `summary-<id>`, with its own
 * reservation (the summary's upper bound: each part's exact prompt plus the maximum output)
 * settled by the tokens observed, call by call; written in parts like the task's own summary. The
 * chat API answers synchronously, so there is no upstream task to create: submission only
 * acknowledges, and the first poll makes the calls.
 *
 * An answer that cannot be used is stored as the upstream's result with an `unavailable` report
 * (its tokens are billed, they were spent); such a summary reads as `failed`.
 */
export function summaryKind(deps: { catalog: Catalog; router: Pick<Router, 'attempt'>; loadTask: (stream: string) => Promise<TaskState>; pollMs: number }): TaskKind<SummaryRequest, MinutesResult, MinutesUsage> {
  return {
    ...SUMMARY_TASK,

    async submit(task: SummaryTask) {
      return { upstreamId: `chat:${task.taskId}` };
    },

    async poll(task: SummaryTask): Promise<UpstreamPoll<MinutesResult, MinutesUsage>> {
      const r = task.request;
      const minutes = await deps.loadTask(taskStream('minutes', r.task_id));
      const transcript = transcriptOf(minutes.result);
      if (!transcript) return { state: 'failed', error: { code: 'transcription_unavailable', message: `task ${r.task_id} has no transcription` } };
      const chat = deps.catalog.get(r.summary.model);
      if (!chat) return { state: 'failed', error: { code: 'summary_failed', message: `the summary model ${r.summary.model} is not in the catalog` } };
      const context = reportContext(minutesRequestOf(minutes), transcript);
      const { parts, preIssues } = planSummaryParts(chat, transcript, partLimitsOf(r.summary, chat));
      const calls: SummaryCall[] = [];
      // The channel of each billed call, for the settlement.
      const channels: string[] = [];
      const reports: PartReport[] = [];
      // The parts run one after another in this poll: a retried poll writes them all again, and
      // only the calls of the run that records its outcome are billed.
      for (const part of parts) {
        let outcome;
        try {
          const served = await deps.router.attempt(chat, (channel) => writeSummary(channel, part, context));
          outcome = served.value;
          channels.push(served.channel);
        } catch (err) {
          // A refusal is final; anything transient is retried by the poll job, then fails (released).
          if (isRefusal(err)) {
            return { state: 'failed', error: { code: 'summary_failed', message: `the summary failed: ${err.message}` } };
          }
          throw err;
        }
        calls.push({ input_tokens: outcome.inputTokens, output_tokens: outcome.outputTokens });
        if (outcome.kind === 'unparseable') {
          return {
            state: 'succeeded',
            result: { report: unavailableReport(context, [{ code: ISSUE.summaryUnparseable, path: '' }]), summary_status: 'failed', reason: outcome.reason },
            usage: callsUsage(calls),
            artifacts: [],
            channels,
          };
        }
        reports.push(partReportOf(outcome.report));
      }
      const report = mergePartReports(reports, authoritativeOf(transcript), preIssues);
      expectReportV2(report);
      return { state: 'succeeded', result: { report, summary_status: 'succeeded' }, usage: callsUsage(calls), artifacts: [], channels };
    },

    pollDelayMs: () => deps.pollMs,

    succeedsBeforeArchive: () => true,

    settlement(task: SummaryTask) {
      const r = task.request;
      const c = summaryCharges(r.summary, task.usage);
      return {
        pricing: pricingOf(...c.callLines),
        usage: { model: r.summary.model, task_id: r.task_id, flash_input_tokens: c.inputTokens, flash_output_tokens: c.outputTokens, flash_calls: c.callAmounts },
      };
    },

    render: (row: SummaryRow, _signer: UrlSigner) => renderSummary(row),
  };
}
