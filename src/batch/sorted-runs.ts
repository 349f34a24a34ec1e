/**
 * The runs of a StagedIds part (./staged-ids.ts): its pairs [line, half] come in sorted queues
 * (the one staged in this thread, then those absorbed from other ranges, each sorted by half),
 * and a run is every line of one half that more than one pair holds, across all the queues. Only
 * runs can hold repeats; StagedIds decides them (`resolveRun`).
 *
 * Rules:
 * - `forEachRun` calls `onRun` once per run, with its lines (offset by their queue's `offset`);
 *   the array is reused between calls, and the lines of one run are in no particular order.
 * - A half held by one pair only is never a run.
 */

/** A part's sorted pairs, its lines counted from `offset` + 1 (a range staged elsewhere, ./id-scan.ts; 0 for this thread's). */
export interface Segment {
  words: Uint32Array;
  offset: number;
}

/** Every run of the sorted queues `sources` (module rules). */
export function forEachRun(sources: readonly Segment[], onRun: (run: number[]) => void): void {
  const run: number[] = [];
  if (sources.length === 1) runsInOne(sources[0]!.words, run, onRun, 0, sources[0]!.offset);
  else if (sources.length === 2) runsInPair(sources[0]!, sources[1]!, run, onRun);
  else runsInMerge([...sources], run, onRun);
}

/** The runs within one sorted queue, from pair `from` on, its lines counted from `offset` + 1. */
function runsInOne(words: Uint32Array, run: number[], onRun: (run: number[]) => void, from = 0, offset = 0): void {
  const end = words.length;
  for (let at = from * 2 + 3; at < end; at += 2) {
    if (words[at] !== words[at - 2]) continue;
    // A run: the lines of one half.
    run.length = 0;
    run.push(words[at - 3]! + offset);
    for (; at < end && words[at] === words[at - 2]; at += 2) run.push(words[at - 1]! + offset);
    onRun(run);
  }
}

/**
 * `runsInMerge` of two queues (this thread's and one absorbed range: the usual split), in one
 * tight merge: a pair whose half neither queue has again is passed over; a half met twice is
 * a run, read from both queues. The rest of the longer queue holds that queue's own runs only.
 */
function runsInPair(first: Segment, second: Segment, run: number[], onRun: (run: number[]) => void): void {
  const a = first.words;
  const b = second.words;
  const aEnd = a.length;
  const bEnd = b.length;
  let i = 0;
  let j = 0;
  while (i < aEnd && j < bEnd) {
    const x = a[i + 1]!;
    const y = b[j + 1]!;
    if (x < y) {
      if (i + 3 >= aEnd || a[i + 3] !== x) {
        i += 2;
        continue;
      }
    } else if (y < x) {
      if (j + 3 >= bEnd || b[j + 3] !== y) {
        j += 2;
        continue;
      }
    }
    const half = x < y ? x : y;
    run.length = 0;
    for (; i < aEnd && a[i + 1] === half; i += 2) run.push(a[i]! + first.offset);
    for (; j < bEnd && b[j + 1] === half; j += 2) run.push(b[j]! + second.offset);
    onRun(run);
  }
  if (i < aEnd) runsInOne(a, run, onRun, i / 2, first.offset);
  if (j < bEnd) runsInOne(b, run, onRun, j / 2, second.offset);
}

/** The runs of any number of sorted queues: a merge by half, the lines of a half taken from each queue in turn. */
function runsInMerge(sources: Segment[], run: number[], onRun: (run: number[]) => void): void {
  const words = sources.map((source) => source.words);
  const offsets = sources.map((source) => source.offset);
  const heads = sources.map(() => 0);
  const k = sources.length;
  for (;;) {
    let best = -1;
    let half = 0;
    for (let s = 0; s < k; s++) {
      const at = heads[s]!;
      if (at < words[s]!.length && (best < 0 || words[s]![at + 1]! < half)) {
        best = s;
        half = words[s]![at + 1]!;
      }
    }
    if (best < 0) return;
    const own = words[best]!;
    const head = heads[best]!;
    let single = !(head + 3 < own.length && own[head + 3] === half);
    for (let s = 0; single && s < k; s++) if (s !== best && heads[s]! < words[s]!.length && words[s]![heads[s]! + 1] === half) single = false;
    if (single) {
      heads[best] = head + 2;
      continue;
    }
    run.length = 0;
    for (let s = 0; s < k; s++) {
      const list = words[s]!;
      let at = heads[s]!;
      for (; at < list.length && list[at + 1] === half; at += 2) run.push(list[at]! + offsets[s]!);
      heads[s] = at;
    }
    onRun(run);
  }
}
