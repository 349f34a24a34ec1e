/**
 * Shards (docs/batch.md, "Shards"): which items one machine of many runs.
 *
 * Rules:
 * - `--shard I/N` is 1-based, as in Playwright and Vitest: shards 1/N … N/N.
 * - An item belongs to shard `1 + (uint32 of the first 4 bytes of sha256(id)) mod N`: stable (the
 *   same id lands on the same shard whatever the other lines, their order or count) and the
 *   shards partition the ids exactly.
 * - `--shard auto` reads the scheduler's 0-based index and the count from the environment, in
 *   this order: Kubernetes Indexed Jobs (`JOB_COMPLETION_INDEX`, with the count in
 *   `YIEM_SHARD_COUNT`), then YIEM_SHARD_INDEX + YIEM_SHARD_COUNT (e.g. a GitHub Actions
 *   matrix: `YIEM_SHARD_INDEX: ${{ strategy.job-index }}`, `YIEM_SHARD_COUNT: ${{
 *   strategy.job-total }}`). What it used is said on stderr.
 */
import { createHash } from "node:crypto";
import { UsageError } from "../errors.js";

export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
  /** Where `auto` found it, e.g. `JOB_COMPLETION_INDEX=2, YIEM_SHARD_COUNT=4`; undefined for I/N. */
  source?: string;
}

/** The shard (1-based) that `id` belongs to among `count`. */
export function shardOf(id: string, count: number): number {
  const digest = createHash("sha256").update(id, "utf8").digest();
  return 1 + (digest.readUInt32BE(0) % count);
}

/** `--shard`'s value: `I/N` (1 ≤ I ≤ N) or `auto` (from `env`); a usage error says what is wrong. */
export function parseShard(value: string, env: NodeJS.ProcessEnv): Shard {
  if (value === "auto") return autoShard(env);
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  if (!match) throw new UsageError(`--shard ${JSON.stringify(value)}: use I/N (1-based, e.g. 1/4) or auto`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1) throw new UsageError(`--shard ${value}: the count must be at least 1`);
  if (index < 1 || index > count) throw new UsageError(`--shard ${value}: the index is 1-based, from 1 to ${count} (a 0-based index from a scheduler: use --shard auto)`);
  return { index, count };
}

const AUTO_SOURCES = [
  ["JOB_COMPLETION_INDEX", "YIEM_SHARD_COUNT"],
  ["YIEM_SHARD_INDEX", "YIEM_SHARD_COUNT"],
] as const;

function autoShard(env: NodeJS.ProcessEnv): Shard {
  for (const [indexVar, countVar] of AUTO_SOURCES) {
    const rawIndex = env[indexVar];
    if (rawIndex === undefined || rawIndex === "") continue;
    const rawCount = env[countVar];
    if (rawCount === undefined || rawCount === "") throw new UsageError(`--shard auto: ${indexVar} is set (${rawIndex}) but ${countVar} is not: set it to the number of shards`);
    const index = wholeNumber(rawIndex, indexVar);
    const count = wholeNumber(rawCount, countVar);
    if (count < 1) throw new UsageError(`--shard auto: ${countVar}=${rawCount} must be at least 1`);
    if (index >= count) throw new UsageError(`--shard auto: ${indexVar}=${rawIndex} is 0-based and must be below ${countVar}=${rawCount}`);
    return { index: index + 1, count, source: `${indexVar}=${rawIndex} (0-based), ${countVar}=${rawCount}` };
  }
  throw new UsageError("--shard auto: no shard index in the environment: set JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or YIEM_SHARD_INDEX (0-based, e.g. ${{ strategy.job-index }}), with YIEM_SHARD_COUNT");
}

function wholeNumber(text: string, name: string): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new UsageError(`--shard auto: ${name}=${JSON.stringify(text)} is not a whole number`);
  return Number(text);
}
