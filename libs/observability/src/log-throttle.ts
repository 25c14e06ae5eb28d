/**
 * Bounds how often one kind of line is written when anyone on the bus can cause it (a stray
 * envelope, a message without a reply subject): at most `perWindow` lines each `windowMs`; the
 * first line after a quiet spell says how many were left out.
 */
export class LogThrottle {
  private windowStart = 0;
  private written = 0;
  private suppressed = 0;

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether to write this line, and how many were left out before it (write `suppressed` when it is not 0). */
  take(): { write: boolean; suppressed: number } {
    const t = this.now();
    if (t - this.windowStart >= this.windowMs) {
      this.windowStart = t;
      this.written = 0;
    }
    if (this.written >= this.perWindow) {
      this.suppressed += 1;
      return { write: false, suppressed: 0 };
    }
    this.written += 1;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    return { write: true, suppressed };
  }
}
