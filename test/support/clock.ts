/**
 * A gateway clock that a test moves instead of waiting: real time plus an offset. `hold` stops it,
 * so that two requests a test means to be "at once" are at once however slow the machine is
 * (a polling limit of one second is otherwise crossed by a busy machine between two requests);
 * `release` lets it run again from where real time is, so it never goes back.
 */
export class TestClock {
  private offsetMs = 0;
  private heldAt: number | null = null;

  /** The clock to pass to the gateway (`startTestGateway(env, { clock: clock.now })`). */
  readonly now = (): Date => new Date((this.heldAt ?? Date.now()) + this.offsetMs);

  /** Moves the clock forward by `ms`. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Sets the clock to real time plus `ms` (0: real time again). */
  setOffset(ms: number): void {
    this.offsetMs = ms;
  }

  /** Stops the clock at this instant until `release` (moving it with `advance` still works). */
  hold(): void {
    this.heldAt ??= Date.now();
  }

  release(): void {
    this.heldAt = null;
  }
}
