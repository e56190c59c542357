/**
 * Whether the concurrent claim loops of a worker are in a streak of failures, counted so that an
 * outage is reported once when it starts and once when it ends. The loops overlap: a claim that
 * began during an outage may fail after another loop's later claim has already succeeded. Such a
 * failure is old news (the database answered after it began) and neither restarts the streak nor
 * counts in it, so one outage gives one warning and one recovery, however the loops interleave.
 */
export class FailureStreak {
  private attempts = 0;
  private latestSuccess = 0;
  private failures = 0;

  /** Numbers an attempt at its start; pass the number to failed() or succeeded(). */
  begin(): number {
    return ++this.attempts;
  }

  /** 'first' when this failure starts a streak, 'again' within one, 'stale' when a later attempt already succeeded. */
  failed(attempt: number): 'first' | 'again' | 'stale' {
    if (attempt < this.latestSuccess) return 'stale';
    return this.failures++ === 0 ? 'first' : 'again';
  }

  /** The number of failures of the streak this success ends, or 0 when there was none. */
  succeeded(attempt: number): number {
    this.latestSuccess = Math.max(this.latestSuccess, attempt);
    const ended = this.failures;
    this.failures = 0;
    return ended;
  }

  /** Failures of the current streak (0 when the last attempts succeed). */
  get count(): number {
    return this.failures;
  }
}
