/**
 * The one request limiter of a batch: every model request of every item passes it (the
 * providers' `fetch`, ./../cli/commands/batch.ts), so the server's back-pressure on one item
 * holds back all of them (docs/batch.md, "Concurrency and back-pressure").
 *
 * Rules:
 * - A response with status 429, or with a `retry-after` / `retry-after-ms` header, pauses every
 *   new request of the batch for that long (the header's time, capped at MAX_PAUSE_MS; a 429
 *   without one: DEFAULT_429_PAUSE_MS). A longer pause already set is kept. The item that got
 *   the answer still retries by its own rules (provider/retry.ts), after the pause too.
 * - `rpm` (requests per minute, 0: none) spaces the starts of requests evenly: one every
 *   60000 / rpm ms, across the batch.
 * - A request's abort signal ends its wait at once (the fetch rejects with the signal's reason).
 */
import { retryAfterMs } from "../provider/retry.js";
import { nodeFetch } from "../provider/http/node-fetch.js";

export const MAX_PAUSE_MS = 60_000;
export const DEFAULT_429_PAUSE_MS = 1_000;

export interface RequestLimiter {
  /** Waits until a request may start (the pause is over and the rate allows one). */
  acquire(signal?: AbortSignal | null): Promise<void>;
  /** Reads a response's status and headers (see module rules). */
  notice(status: number, headers: Headers): void;
  /** How many times a server answer paused the batch, and for how long in all (ms). */
  readonly pauses: { count: number; totalMs: number };
}

export function createRequestLimiter(options: { rpm?: number; now?: () => number } = {}): RequestLimiter {
  const now = options.now ?? Date.now;
  const spacing = options.rpm && options.rpm > 0 ? 60_000 / options.rpm : 0;
  let pausedUntil = 0;
  let nextSlot = 0;
  const pauses = { count: 0, totalMs: 0 };
  return {
    async acquire(signal) {
      for (;;) {
        signal?.throwIfAborted();
        const at = now();
        const wait = Math.max(pausedUntil, spacing > 0 ? nextSlot : 0) - at;
        if (wait <= 0) {
          if (spacing > 0) nextSlot = Math.max(nextSlot, at) + spacing;
          return;
        }
        await sleep(Math.ceil(wait), signal);
      }
    },
    notice(status, headers) {
      const hinted = retryAfterMs(headers);
      if (status !== 429 && hinted === undefined) return;
      const ms = Math.min(Math.max(0, hinted ?? DEFAULT_429_PAUSE_MS), MAX_PAUSE_MS);
      const until = now() + ms;
      if (until <= pausedUntil) return;
      pauses.count++;
      pauses.totalMs += until - Math.max(pausedUntil, now());
      pausedUntil = until;
    },
    pauses,
  };
}

/** `fetch` through `limiter`: each request waits its turn, each response is noticed. */
export function limitedFetch(limiter: RequestLimiter, base: typeof globalThis.fetch = nodeFetch): typeof globalThis.fetch {
  return async (input, init) => {
    await limiter.acquire(init?.signal);
    const response = await base(input, init);
    limiter.notice(response.status, response.headers);
    return response;
  };
}

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
