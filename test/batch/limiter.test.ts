/**
 * The batch's one request limiter (src/batch/limiter.ts): a 429 or a Retry-After on any request
 * holds back every new request for that long; --rate spaces request starts; an abort ends a wait.
 */
import { describe, expect, it } from "vitest";
import { createRequestLimiter, DEFAULT_429_PAUSE_MS, limitedFetch, MAX_PAUSE_MS } from "../../src/batch/limiter.js";

const headers = (entries: Record<string, string> = {}) => new Headers(entries);

describe("createRequestLimiter", () => {
  it("pauses everyone after a 429 with retry-after-ms, for that long", async () => {
    const limiter = createRequestLimiter();
    await limiter.acquire();
    limiter.notice(429, headers({ "retry-after-ms": "150" }));
    const started = Date.now();
    await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(limiter.pauses.count).toBe(1);
  });

  it("a retry-after header on any status pauses too; a 429 without one pauses DEFAULT_429_PAUSE_MS; pauses are capped; a shorter one keeps the longer", () => {
    let now = 1_000_000;
    const limiter = createRequestLimiter({ now: () => now });
    limiter.notice(200, headers());
    limiter.notice(500, headers());
    expect(limiter.pauses.count).toBe(0);
    limiter.notice(503, headers({ "retry-after": "2" }));
    expect(limiter.pauses).toEqual({ count: 1, totalMs: 2000 });
    limiter.notice(429, headers({ "retry-after-ms": "10" }));
    expect(limiter.pauses.count).toBe(1);
    now += 5000;
    limiter.notice(429, headers());
    expect(limiter.pauses).toEqual({ count: 2, totalMs: 2000 + DEFAULT_429_PAUSE_MS });
    now += 5000;
    limiter.notice(429, headers({ "retry-after": "86400" }));
    expect(limiter.pauses.totalMs).toBe(2000 + DEFAULT_429_PAUSE_MS + MAX_PAUSE_MS);
  });

  it("--rate spaces the starts evenly across callers", async () => {
    const limiter = createRequestLimiter({ rpm: 600 }); // one every 100 ms
    const started = Date.now();
    const times: number[] = [];
    await Promise.all(Array.from({ length: 4 }, async () => {
      await limiter.acquire();
      times.push(Date.now() - started);
    }));
    times.sort((a, b) => a - b);
    expect(times[0]).toBeLessThan(90);
    expect(times[3]).toBeGreaterThanOrEqual(290);
  });

  it("an aborted signal ends the wait with its reason", async () => {
    const limiter = createRequestLimiter();
    limiter.notice(429, headers({ "retry-after": "30" }));
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
  });

  it("limitedFetch waits, then notices the response", async () => {
    const limiter = createRequestLimiter();
    const seen: number[] = [];
    const fetch = limitedFetch(limiter, async () => {
      seen.push(Date.now());
      return new Response("slow down", { status: 429, headers: { "retry-after-ms": "120" } });
    });
    await fetch("http://x/");
    await fetch("http://x/");
    expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(110);
  });
});
