;; The direction classifier's preprocessing, in WebAssembly, in two steps.
;;
;; resize: bilinear resize of a text line to 48 rows and `width` columns,
;; rounded to 8 bits: the line a request keeps until its batch runs.
;; preprocess.ts computes where each output row and column samples the
;; source (the taps) and copies the source rows they name into `source`.
;;
;; normalize: a resized line to [-1, 1] as float32, into the [3, 48, 192]
;; BGR planes of `out`, with their zero padding.
;;
;; The output is the same to the bit as the JavaScript reference in the
;; tests: the resize computes in float64 as the reference does, and the
;; normalization's float32 formula gives the reference's value for each of
;; the 256 levels. The gain is in the loops: no bounds or type checks per
;; access, and two to four values a step with SIMD.
(module
  (memory (export "memory") 3)

  ;; The layout, in bytes. preprocess.ts reads the exported addresses.
  (global $out (export "out") i32 (i32.const 0))                  ;; 3 * 48 * 192 float32
  (global $rowA i32 (i32.const 110592))                            ;; 192 * 3 float64: a source row resized across
  (global $rowB i32 (i32.const 115200))                            ;; the other one
  (global $line (export "line") i32 (i32.const 119808))            ;; 48 * 192 * 3 (+16) bytes: the resized line, rows packed
  (global $columnLower (export "columnLower") i32 (i32.const 147472))   ;; 192 int32: byte offset in a source row of a column's left sample
  (global $columnUpper (export "columnUpper") i32 (i32.const 148240))   ;; 192 int32: of its right sample
  (global $columnWeight (export "columnWeight") i32 (i32.const 149008)) ;; 192 float64: the right sample's weight
  (global $rowLower (export "rowLower") i32 (i32.const 150544))         ;; 48 int32: offset in `source` of an output row's upper source row
  (global $rowUpper (export "rowUpper") i32 (i32.const 150736))         ;; 48 int32: of its lower source row
  (global $rowWeight (export "rowWeight") i32 (i32.const 150928))       ;; 48 float64: the lower source row's weight
  (global $interleaved i32 (i32.const 151312))                     ;; 192 * 3 (+4) float32: an output row before it goes into the planes
  (global $source (export "source") i32 (i32.const 153632))        ;; the source rows, 8-bit, interleaved channels

  ;; Which source rows the two row slots hold (offsets in `source`), -1 for none.
  (global $rowInA (mut i32) (i32.const -1))
  (global $rowInB (mut i32) (i32.const -1))

  ;; Source row `row` resized across to `width` samples (times `channels`), in whichever
  ;; slot does not hold `keep`, unless a slot holds it already. Returns the slot's address.
  ;; Output rows only move down the source, so two slots are all that is ever needed, and
  ;; each source row is resized once however many output rows blend it.
  (func $resizedRow (param $row i32) (param $keep i32) (param $width i32) (param $channels i32) (result i32)
    (local $values i32) (local $src i32) (local $x i32) (local $left i32) (local $right i32) (local $weight f64) (local $a f64)
    (if (i32.eq (global.get $rowInA) (local.get $row)) (then (return (global.get $rowA))))
    (if (i32.eq (global.get $rowInB) (local.get $row)) (then (return (global.get $rowB))))
    (if (i32.eq (global.get $rowInA) (local.get $keep))
      (then (local.set $values (global.get $rowB)) (global.set $rowInB (local.get $row)))
      (else (local.set $values (global.get $rowA)) (global.set $rowInA (local.get $row))))
    (local.set $src (i32.add (global.get $source) (local.get $row)))
    (if (i32.eq (local.get $channels) (i32.const 1))
      (then
        ;; value = left + (right - left) * weight
        (loop $column
          (local.set $a (f64.convert_i32_s (i32.load8_u (i32.add (local.get $src) (i32.load (i32.add (global.get $columnLower) (i32.shl (local.get $x) (i32.const 2))))))))
          (f64.store (i32.add (local.get $values) (i32.shl (local.get $x) (i32.const 3)))
            (f64.add (local.get $a)
              (f64.mul
                (f64.sub (f64.convert_i32_s (i32.load8_u (i32.add (local.get $src) (i32.load (i32.add (global.get $columnUpper) (i32.shl (local.get $x) (i32.const 2))))))) (local.get $a))
                (f64.load (i32.add (global.get $columnWeight) (i32.shl (local.get $x) (i32.const 3)))))))
          (br_if $column (i32.lt_u (local.tee $x (i32.add (local.get $x) (i32.const 1))) (local.get $width)))))
      (else
        ;; Three channels: the same for each, into three consecutive values.
        (loop $column
          (local.set $left (i32.add (local.get $src) (i32.load (i32.add (global.get $columnLower) (i32.shl (local.get $x) (i32.const 2))))))
          (local.set $right (i32.add (local.get $src) (i32.load (i32.add (global.get $columnUpper) (i32.shl (local.get $x) (i32.const 2))))))
          (local.set $weight (f64.load (i32.add (global.get $columnWeight) (i32.shl (local.get $x) (i32.const 3)))))
          (local.set $a (f64.convert_i32_s (i32.load8_u (local.get $left))))
          (f64.store (local.get $values)
            (f64.add (local.get $a) (f64.mul (f64.sub (f64.convert_i32_s (i32.load8_u (local.get $right))) (local.get $a)) (local.get $weight))))
          (local.set $a (f64.convert_i32_s (i32.load8_u offset=1 (local.get $left))))
          (f64.store offset=8 (local.get $values)
            (f64.add (local.get $a) (f64.mul (f64.sub (f64.convert_i32_s (i32.load8_u offset=1 (local.get $right))) (local.get $a)) (local.get $weight))))
          (local.set $a (f64.convert_i32_s (i32.load8_u offset=2 (local.get $left))))
          (f64.store offset=16 (local.get $values)
            (f64.add (local.get $a) (f64.mul (f64.sub (f64.convert_i32_s (i32.load8_u offset=2 (local.get $right))) (local.get $a)) (local.get $weight))))
          (local.set $values (i32.add (local.get $values) (i32.const 24)))
          (br_if $column (i32.lt_u (local.tee $x (i32.add (local.get $x) (i32.const 1))) (local.get $width))))
        (local.set $values (i32.sub (local.get $values) (i32.mul (local.get $width) (i32.const 24))))))
    (local.get $values)
  )

;; The line, 48 rows of `width` (1 to 192) columns of `channels` (1 or 3) bytes, packed, into
  ;; `line`, from the taps and source rows preprocess.ts wrote.
  (func (export "resize") (param $width i32) (param $channels i32)
    (local $y i32) (local $x i32) (local $upper i32) (local $lower i32) (local $top i32) (local $bottom i32)
    (local $weight v128) (local $to i32) (local $pair v128) (local $next v128) (local $end i32)
    (global.set $rowInA (i32.const -1))
    (global.set $rowInB (i32.const -1))
    (local.set $to (global.get $line))
    (local.set $end (i32.shl (i32.mul (local.get $width) (local.get $channels)) (i32.const 3)))
    (loop $row
      (local.set $top (i32.load (i32.add (global.get $rowLower) (i32.shl (local.get $y) (i32.const 2)))))
      (local.set $bottom (i32.load (i32.add (global.get $rowUpper) (i32.shl (local.get $y) (i32.const 2)))))
      (local.set $weight (f64x2.splat (f64.load (i32.add (global.get $rowWeight) (i32.shl (local.get $y) (i32.const 3))))))
      (local.set $upper (call $resizedRow (local.get $top) (local.get $bottom) (local.get $width) (local.get $channels)))
      (local.set $lower (call $resizedRow (local.get $bottom) (local.get $top) (local.get $width) (local.get $channels)))
      ;; The two rows blended by the weight, in float64 as the JavaScript reference does, and
      ;; rounded to 8 bits as Math.round does, four values a step, two in each v128. Rounding:
      ;; for v >= 0.5, v + 0.5 is exact or rounds within the same integer, so truncating it is
      ;; Math.round(v); below 0.5 the mask makes it 0, where one value (0.5 - 2^-54) would
      ;; otherwise round up. A last partial step reads up to three values past the resized rows
      ;; (still scratch memory) and writes up to three bytes past the row, which the next row
      ;; overwrites (or, after the last, the line's spare room takes).
      (local.set $x (i32.const 0))
      (loop $value
        (local.set $pair (v128.load (i32.add (local.get $upper) (local.get $x))))
        (local.set $pair (f64x2.add (local.get $pair)
          (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $lower) (local.get $x))) (local.get $pair)) (local.get $weight))))
        (local.set $pair (i32x4.trunc_sat_f64x2_u_zero (v128.and
          (f64x2.add (local.get $pair) (v128.const f64x2 0.5 0.5))
          (f64x2.ge (local.get $pair) (v128.const f64x2 0.5 0.5)))))
        (local.set $next (v128.load offset=16 (i32.add (local.get $upper) (local.get $x))))
        (local.set $next (f64x2.add (local.get $next)
          (f64x2.mul (f64x2.sub (v128.load offset=16 (i32.add (local.get $lower) (local.get $x))) (local.get $next)) (local.get $weight))))
        (local.set $next (i32x4.trunc_sat_f64x2_u_zero (v128.and
          (f64x2.add (local.get $next) (v128.const f64x2 0.5 0.5))
          (f64x2.ge (local.get $next) (v128.const f64x2 0.5 0.5)))))
        ;; [a, b, 0, 0] and [c, d, 0, 0] as int32 -> [a, b, c, d] -> four bytes.
        (local.set $pair (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $pair) (local.get $next)))
        (local.set $pair (i16x8.narrow_i32x4_u (local.get $pair) (local.get $pair)))
        (v128.store32_lane 0 (i32.add (local.get $to) (i32.shr_u (local.get $x) (i32.const 3)))
          (i8x16.narrow_i16x8_u (local.get $pair) (local.get $pair)))
        (br_if $value (i32.lt_u (local.tee $x (i32.add (local.get $x) (i32.const 32))) (local.get $end))))
      (local.set $to (i32.add (local.get $to) (i32.shr_u (local.get $end) (i32.const 3))))
      (br_if $row (i32.lt_u (local.tee $y (i32.add (local.get $y) (i32.const 1))) (i32.const 48))))
  )

  ;; `out` from the line in `line`: each byte v as (v - 127.5) / 127.5 in float32, which for
  ;; each of the 256 values is the float32 nearest (v / 255 - 0.5) / 0.5 (checked for all 256),
  ;; in the planes B, G, R (cv2's order), and 0 (mid-gray) right of `width`.
  (func (export "normalize") (param $width i32) (param $channels i32)
    (local $y i32) (local $i i32) (local $from i32) (local $count i32) (local $blue i32) (local $at i32) (local $x i32) (local $end i32)
    (local.set $from (global.get $line))
    (local.set $count (i32.mul (local.get $width) (local.get $channels)))
    (loop $row
      ;; Four values a step into `interleaved`; a last partial step reads past the row (into the
      ;; next, or the line's spare room) and writes into the scratch's spare room.
      (local.set $i (i32.const 0))
      (loop $value
        (v128.store (i32.add (global.get $interleaved) (i32.shl (local.get $i) (i32.const 2)))
          (f32x4.div
            (f32x4.sub
              (f32x4.convert_i32x4_u (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u
                (v128.load32_zero (i32.add (local.get $from) (local.get $i))))))
              (v128.const f32x4 127.5 127.5 127.5 127.5))
            (v128.const f32x4 127.5 127.5 127.5 127.5)))
        (br_if $value (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 4))) (local.get $count))))
      ;; This row in the first plane (B); G is 48 * 192 floats on, R twice that.
      (local.set $blue (i32.add (global.get $out) (i32.mul (local.get $y) (i32.const 768))))
      (if (i32.eq (local.get $channels) (i32.const 1))
        (then
          ;; Gray: the same row in all three planes.
          (local.set $end (i32.shl (local.get $width) (i32.const 2)))
          (memory.copy (local.get $blue) (global.get $interleaved) (local.get $end))
          (memory.copy (i32.add (local.get $blue) (i32.const 36864)) (global.get $interleaved) (local.get $end))
          (memory.copy (i32.add (local.get $blue) (i32.const 73728)) (global.get $interleaved) (local.get $end)))
        (else
          ;; RGB: split into the planes, R last.
          (local.set $at (global.get $interleaved))
          (local.set $x (local.get $blue))
          (local.set $end (i32.add (local.get $blue) (i32.shl (local.get $width) (i32.const 2))))
          (loop $pixel
            (f32.store offset=73728 (local.get $x) (f32.load (local.get $at)))
            (f32.store offset=36864 (local.get $x) (f32.load offset=4 (local.get $at)))
            (f32.store (local.get $x) (f32.load offset=8 (local.get $at)))
            (local.set $at (i32.add (local.get $at) (i32.const 12)))
            (br_if $pixel (i32.lt_u (local.tee $x (i32.add (local.get $x) (i32.const 4))) (local.get $end))))))
      ;; The padding right of `width`, in all three planes.
      (local.set $at (i32.add (local.get $blue) (i32.shl (local.get $width) (i32.const 2))))
      (local.set $end (i32.shl (i32.sub (i32.const 192) (local.get $width)) (i32.const 2)))
      (memory.fill (local.get $at) (i32.const 0) (local.get $end))
      (memory.fill (i32.add (local.get $at) (i32.const 36864)) (i32.const 0) (local.get $end))
      (memory.fill (i32.add (local.get $at) (i32.const 73728)) (i32.const 0) (local.get $end))
      (local.set $from (i32.add (local.get $from) (local.get $count)))
      (br_if $row (i32.lt_u (local.tee $y (i32.add (local.get $y) (i32.const 1))) (i32.const 48))))
  )
)
