import type { Report } from './report';
import type { SummaryCall } from './summary-parts';
import type { Transcript } from './transcript';

/**
 * What a minutes task records as its result: the transcription (and a partner's extras) when its
 * provider succeeds, then the summary stage's report and statuses, merged in. A summary task
 * (POST /v1/summaries) records the report part. Every member is optional: each stage adds its own,
 * and tasks recorded before a member existed lack it.
 */
export type MinutesResult = {
  readonly transcript?: Transcript;
  /** The partner's summary and chapters in the gateway's legacy shapes, its todos, qa and translation in the provider's structure (its adapter says which). */
  readonly extras?: Readonly<Record<string, unknown>>;
  readonly report?: Report;
  readonly transcription_status?: 'succeeded';
  readonly summary_status?: 'succeeded' | 'failed';
  /** Why the summary model's answer could not be used (a summary whose report is unavailable). */
  readonly reason?: string;
};

/** What a minutes task (or a summary) is billed by: the recording's length, and each summary call's tokens. */
export type MinutesUsage = {
  readonly duration_ms?: number;
  readonly flash_input_tokens?: number;
  readonly flash_output_tokens?: number;
  readonly flash_calls?: readonly SummaryCall[];
};
