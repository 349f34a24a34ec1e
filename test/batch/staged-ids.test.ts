/**
 * StagedIds (src/batch/staged-ids.ts) split as the check pass splits it: the repeats and owners
 * of lines staged in one queue must be those of the same lines staged in two ranges, the later
 * one sorted elsewhere and absorbed (the merge of src/batch/sorted-runs.ts `runsInPair`), or in three (`runsInMerge`),
 * for any ids, with hashes weak enough that kept halves and marks meet often.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { IdHash } from "../../src/batch/id-index.js";
import { StagedIds } from "../../src/batch/staged-ids.js";

/** A hash of few values: halves and marks of different ids meet all the time. */
const weak: IdHash = (id, out) => {
  let h = 0;
  for (let k = 0; k < id.length; k++) h = (h * 31 + id.charCodeAt(k)) % 7;
  out[0] = (h & 3) | ((id.length % 2) << 31);
  out[1] = h % 3;
};

function stageAll(ids: StagedIds, list: readonly string[], from: number, to: number, offset: number): void {
  const out = new Int32Array(2);
  for (let k = from; k < to; k++) {
    weak(list[k]!, out);
    ids.stage(out[0]!, out[1]!, k + 1 - offset);
  }
}

/** The repeats (line, id, owner) in line order, and every line's owner, of `list` staged in ranges cut at `cuts`. */
function resolved(list: readonly string[], cuts: readonly number[], partitions: number) {
  const idAt = (line: number) => list[line - 1];
  const ids = new StagedIds(idAt, partitions, weak);
  const bounds = [0, ...cuts, list.length];
  stageAll(ids, list, 0, bounds[1]!, 0);
  ids.sortParts();
  for (let r = 1; r < bounds.length - 1; r++) {
    const from = bounds[r]!;
    const to = bounds[r + 1]!;
    const range = new StagedIds(() => undefined, partitions, weak);
    stageAll(range, list, from, to, from);
    ids.absorb(range.exportSorted(to - from), from);
  }
  const repeats: Array<[number, string, number]> = [];
  ids.resolve((line, id, owner) => repeats.push([line, id, owner]));
  repeats.sort((x, y) => x[0] - y[0]);
  return { repeats, owners: list.map((id, k) => ids.owner(id, k + 1)) };
}

describe("StagedIds split into ranges", () => {
  it("property: one queue, two ranges and three ranges give the same repeats and owners", () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-e]{1,3}$/), { minLength: 1, maxLength: 60 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom(1, 2, 8),
        (list, c1, c2, partitions) => {
          const one = resolved(list, [], partitions);
          const [lo, hi] = [Math.floor(list.length * Math.min(c1, c2)), Math.floor(list.length * Math.max(c1, c2))];
          expect(resolved(list, [lo], partitions)).toEqual(one);
          expect(resolved(list, [lo, hi], partitions)).toEqual(one);
          // And what the rule says: the first line of an id owns it, every later one repeats it.
          const first = new Map<string, number>();
          const expected: Array<[number, string, number]> = [];
          list.forEach((id, k) => {
            const owner = first.get(id);
            if (owner === undefined) first.set(id, k + 1);
            else expected.push([k + 1, id, owner]);
          });
          expect(one.repeats).toEqual(expected);
          expect(one.owners).toEqual(list.map((id) => first.get(id)));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("property: the same with parts long enough for the radix sort (over 256 pairs a part)", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{1,3}$/), { minLength: 600, maxLength: 1200 }), fc.double({ min: 0.05, max: 0.95, noNaN: true }), fc.constantFrom(1, 2), (list, cut, partitions) => {
        const split = resolved(list, [Math.floor(list.length * cut)], partitions);
        expect(split).toEqual(resolved(list, [], partitions));
        const first = new Map<string, number>();
        list.forEach((id, k) => void (first.has(id) || first.set(id, k + 1)));
        expect(split.owners).toEqual(list.map((id) => first.get(id)));
        expect(split.repeats.length).toBe(list.length - first.size);
      }),
      { numRuns: 40 },
    );
  });
});
