;; A checksum of bytes for detecting corruption, not tampering (src/checksum.ts): two 32-bit lanes
;; over the little-endian 32-bit words of [ptr, ptr + len), then over the 0-3 bytes left:
;;   a = (a xor w) * 16777619  (FNV-1a's 32-bit prime; a starts at its offset basis)
;;   s = s + (w xor (a >> 15))
;; returned as one i64: a in the high half, s in the low half.
(module
  (import "env" "memory" (memory 1))
  (func (export "checksum") (param $p i32) (param $n i32) (result i64)
    (local $end i32) (local $words i32) (local $a i32) (local $s i32) (local $w i32)
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (local.set $words (i32.add (local.get $p) (i32.and (local.get $n) (i32.const -4))))
    (local.set $a (i32.const 0x811c9dc5))
    (block $words_done
      (loop $word
        (br_if $words_done (i32.ge_u (local.get $p) (local.get $words)))
        (local.set $w (i32.load (local.get $p)))
        (local.set $a (i32.mul (i32.xor (local.get $a) (local.get $w)) (i32.const 0x01000193)))
        (local.set $s (i32.add (local.get $s) (i32.xor (local.get $w) (i32.shr_u (local.get $a) (i32.const 15)))))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $word)))
    (block $bytes_done
      (loop $byte
        (br_if $bytes_done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $w (i32.load8_u (local.get $p)))
        (local.set $a (i32.mul (i32.xor (local.get $a) (local.get $w)) (i32.const 0x01000193)))
        (local.set $s (i32.add (local.get $s) (i32.xor (local.get $w) (i32.shr_u (local.get $a) (i32.const 15)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $byte)))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $a)) (i64.const 32)) (i64.extend_i32_u (local.get $s))))
)
