// Clocks for tests: time that can be moved back, or that stands still and then advances.

/** Real time shifted by an adjustable offset: `back(ms)` moves the clock back, as NTP might. */
export class OffsetClock {
  offset = 0;
  readonly now = (): number => Date.now() + this.offset;
  back(ms: number): void {
    this.offset -= ms;
  }
}

/**
 * Stands at `start` for `readsPerTick` readings, then moves on by one millisecond, and so on:
 * a "frozen, then advancing" clock independent of real time. `back(ms)` moves it back.
 */
export class SteppingClock {
  reads = 0;
  private offset = 0;
  constructor(
    private readonly start: number,
    private readonly readsPerTick: number,
  ) {}
  readonly now = (): number => this.start + this.offset + Math.floor(this.reads++ / this.readsPerTick);
  back(ms: number): void {
    this.offset -= ms;
  }
}

/** Returns the values of `script` in turn (the last one for ever after), counting the reads. */
export class ScriptedClock {
  reads = 0;
  constructor(private readonly script: number[]) {}
  readonly now = (): number => this.script[Math.min(this.reads++, this.script.length - 1)];
}
