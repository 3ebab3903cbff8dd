import { performance } from 'node:perf_hooks';

// Whether the API process is saturated: its event loop at least `threshold` busy over the last
// window, with requests waiting. The in-process job worker asks before each round and, while it
// is, takes one round per WORKER_BUSY_ROUND_MS instead of running flat out: on one event loop,
// requests come first, and background work (card confirmations, expiries) catches up when the
// load drops. Requests alone decide: a worker busy with a backlog and no requests is not
// "saturated", so it drains at full speed.
export class LoadGauge {
  private inFlight = 0;
  private sample = performance.eventLoopUtilization();
  private sampledAtMs = performance.now();
  private saturated = false;

  constructor(
    private readonly threshold = 0.9,
    // Event-loop utilization is averaged over at least this long (one window per check).
    private readonly windowMs = 50,
  ) {}

  requestStarted(): void {
    this.inFlight++;
  }

  requestEnded(): void {
    this.inFlight--;
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  busy(): boolean {
    const nowMs = performance.now();
    if (nowMs - this.sampledAtMs >= this.windowMs) {
      const next = performance.eventLoopUtilization();
      this.saturated = performance.eventLoopUtilization(next, this.sample).utilization >= this.threshold;
      this.sample = next;
      this.sampledAtMs = nowMs;
    }
    return this.inFlight > 0 && this.saturated;
  }
}
