;; The check pass's id scan of whole chunks of lines (../bulk-scan.ts loads it from
;; ./id-scan.generated.ts, which scripts/wasm.mjs makes from this file). For every line it gives
;; exactly what ../line-id.ts IdSpanReader.read (SPAN) and ../id-index.ts hashIdBytes give, or
;; hands the line back to them.
;;
;; Rules:
;; - `scan(start, stop, line, out, outEnd)` reads the lines of memory[start..stop), which ends
;;   right after a `\n`; the first is line `line`. A line is the bytes before its `\n`, a `\r`
;;   before the `\n` dropped.
;; - Each line is one record of four i32 at `out` (records are written until `outEnd`):
;;   - a line whose id is read from its bytes (SPAN): [line, hash a, hash b, start];
;;   - any other line (blank, plain, or one the fast path gives up on): [-line, start, end, start],
;;     for the caller to read as ../id-scan.ts stageIdOnly does.
;; - It returns where it stopped (the start of the first line not read: `stop` once every line
;;   is read) and sets the global `records` to the number of records written.
;; - `stage` reads lines as `scan` does but stages the SPAN lines itself, in areas the caller
;;   reads back a call at a time (see the function).
;; - Loads may look past a line's end, but never at or past `stop` + 16: the caller keeps 16
;;   bytes of memory after every range it scans.
(module
  (import "env" "memory" (memory 1))
  (global $records (export "records") (mut i32) (i32.const 0))
  (global $spans (export "spans") (mut i32) (i32.const 0))
  (global $others (export "others") (mut i32) (i32.const 0))
  (global $checkpoints (export "checkpoints") (mut i32) (i32.const 0))
  (global $hashA (mut i32) (i32.const 0))
  (global $hashB (mut i32) (i32.const 0))

  ;; The first `\n` at or after p (one is at stop - 1).
  (func $newline (param $p i32) (param $stop i32) (result i32)
    (local $mask i32)
    (block $tail
      (loop $vectors
        (br_if $tail (i32.gt_u (i32.add (local.get $p) (i32.const 16)) (local.get $stop)))
        (local.set $mask (i8x16.bitmask (i8x16.eq (v128.load (local.get $p)) (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10))))
        (if (local.get $mask) (then (return (i32.add (local.get $p) (i32.ctz (local.get $mask))))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $vectors)))
    (loop $bytes
      (if (i32.ge_u (local.get $p) (local.get $stop)) (then (return (local.get $stop))))
      (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 10)) (then (return (local.get $p))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br $bytes))
    (unreachable))

  ;; ../id-index.ts `mix`.
  (func $mix (param $h i32) (result i32)
    (local.set $h (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 16))))
    (local.set $h (i32.mul (local.get $h) (i32.const 0x85ebca6b)))
    (local.set $h (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 13))))
    (local.set $h (i32.mul (local.get $h) (i32.const 0xc2b2ae35)))
    (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 16))))

;; The rest of a line from `rest` (../line-id.ts's two searches, in one pass that also finds the
  ;; line's end): the position of the line's `\n` when the rest holds no `\u` and no key ending in
  ;; `id"` that matters (`_id"` always, `"id"` unless `custom`), else -1.
  (func $restEnd (param $rest i32) (param $custom i32) (result i32)
    (local $p i32) (local $mask i32) (local $q i32) (local $c i32) (local $before i32) (local $v v128)
    (local.set $p (local.get $rest))
    (loop $vectors
      (local.set $v (v128.load (local.get $p)))
      ;; bit k: a `\n`, `\` or `"` at p + k
      (local.set $mask (i8x16.bitmask (v128.or
        (v128.or
          (i8x16.eq (local.get $v) (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10))
          (i8x16.eq (local.get $v) (v128.const i8x16 92 92 92 92 92 92 92 92 92 92 92 92 92 92 92 92)))
        (i8x16.eq (local.get $v) (v128.const i8x16 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34)))))
      (block $bits
        (loop $each
          (br_if $bits (i32.eqz (local.get $mask)))
          (local.set $q (i32.add (local.get $p) (i32.ctz (local.get $mask))))
          (local.set $mask (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
          (local.set $c (i32.load8_u (local.get $q)))
          (if (i32.eq (local.get $c) (i32.const 10)) (then (return (local.get $q))))
          (if (i32.eq (local.get $c) (i32.const 92))
            (then
              (if (i32.eq (i32.load8_u offset=1 (local.get $q)) (i32.const 0x75)) (then (return (i32.const -1)))))
            (else
              ;; a `"` at q ends an `id"` when the two bytes before it, both at or after rest, are `id`
              (if (i32.and
                    (i32.ge_u (local.get $q) (i32.add (local.get $rest) (i32.const 2)))
                    (i32.eq (i32.load16_u (i32.sub (local.get $q) (i32.const 2))) (i32.const 0x6469)))
                (then
                  (local.set $before (i32.load8_u (i32.sub (local.get $q) (i32.const 3))))
                  (if (i32.eq (local.get $before) (i32.const 0x5f)) (then (return (i32.const -1))))
                  (if (i32.and (i32.eq (local.get $before) (i32.const 34)) (i32.eqz (local.get $custom)))
                    (then (return (i32.const -1))))))))
          (br $each)))
      (local.set $p (i32.add (local.get $p) (i32.const 16)))
      (br $vectors))
    (unreachable))

  ;; The line's end: its `\n`, less a `\r` before it (not before `s`).
  (func $lineEnd (param $s i32) (param $nl i32) (result i32)
    ;; (nested: i32.and would load before `s` for an empty line)
    (if (i32.gt_u (local.get $nl) (local.get $s))
      (then
        (if (i32.eq (i32.load8_u (i32.sub (local.get $nl) (i32.const 1))) (i32.const 13))
          (then (return (i32.sub (local.get $nl) (i32.const 1)))))))
    (local.get $nl))

  ;; The SPAN of the line at `s` (../line-id.ts IdSpanReader.read): the position of its `\n` when
  ;; its id is read from its bytes, the id's hash then in the globals $hashA and $hashB
  ;; (../id-index.ts hashIdBytes); -1 when the line is handed back. `{` at the line's first byte,
  ;; then the key of an id or of a custom_id (a line shorter than its key has its `\r` or `\n`
  ;; where the key has none of them); the id: 1 to 512 bytes of printable ASCII but `"` and `\`,
  ;; then `"` and `,` or `}` (the line's end is a control byte, so an id running into it gives up).
  (func $span (param $s i32) (result i32)
    (local $c i32) (local $custom i32) (local $idStart i32) (local $idEnd i32)
    (local $close i32) (local $a i32) (local $b i32) (local $after i32) (local $nl i32)
    (if (i32.ne (i32.load8_u (local.get $s)) (i32.const 0x7b)) (then (return (i32.const -1))))
    (local.set $custom (i32.eq (i32.load8_u offset=2 (local.get $s)) (i32.const 0x63)))
    (if (local.get $custom)
      (then
        (if (i64.ne (i64.load (local.get $s)) (i64.const 0x6d6f74737563227b)) (then (return (i32.const -1))))
        (if (i64.ne (i64.load offset=6 (local.get $s)) (i64.const 0x223a2264695f6d6f)) (then (return (i32.const -1))))
        (local.set $idStart (i32.add (local.get $s) (i32.const 14))))
      (else
        (if (i64.ne (i64.and (i64.load (local.get $s)) (i64.const 0x00ffffffffffffff)) (i64.const 0x223a226469227b)) (then (return (i32.const -1))))
        (local.set $idStart (i32.add (local.get $s) (i32.const 7)))))
    (local.set $idEnd (i32.add (local.get $idStart) (i32.const 513)))
    (local.set $a (i32.const 0x811c9dc5))
    (local.set $b (i32.const 0x9747b28c))
    (local.set $close (local.get $idStart))
    (block $closed
      (loop $id
        (if (i32.ge_u (local.get $close) (local.get $idEnd)) (then (return (i32.const -1))))
        (local.set $c (i32.load8_u (local.get $close)))
        (br_if $closed (i32.eq (local.get $c) (i32.const 34)))
        (if (i32.lt_u (local.get $c) (i32.const 0x20)) (then (return (i32.const -1))))
        (if (i32.gt_u (local.get $c) (i32.const 0x7e)) (then (return (i32.const -1))))
        (if (i32.eq (local.get $c) (i32.const 92)) (then (return (i32.const -1))))
        (local.set $a (i32.mul (i32.xor (local.get $a) (local.get $c)) (i32.const 0x01000193)))
        (local.set $b (i32.mul (i32.xor (local.get $b) (local.get $c)) (i32.const 0x5bd1e995)))
        (local.set $b (i32.xor (local.get $b) (i32.shr_u (local.get $b) (i32.const 13))))
        (local.set $close (i32.add (local.get $close) (i32.const 1)))
        (br $id)))
    (if (i32.eq (local.get $close) (local.get $idStart)) (then (return (i32.const -1))))
    (local.set $after (i32.load8_u offset=1 (local.get $close)))
    (if (i32.and (i32.ne (local.get $after) (i32.const 0x2c)) (i32.ne (local.get $after) (i32.const 0x7d))) (then (return (i32.const -1))))
    (local.set $nl (call $restEnd (i32.add (local.get $close) (i32.const 1)) (local.get $custom)))
    (if (i32.lt_s (local.get $nl) (i32.const 0)) (then (return (i32.const -1))))
    (global.set $hashA (call $mix (i32.xor (local.get $a) (i32.sub (local.get $close) (local.get $idStart)))))
    (global.set $hashB (call $mix (local.get $b)))
    (local.get $nl))

  (func (export "scan") (param $start i32) (param $stop i32) (param $line i32) (param $out i32) (param $outEnd i32) (result i32)
    (local $s i32) (local $nl i32) (local $count i32)
    (local.set $s (local.get $start))
    (block $full
      (loop $lines
        (br_if $full (i32.ge_u (local.get $s) (local.get $stop)))
        (br_if $full (i32.gt_u (i32.add (local.get $out) (i32.const 16)) (local.get $outEnd)))
        (local.set $nl (call $span (local.get $s)))
        (if (i32.ge_s (local.get $nl) (i32.const 0))
          (then
            ;; SPAN: [line, a, b, start]
            (i32.store (local.get $out) (local.get $line))
            (i32.store offset=4 (local.get $out) (global.get $hashA))
            (i32.store offset=8 (local.get $out) (global.get $hashB))
            (i32.store offset=12 (local.get $out) (local.get $s)))
          (else
            ;; Any other line: [-line, start, end, start]
            (local.set $nl (call $newline (local.get $s) (local.get $stop)))
            (i32.store (local.get $out) (i32.sub (i32.const 0) (local.get $line)))
            (i32.store offset=4 (local.get $out) (local.get $s))
            (i32.store offset=8 (local.get $out) (call $lineEnd (local.get $s) (local.get $nl)))
            (i32.store offset=12 (local.get $out) (local.get $s))))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (local.set $count (i32.add (local.get $count) (i32.const 1)))
        (local.set $line (i32.add (local.get $line) (i32.const 1)))
        (local.set $s (i32.add (local.get $nl) (i32.const 1)))
        (br $lines)))
    (global.set $records (local.get $count))
    (local.get $s))

  ;; `stage(start, stop, line, bits, lines, at)`: reads up to `lines` lines of memory[start..stop)
  ;; as `scan` does, and stages each SPAN line itself (../staged-ids.ts StagedIds.stage, for
  ;; ../bulk-scan.ts stageLines). The areas, at the i32 addresses of the table at `at`:
  ;; [buckets, counts, marks, others, checkpoints, checkpointMask]. Line `line + k`:
  ;; - SPAN: the pair [line, hash b] appended to bucket `hash a >>> (32 - bits)` (0 when `bits`
  ;;   is 0; bucket p at buckets + p * lines * 8, counts[p] its pairs), and marks[k] (u16) the
  ;;   low 16 bits of hash a;
  ;; - any other line: marks[k] = 0 and [line, start, end] appended to others;
  ;; - a checkpoint line (line - 1 & checkpointMask is 0): its start appended to checkpoints.
  ;; Returns where it stopped; the globals $spans, $others and $checkpoints say how many.
  (func (export "stage") (param $start i32) (param $stop i32) (param $line i32) (param $bits i32) (param $lines i32) (param $at i32) (result i32)
    (local $s i32) (local $nl i32) (local $k i32) (local $p i32) (local $slot i32)
    (local $buckets i32) (local $counts i32) (local $marks i32) (local $others i32) (local $checkpoints i32) (local $mask i32)
    (local $spans i32) (local $otherCount i32) (local $checkpointCount i32) (local $bucketBytes i32)
    (local.set $buckets (i32.load (local.get $at)))
    (local.set $counts (i32.load offset=4 (local.get $at)))
    (local.set $marks (i32.load offset=8 (local.get $at)))
    (local.set $others (i32.load offset=12 (local.get $at)))
    (local.set $checkpoints (i32.load offset=16 (local.get $at)))
    (local.set $mask (i32.load offset=20 (local.get $at)))
    (local.set $bucketBytes (i32.shl (local.get $lines) (i32.const 3)))
    (memory.fill (local.get $counts) (i32.const 0) (i32.shl (i32.shl (i32.const 1) (local.get $bits)) (i32.const 2)))
    (local.set $s (local.get $start))
    (block $full
      (loop $each
        (br_if $full (i32.ge_u (local.get $s) (local.get $stop)))
        (br_if $full (i32.ge_u (local.get $k) (local.get $lines)))
        (if (i32.eqz (i32.and (i32.sub (local.get $line) (i32.const 1)) (local.get $mask)))
          (then
            (i32.store (i32.add (local.get $checkpoints) (i32.shl (local.get $checkpointCount) (i32.const 2))) (local.get $s))
            (local.set $checkpointCount (i32.add (local.get $checkpointCount) (i32.const 1)))))
        (local.set $nl (call $span (local.get $s)))
        (if (i32.ge_s (local.get $nl) (i32.const 0))
          (then
            (local.set $p (select
              (i32.shr_u (global.get $hashA) (i32.sub (i32.const 32) (local.get $bits)))
              (i32.const 0)
              (local.get $bits)))
            (local.set $slot (i32.add (local.get $counts) (i32.shl (local.get $p) (i32.const 2))))
            (local.set $p (i32.add
              (i32.add (local.get $buckets) (i32.mul (local.get $p) (local.get $bucketBytes)))
              (i32.shl (i32.load (local.get $slot)) (i32.const 3))))
            (i32.store (local.get $p) (local.get $line))
            (i32.store offset=4 (local.get $p) (global.get $hashB))
            (i32.store (local.get $slot) (i32.add (i32.load (local.get $slot)) (i32.const 1)))
            (i32.store16 (i32.add (local.get $marks) (i32.shl (local.get $k) (i32.const 1))) (global.get $hashA))
            (local.set $spans (i32.add (local.get $spans) (i32.const 1))))
          (else
            (local.set $nl (call $newline (local.get $s) (local.get $stop)))
            (i32.store16 (i32.add (local.get $marks) (i32.shl (local.get $k) (i32.const 1))) (i32.const 0))
            (local.set $p (i32.add (local.get $others) (i32.mul (local.get $otherCount) (i32.const 12))))
            (i32.store (local.get $p) (local.get $line))
            (i32.store offset=4 (local.get $p) (local.get $s))
            (i32.store offset=8 (local.get $p) (call $lineEnd (local.get $s) (local.get $nl)))
            (local.set $otherCount (i32.add (local.get $otherCount) (i32.const 1)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (local.set $line (i32.add (local.get $line) (i32.const 1)))
        (local.set $s (i32.add (local.get $nl) (i32.const 1)))
        (br $each)))
    (global.set $spans (local.get $spans))
    (global.set $others (local.get $otherCount))
    (global.set $checkpoints (local.get $checkpointCount))
    (local.get $s))
)
