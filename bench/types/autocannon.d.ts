// The part of autocannon (which ships no types) the bench's load generators use.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Request {
    method?: string;
    path?: string;
    headers: Record<string, string>;
    body?: string | Buffer;
  }
  interface RequestSpec {
    setupRequest?: (req: Request, context: Record<string, unknown>) => Request | undefined;
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    pipelining?: number;
    requests?: RequestSpec[];
  }
  interface Histogram { average: number; mean: number; p50: number; p90: number; p99: number; p999?: number; max: number; min: number; total: number; sent: number }
  interface Result {
    duration: number;
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats?: Record<string, { count: number }>;
    '2xx': number;
  }
  interface Client { opts?: { path?: string } }
  interface Instance extends EventEmitter {
    on(event: 'response', listener: (client: Client, statusCode: number, bytes: number, ms: number) => void): this;
    on(event: 'reqError', listener: (error: Error) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
    stop(): void;
  }
  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance;
  export default autocannon;
  export type { Options, Result, Request, Client, Instance };
}
