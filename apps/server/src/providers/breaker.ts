// Fail fast while the provider is down: after `threshold` consecutive transient failures, new
// card payments are refused with 503 PROVIDER_UNAVAILABLE for `cooldownMs` instead of piling up
// as pending payments that will only fail later. One success closes it again. Per process.
import type { Clock } from '../clock.js';

export class CircuitBreaker {
  private consecutiveFailures = 0;
  private openUntilMs = 0;

  constructor(private readonly threshold: number, private readonly cooldownMs: number, private readonly clock: Clock) {}

  recordFailure(nowMs = this.clock.nowMs()): void {
    this.consecutiveFailures++;
    if (this.threshold > 0 && this.consecutiveFailures >= this.threshold) this.openUntilMs = nowMs + this.cooldownMs;
  }

  recordSuccess(): void {
    this.consecutiveFailures = 0;
    this.openUntilMs = 0;
  }

  // Seconds until it half-opens, or 0 when closed.
  retryAfterSeconds(nowMs = this.clock.nowMs()): number {
    return this.openUntilMs > nowMs ? Math.ceil((this.openUntilMs - nowMs) / 1000) : 0;
  }
}
