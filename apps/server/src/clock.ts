// Time is an input (TigerBeetle's TIGER_STYLE): code asks a Clock for the time instead of reading
// the wall clock, so a test can move time across a rule's edge instead of waiting for it.
// Production passes `systemClock`; tests pass a `ManualClock` and call `advance()`.
// Nothing else in apps/server/src may call Date.now() or `new Date()` without an argument.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
  /** Run `fn` once `ms` milliseconds of this clock's time have passed. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

export interface ClockTimer {
  /** Keep the process alive for this timer or not (no-op on a manual clock). */
  unref?(): void;
}

export function nowIso(clock: Clock): string {
  return new Date(clock.nowMs()).toISOString();
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

interface ManualTimer extends ClockTimer {
  dueMs: number;
  seq: number;
  fn: () => void;
  cleared: boolean;
}

// A clock that only moves when told to. Timers fire in due order during advance(), each at its
// own due time (nowMs() reads that time inside the callback).
export class ManualClock implements Clock {
  private currentMs: number;
  private timers: ManualTimer[] = [];
  private seq = 0;

  constructor(startMs: number = Date.UTC(2026, 10, 2, 15, 0, 0)) {
    this.currentMs = startMs;
  }

  nowMs(): number {
    return this.currentMs;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer: ManualTimer = { dueMs: this.currentMs + Math.max(0, ms), seq: this.seq++, fn, cleared: false, unref() {} };
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(timer: ClockTimer): void {
    (timer as ManualTimer).cleared = true;
    this.timers = this.timers.filter((t) => t !== timer);
  }

  /** Move time forward by `ms`, firing every timer that falls due on the way, in order. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error(`a clock only moves forward (asked ${ms} ms)`);
    const targetMs = this.currentMs + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.dueMs <= targetMs).sort((a, b) => a.dueMs - b.dueMs || a.seq - b.seq)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.currentMs = Math.max(this.currentMs, next.dueMs);
      if (!next.cleared) next.fn();
    }
    this.currentMs = targetMs;
  }

  /** Set the time (forward only). */
  set(ms: number): void {
    this.advance(ms - this.currentMs);
  }
}
