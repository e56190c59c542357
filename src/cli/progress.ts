/**
 * Progress of a long command over the event log (`npm run audit`, `npm run projections:rebuild`),
 * written to stderr so that stdout keeps the command's result. On a terminal one line is redrawn
 * in place; otherwise (a log file, CI) a plain line is written every `intervalMs`, so the output
 * stays readable and small. Both say events done of the total, events per second and the time
 * left; `finish` writes a summary line.
 */

import type { ProgressSink } from '../projections-runtime/progress-sink';

export type { ProgressSink };

export interface ProgressOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface ProgressOptions {
  /** Milliseconds since some fixed point (injectable for tests). Default: performance.now. */
  readonly clock?: () => number;
  /** Between plain lines when the output is not a terminal. Default 5 s. */
  readonly intervalMs?: number;
  /** Between redraws on a terminal. Default 100 ms. */
  readonly redrawMs?: number;
}

const DEFAULT_INTERVAL_MS = 5_000;
const DEFAULT_REDRAW_MS = 100;

export class ProgressReporter implements ProgressSink {
  private readonly clock: () => number;
  private readonly intervalMs: number;
  private readonly redrawMs: number;
  private readonly started: number;
  private lastPrinted: number;
  private total: number | null = null;
  private done = 0;
  private drawn = false;

  constructor(
    private readonly label: string,
    private readonly out: ProgressOutput,
    options: ProgressOptions = {},
  ) {
    this.clock = options.clock ?? (() => performance.now());
    this.intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.redrawMs = options.redrawMs ?? DEFAULT_REDRAW_MS;
    this.started = this.lastPrinted = this.clock();
  }

  setTotal(total: number | null): void {
    this.total = total;
  }

  advance(events: number): void {
    this.done += events;
    const now = this.clock();
    if (now - this.lastPrinted < (this.out.isTTY ? this.redrawMs : this.intervalMs)) return;
    this.lastPrinted = now;
    if (this.out.isTTY) {
      // Carriage return and erase-line: the same line, redrawn.
      this.out.write(`\r\x1b[2K${this.line(now)}`);
      this.drawn = true;
    } else {
      this.out.write(`${this.line(now)}\n`);
    }
  }

  /** The summary: events, time taken and the average rate (and `outcome`, e.g. "ok"). */
  finish(outcome?: string): void {
    const seconds = (this.clock() - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    const summary = `${this.label}: ${count(this.done)} events in ${duration(seconds)} (${count(rate)} events/s)${outcome ? `; ${outcome}` : ''}`;
    this.out.write(`${this.drawn ? '\r\x1b[2K' : ''}${summary}\n`);
    this.drawn = false;
  }

  private line(now: number): string {
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    const parts = [this.total === null ? `${count(this.done)} events` : `${count(this.done)} of ${count(this.total)} events (${percent(this.done, this.total)})`, `${count(rate)} events/s`];
    if (this.total !== null && rate > 0) parts.push(`about ${duration(Math.max(0, this.total - this.done) / rate)} left`);
    return `${this.label}: ${parts.join(', ')}`;
  }
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function percent(done: number, total: number): string {
  return total > 0 ? `${Math.min(100, Math.floor((done / total) * 100))}%` : '100%';
}

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const s = Math.round(seconds);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
