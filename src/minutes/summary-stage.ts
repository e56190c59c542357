import type { Catalog } from '../billing/catalog';
import { scheduleJob, type Job, type JobHandler, type JobOutcome } from '../jobs/queue';
import type { Logger } from '../log';
import type { Consumer } from '../projections-runtime/consumer';
import { defineConsumer } from '../projections-runtime/define';
import { isTerminal, type TaskState } from '../tasks/decider';
import type { TaskEngine } from '../tasks/engine';
import type { TaskEvent } from '../tasks/events';
import { UpstreamError } from '../upstreams/errors';
import type { Router } from '../upstreams/routing/router';
import { minutesRequestOf, SUMMARY_STAGE } from './kind';
import { authoritativeOf, ISSUE, unavailableReport, type QualityIssue, type ReportContext } from './report';
import type { NormalizedMinutesRequest } from './request';
import { expectReportV2, planSummaryParts, writeSummary } from './summarizer';
import { mergePartReports, partReportOf, type PartReport } from './summary-merge';
import { callsUsage, partLimitsOf, type SummaryCall } from './summary-parts';
import { transcriptOf, type Transcript } from './transcript';

/**
 * The summary stage of `service-minutes`, after the transcription succeeded: a job writes the
 * summary, and a durable timer fails the task if the summary is still unfinished
 * MINUTES_SUMMARY_TIMEOUT_MS after the transcription (issue `summary_timeout`, no automatic
 * retry). Both are jobs scheduled from the TaskUpstreamSucceeded event, with due times derived
 * from its time, so a restart or a replay schedules the same timers. Whichever of the two records
 * its outcome first wins (CompleteStage applies once); GET never drives any of it.
 */
export const MINUTES_JOB = {
  summary: 'minutes.summary',
  summaryTimeout: 'minutes.summary_timeout',
} as const;

/** Transient failures of the chat call (no answer, 429, 5xx) are retried this many times in all. */
const MAX_SUMMARY_ATTEMPTS = 3;

export function minutesProcessManager(settings: { summaryTimeoutMs: number }): Consumer {
  return defineConsumer<TaskEvent>()({
    name: 'minutes-process-manager',
    handles: ['TaskUpstreamSucceeded'],
    async apply(tx, event) {
      if (!event.streamId.startsWith('minutes-') || event.data.stage !== SUMMARY_STAGE) return;
      const stream = event.streamId;
      const at = new Date(event.data.at);
      const deadline = new Date(at.getTime() + settings.summaryTimeoutMs);
      await scheduleJob(tx, MINUTES_JOB.summary, stream, { stream, deadline: deadline.toISOString() }, at);
      await scheduleJob(tx, MINUTES_JOB.summaryTimeout, stream, { stream }, deadline);
    },
  });
}

/** What the report's metadata comes from: the request only (recordedAt is never the creation time). */
export function reportContext(request: NormalizedMinutesRequest, transcript: Transcript): ReportContext {
  return {
    transcript,
    recordedAt: request.recorded_at ?? '',
    timezone: request.timezone ?? '',
    fallbackTitle: request.file_name.replace(/\.[A-Za-z0-9]{1,5}$/, '') || 'Meeting',
  };
}

function transient(err: UpstreamError): boolean {
  return err.status === 0 || err.status === 429 || err.status >= 500;
}

/** The calls already made and recorded as steps of the summary stage (parts survive a restart). */
function recordedCalls(task: TaskState): SummaryCall[] {
  return [...task.stageSteps].sort((a, b) => a.step - b.step).map((s) => ({ input_tokens: Number(s.usage.flash_input_tokens ?? 0), output_tokens: Number(s.usage.flash_output_tokens ?? 0) }));
}

export function minutesJobHandlers(deps: { engine: TaskEngine; catalog: Catalog; router: Pick<Router, 'attempt'>; logger: Logger; summaryTimeoutMs: number }): Record<string, JobHandler> {
  const { engine } = deps;
  const done: JobOutcome = { done: true };
  const meta = (job: Job) => ({ causationId: `job:${job.kind}:${job.key}` });

  /** Ends the stage as failed: the transcript stays, the report is `unavailable`, every observed call is kept for billing. */
  /** `channels`: those of billed calls no step recorded (a last, unusable part). */
  function failStage(job: Job, context: ReportContext, issues: QualityIssue[], error: { code: string; message: string }, calls: readonly SummaryCall[], channels: readonly string[] = []) {
    return engine.run(
      job.payload.stream as string,
      {
        type: 'CompleteStage',
        stage: SUMMARY_STAGE,
        outcome: 'failed',
        result: { report: unavailableReport(context, issues), transcription_status: 'succeeded', summary_status: 'failed' },
        usage: callsUsage(calls),
        error,
        channels,
        now: engine.now(),
      },
      meta(job),
    );
  }

  return {
    /**
     * Writes the next part of the summary and records it as a step of the stage; once every part
     * is recorded, merges them and completes the stage. One part per run: a restart (or a retry)
     * resumes at the first part not recorded, and completed parts are neither called nor billed
     * again. Each part has its own MAX_SUMMARY_ATTEMPTS (a run that records a part resets them).
     */
    async [MINUTES_JOB.summary](job) {
      const stream = job.payload.stream as string;
      const task = await engine.load(stream);
      if (isTerminal(task.status) || task.pendingStage !== SUMMARY_STAGE) return done;
      const remaining = Date.parse(job.payload.deadline as string) - Date.now();
      // Past the deadline the timer fails the task; a summary is never started that late.
      if (remaining <= 0) return done;
      const request = minutesRequestOf(task);
      const transcript = transcriptOf(task.result)!;
      const context = reportContext(request, transcript);
      const calls = recordedCalls(task);
      const chat = request.summary ? deps.catalog.get(request.summary.model) : undefined;
      if (!request.summary || !chat) {
        await failStage(job, context, [{ code: ISSUE.summaryFailed, path: '' }], { code: 'summary_failed', message: `the summary model ${request.summary?.model ?? ''} is not in the catalog` }, calls);
        return done;
      }
      const plan = planSummaryParts(chat, transcript, partLimitsOf(request.summary, chat));
      const recorded = new Set(task.stageSteps.map((s) => s.step));
      const next = plan.parts.findIndex((_, k) => !recorded.has(k));
      if (next >= 0) {
        const deadline = AbortSignal.timeout(remaining);
        let outcome;
        let served: string;
        try {
          const part = plan.parts[next]!;
          ({ value: outcome, channel: served } = await deps.router.attempt(chat, (channel) => writeSummary(channel, part, context, deadline), { signal: deadline }));
        } catch (err) {
          if (deadline.aborted) return done; // the timer records summary_timeout
          if (!(err instanceof UpstreamError)) throw err;
          if (transient(err) && job.attempts < MAX_SUMMARY_ATTEMPTS) throw err;
          deps.logger.warn({ err, stream, part: next }, 'the minutes summary failed');
          await failStage(job, context, [{ code: ISSUE.summaryFailed, path: '' }], { code: 'summary_failed', message: `the summary failed: ${err.message}` }, calls);
          return done;
        }
        const call = { input_tokens: outcome.inputTokens, output_tokens: outcome.outputTokens };
        if (outcome.kind === 'unparseable') {
          const where = plan.parts.length > 1 ? ` (part ${next + 1} of ${plan.parts.length})` : '';
          await failStage(job, context, [{ code: ISSUE.summaryUnparseable, path: '' }], { code: 'summary_unavailable', message: `the summary could not be used${where}: ${outcome.reason}` }, [...calls, call], [served]);
          return done;
        }
        const usage = { flash_input_tokens: call.input_tokens, flash_output_tokens: call.output_tokens };
        await engine.run(
          stream,
          { type: 'RecordStageStep', stage: SUMMARY_STAGE, step: next, result: { report: partReportOf(outcome.report) }, usage, channels: [served], now: engine.now() },
          meta(job),
        );
        // The next part (or the merge) runs as a new claim of this job, its attempts counted afresh.
        return { retryAt: new Date() };
      }
      const parts = plan.parts.map((_, k) => task.stageSteps.find((s) => s.step === k)!.result.report as PartReport);
      const report = mergePartReports(parts, authoritativeOf(transcript), plan.preIssues);
      expectReportV2(report);
      await engine.run(
        stream,
        {
          type: 'CompleteStage',
          stage: SUMMARY_STAGE,
          outcome: 'succeeded',
          result: { report, transcription_status: 'succeeded', summary_status: 'succeeded' },
          usage: callsUsage(calls),
          error: null,
          now: engine.now(),
        },
        meta(job),
      );
      return done;
    },

    async [MINUTES_JOB.summaryTimeout](job) {
      const task = await engine.load(job.payload.stream as string);
      if (isTerminal(task.status) || task.pendingStage !== SUMMARY_STAGE) return done;
      const request = minutesRequestOf(task);
      const minutes = Math.round(deps.summaryTimeoutMs / 60_000);
      await failStage(
        job,
        reportContext(request, transcriptOf(task.result)!),
        [{ code: ISSUE.summaryTimeout, path: '' }],
        { code: 'summary_timeout', message: `the summary did not finish within ${minutes >= 1 ? `${minutes} minutes` : `${deps.summaryTimeoutMs} ms`} after the transcription succeeded` },
        recordedCalls(task),
      );
      return done;
    },
  };
}
