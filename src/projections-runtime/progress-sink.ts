/** What a long operation reports to: how much work there is, and how much more is done. */
export interface ProgressSink {
  /** The total number of events the work will go through; null when it cannot be known cheaply. */
  setTotal(total: number | null): void;
  advance(events: number): void;
}
