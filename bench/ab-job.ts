/**
 * What the `ab` section's client (ab-client.ts, a child process) is given and gives back. Kept
 * apart from the client: the client registers its message handler when loaded, so a module that
 * imported it for these (the chat load child did) would answer its own job with the client too.
 */

export interface AbTarget {
  readonly name: string;
  readonly origin: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface AbJob {
  readonly targets: readonly AbTarget[];
  readonly body: string;
  readonly stream: boolean;
  readonly requests: number;
  readonly block: number;
  readonly skip: number;
  readonly warmupRounds: number;
}

export interface AbResult {
  /** Per target, in order: latency to the last byte of each measured request, ms. */
  readonly latencyMs: number[][];
  /** Per target: time to the first byte of the body (streams only). */
  readonly firstByteMs: number[][];
  /** Per target: requests that failed (warm-up included), and the first failure. */
  readonly failed: number[];
  readonly firstError: (string | null)[];
}

/** Failures after which a target is given up: it gets no more requests, and the others go on. */
export const MAX_FAILURES_PER_TARGET = 100;
