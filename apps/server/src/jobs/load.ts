import { performance } from 'node:perf_hooks';

// Whether the API process is saturated: its event loop at least `threshold` busy over the last
// window, with requests waiting. The in-process job worker asks before each round and, while it
// is, takes one round per WORKER_BUSY_ROUND_MS instead of running flat out: on one event loop,
// requests come first, and background work (card confirmations, expiries) catches up when the
// load drops. Requests alone decide: a worker busy with a backlog and no requests is not
// "saturated", so it drains at full speed.
export class LoadGauge {
  private inFlight = 0;
  private lastEndedMs = -Infinity;
  private sample = performance.eventLoopUtilization();
  private sampledAtMs: number;
  private saturated = false;

  constructor(
    private readonly threshold = 0.9,
    // Event-loop utilization is averaged over at least this long (one window per check); a
    // request answered within it still counts as being served (requestsActive).
    private readonly windowMs = 50,
    // Monotonic milliseconds: the real event loop's time, which is what this measures (a test
    // moves its own).
    private readonly nowMs: () => number = () => performance.now(),
  ) {
    this.sampledAtMs = nowMs();
  }

  requestStarted(): void {
    this.inFlight++;
  }

  requestEnded(): void {
    this.inFlight--;
    this.lastEndedMs = this.nowMs();
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  // Whether the process is serving requests: one in flight, or one answered within the window.
  // Not the count in flight alone: a group commit answers every request of its batch at once, and
  // the worker, woken by that same commit, ran while none was in flight yet (the clients' next
  // requests were still on the wire). Measured under the bench's closed loop (SQLite, 64
  // connections): 360 of 368 worker rounds saw none in flight, so the worker ran 32 jobs a round
  // instead of 8, and with no wait between rounds instead of one per busyRoundMs.
  get requestsActive(): boolean {
    return this.inFlight > 0 || this.nowMs() - this.lastEndedMs < this.windowMs;
  }

  busy(): boolean {
    const nowMs = this.nowMs();
    if (nowMs - this.sampledAtMs >= this.windowMs) {
      const next = performance.eventLoopUtilization();
      this.saturated = performance.eventLoopUtilization(next, this.sample).utilization >= this.threshold;
      this.sample = next;
      this.sampledAtMs = nowMs;
    }
    return this.requestsActive && this.saturated;
  }
}
