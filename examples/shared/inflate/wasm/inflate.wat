(;
  Inflate (RFC 1951) for the examples' PNG decoder in browsers, which have no
  synchronous native inflate: examples/shared/inflate/wasm.ts calls it.
  Assembled by scripts/build-wasm.ts (`npm run build:wasm`).

  It decodes as zlib's puff.c describes, with one addition for speed: a
  512-entry table per code answers every code of up to 9 bits with one
  lookup, and only longer codes are decoded a bit at a time. A PNG's
  Huffman codes are rebuilt for every block, and a text line's image is a
  few hundred symbols, so the table is kept small enough to fill in a
  microsecond or two.

  Errors trap (`unreachable`) after setting `status`: 1 for a corrupt
  stream, 2 for output past the capacity the caller gave. The caller tells
  them apart by `status`.
;)
(module
  (memory (export "memory") 1)

  ;; Fixed layout: the tables below 4096, the caller's input and output above.
  (global $LENCNT i32 (i32.const 0))     ;; i16[16]: codes of each length
  (global $LENSYM i32 (i32.const 32))    ;; i16[288]: symbols in canonical order
  (global $DISTCNT i32 (i32.const 608))  ;; i16[16]
  (global $DISTSYM i32 (i32.const 640))  ;; i16[32]
  (global $LENGTHS i32 (i32.const 704))  ;; i16[320]: code lengths being read
  (global $OFFS i32 (i32.const 1344))    ;; i16[16]: scratch for construct
  (global $LENFAST i32 (i32.const 1376)) ;; i16[512]: symbol | length << 9, 0 for a longer code
  (global $DISTFAST i32 (i32.const 2400));; i16[512]
  (global $LBASE i32 (i32.const 3424))   ;; i16[29]: length base of each length symbol
  (global $LEXT i32 (i32.const 3488))    ;; i16[29]: its extra bits
  (global $DBASE i32 (i32.const 3552))   ;; i16[30]: distance base of each distance symbol
  (global $DEXT i32 (i32.const 3616))    ;; i16[30]: its extra bits
  (global $ORDER i32 (i32.const 3680))   ;; u8[19]: order of the code length code's lengths
  (global $NEXT i32 (i32.const 3712))    ;; i16[16]: scratch for the fast tables
  (global $heapBase (export "heapBase") i32 (i32.const 4096))

  (data (i32.const 3424) "\03\00\04\00\05\00\06\00\07\00\08\00\09\00\0a\00\0b\00\0d\00\0f\00\11\00\13\00\17\00\1b\00\1f\00\23\00\2b\00\33\00\3b\00\43\00\53\00\63\00\73\00\83\00\a3\00\c3\00\e3\00\02\01")
  (data (i32.const 3488) "\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\01\00\01\00\01\00\01\00\02\00\02\00\02\00\02\00\03\00\03\00\03\00\03\00\04\00\04\00\04\00\04\00\05\00\05\00\05\00\05\00\00\00")
  (data (i32.const 3552) "\01\00\02\00\03\00\04\00\05\00\07\00\09\00\0d\00\11\00\19\00\21\00\31\00\41\00\61\00\81\00\c1\00\01\01\81\01\01\02\01\03\01\04\01\06\01\08\01\0c\01\10\01\18\01\20\01\30\01\40\01\60")
  (data (i32.const 3616) "\00\00\00\00\00\00\00\00\01\00\01\00\02\00\02\00\03\00\03\00\04\00\04\00\05\00\05\00\06\00\06\00\07\00\07\00\08\00\08\00\09\00\09\00\0a\00\0a\00\0b\00\0b\00\0c\00\0c\00\0d\00\0d\00")
  (data (i32.const 3680) "\10\11\12\00\08\07\09\06\0a\05\0b\04\0c\03\0d\02\0e\01\0f")

  (global $status (export "status") (mut i32) (i32.const 0))
  (global $in (mut i32) (i32.const 0))
  (global $inEnd (mut i32) (i32.const 0))
  (global $bitbuf (mut i32) (i32.const 0))
  (global $bitcnt (mut i32) (i32.const 0))
  (global $outStart (mut i32) (i32.const 0))
  (global $out (mut i32) (i32.const 0))
  (global $outEnd (mut i32) (i32.const 0))

  (func $fail (param $code i32)
    (global.set $status (local.get $code))
    unreachable)

  ;; The next $need bits (at most 13), low bits first.
  (func $bits (param $need i32) (result i32)
    (local $val i32)
    (local.set $val (global.get $bitbuf))
    (block $enough
      (loop $more
        (br_if $enough (i32.ge_u (global.get $bitcnt) (local.get $need)))
        (if (i32.ge_u (global.get $in) (global.get $inEnd)) (then (call $fail (i32.const 1))))
        (local.set $val (i32.or (local.get $val) (i32.shl (i32.load8_u (global.get $in)) (global.get $bitcnt))))
        (global.set $in (i32.add (global.get $in) (i32.const 1)))
        (global.set $bitcnt (i32.add (global.get $bitcnt) (i32.const 8)))
        (br $more)))
    (global.set $bitbuf (i32.shr_u (local.get $val) (local.get $need)))
    (global.set $bitcnt (i32.sub (global.get $bitcnt) (local.get $need)))
    (i32.and (local.get $val) (i32.sub (i32.shl (i32.const 1) (local.get $need)) (i32.const 1))))

  ;; One symbol of the code in $cnt/$sym/$fast.
  (func $decode (param $cnt i32) (param $sym i32) (param $fast i32) (result i32)
    (local $entry i32) (local $len i32)
    (local $code i32) (local $first i32) (local $index i32) (local $count i32)
    ;; Up to 9 bits in the buffer, fewer at the end of the input.
    (block $full
      (loop $more
        (br_if $full (i32.ge_u (global.get $bitcnt) (i32.const 9)))
        (br_if $full (i32.ge_u (global.get $in) (global.get $inEnd)))
        (global.set $bitbuf (i32.or (global.get $bitbuf) (i32.shl (i32.load8_u (global.get $in)) (global.get $bitcnt))))
        (global.set $in (i32.add (global.get $in) (i32.const 1)))
        (global.set $bitcnt (i32.add (global.get $bitcnt) (i32.const 8)))
        (br $more)))
    (local.set $entry (i32.load16_u (i32.add (local.get $fast) (i32.shl (i32.and (global.get $bitbuf) (i32.const 511)) (i32.const 1)))))
    (if (local.get $entry)
      (then
        (local.set $len (i32.shr_u (local.get $entry) (i32.const 9)))
        (if (i32.gt_u (local.get $len) (global.get $bitcnt)) (then (call $fail (i32.const 1))))
        (global.set $bitbuf (i32.shr_u (global.get $bitbuf) (local.get $len)))
        (global.set $bitcnt (i32.sub (global.get $bitcnt) (local.get $len)))
        (return (i32.and (local.get $entry) (i32.const 511)))))
    ;; A code longer than 9 bits (or none): a bit at a time, as puff does.
    (local.set $len (i32.const 1))
    (loop $next
      (local.set $code (i32.or (local.get $code) (call $bits (i32.const 1))))
      (local.set $count (i32.load16_u (i32.add (local.get $cnt) (i32.shl (local.get $len) (i32.const 1)))))
      (if (i32.lt_s (i32.sub (local.get $code) (local.get $count)) (local.get $first))
        (then
          (return (i32.load16_u (i32.add (local.get $sym)
            (i32.shl (i32.add (local.get $index) (i32.sub (local.get $code) (local.get $first))) (i32.const 1)))))))
      (local.set $index (i32.add (local.get $index) (local.get $count)))
      (local.set $first (i32.shl (i32.add (local.get $first) (local.get $count)) (i32.const 1)))
      (local.set $code (i32.shl (local.get $code) (i32.const 1)))
      (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (br_if $next (i32.le_u (local.get $len) (i32.const 15))))
    (call $fail (i32.const 1))
    (i32.const 0))

  ;; Build a code from $n lengths at $lengths: counts, symbols in canonical
  ;; order and the fast table. Returns what is left of the code space: 0 for
  ;; a complete code, more for an incomplete one, negative for one that is
  ;; over-subscribed.
  (func $construct (param $cnt i32) (param $sym i32) (param $fast i32) (param $lengths i32) (param $n i32) (result i32)
    (local $s i32) (local $len i32) (local $left i32) (local $code i32) (local $rev i32) (local $i i32) (local $at i32)
    (memory.fill (local.get $cnt) (i32.const 0) (i32.const 32))
    (local.set $s (i32.const 0))
    (block $done (loop $count
      (br_if $done (i32.ge_u (local.get $s) (local.get $n)))
      (local.set $at (i32.add (local.get $cnt) (i32.shl (i32.load16_u (i32.add (local.get $lengths) (i32.shl (local.get $s) (i32.const 1)))) (i32.const 1))))
      (i32.store16 (local.get $at) (i32.add (i32.load16_u (local.get $at)) (i32.const 1)))
      (local.set $s (i32.add (local.get $s) (i32.const 1)))
      (br $count)))
    (memory.fill (local.get $fast) (i32.const 0) (i32.const 1024))
    (if (i32.eq (i32.load16_u (local.get $cnt)) (local.get $n)) (then (return (i32.const 0))))
    ;; Over-subscribed or incomplete?
    (local.set $left (i32.const 1))
    (local.set $len (i32.const 1))
    (loop $check
      (local.set $left (i32.sub (i32.shl (local.get $left) (i32.const 1))
        (i32.load16_u (i32.add (local.get $cnt) (i32.shl (local.get $len) (i32.const 1))))))
      (if (i32.lt_s (local.get $left) (i32.const 0)) (then (return (local.get $left))))
      (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (br_if $check (i32.le_u (local.get $len) (i32.const 15))))
    ;; Offsets of each length in the symbol table, and the first code of each length.
    (i32.store16 (i32.add (global.get $OFFS) (i32.const 2)) (i32.const 0))
    (i32.store16 (i32.add (global.get $NEXT) (i32.const 2)) (i32.const 0))
    (local.set $len (i32.const 1))
    (loop $offsets
      (i32.store16 (i32.add (global.get $OFFS) (i32.shl (i32.add (local.get $len) (i32.const 1)) (i32.const 1)))
        (i32.add (i32.load16_u (i32.add (global.get $OFFS) (i32.shl (local.get $len) (i32.const 1))))
                 (i32.load16_u (i32.add (local.get $cnt) (i32.shl (local.get $len) (i32.const 1))))))
      (i32.store16 (i32.add (global.get $NEXT) (i32.shl (i32.add (local.get $len) (i32.const 1)) (i32.const 1)))
        (i32.shl (i32.add (i32.load16_u (i32.add (global.get $NEXT) (i32.shl (local.get $len) (i32.const 1))))
                          (i32.load16_u (i32.add (local.get $cnt) (i32.shl (local.get $len) (i32.const 1)))))
                 (i32.const 1)))
      (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (br_if $offsets (i32.lt_u (local.get $len) (i32.const 15))))
    (local.set $s (i32.const 0))
    (block $done (loop $symbols
      (br_if $done (i32.ge_u (local.get $s) (local.get $n)))
      (local.set $len (i32.load16_u (i32.add (local.get $lengths) (i32.shl (local.get $s) (i32.const 1)))))
      (if (local.get $len)
        (then
          ;; Its place in canonical order.
          (local.set $at (i32.add (global.get $OFFS) (i32.shl (local.get $len) (i32.const 1))))
          (i32.store16 (i32.add (local.get $sym) (i32.shl (i32.load16_u (local.get $at)) (i32.const 1))) (local.get $s))
          (i32.store16 (local.get $at) (i32.add (i32.load16_u (local.get $at)) (i32.const 1)))
          ;; Its code, and for a short one every fast entry whose low bits are that code reversed.
          (local.set $at (i32.add (global.get $NEXT) (i32.shl (local.get $len) (i32.const 1))))
          (local.set $code (i32.load16_u (local.get $at)))
          (i32.store16 (local.get $at) (i32.add (local.get $code) (i32.const 1)))
          (if (i32.le_u (local.get $len) (i32.const 9))
            (then
              (local.set $rev (i32.const 0))
              (local.set $i (local.get $len))
              (loop $reverse
                (local.set $rev (i32.or (i32.shl (local.get $rev) (i32.const 1)) (i32.and (local.get $code) (i32.const 1))))
                (local.set $code (i32.shr_u (local.get $code) (i32.const 1)))
                (local.set $i (i32.sub (local.get $i) (i32.const 1)))
                (br_if $reverse (local.get $i)))
              (loop $fill
                (i32.store16 (i32.add (local.get $fast) (i32.shl (local.get $rev) (i32.const 1)))
                  (i32.or (local.get $s) (i32.shl (local.get $len) (i32.const 9))))
                (local.set $rev (i32.add (local.get $rev) (i32.shl (i32.const 1) (local.get $len))))
                (br_if $fill (i32.lt_u (local.get $rev) (i32.const 512))))))))
      (local.set $s (i32.add (local.get $s) (i32.const 1)))
      (br $symbols)))
    (local.get $left))

  ;; Decode literals and matches until the end of the block. The hot loop
  ;; of the module, so it keeps the bit buffer and both positions in locals
  ;; (a global is a load and a store each time) and looks short codes up
  ;; itself; a long code goes through $decode, with the state handed over.
  (func $codes
    (local $sym i32) (local $len i32) (local $dist i32) (local $from i32) (local $end i32) (local $entry i32) (local $n i32)
    (local $buf i32) (local $cnt i32) (local $in i32) (local $inEnd i32) (local $out i32) (local $outStart i32) (local $outEnd i32)
    (local.set $buf (global.get $bitbuf))
    (local.set $cnt (global.get $bitcnt))
    (local.set $in (global.get $in))
    (local.set $inEnd (global.get $inEnd))
    (local.set $out (global.get $out))
    (local.set $outStart (global.get $outStart))
    (local.set $outEnd (global.get $outEnd))
    (loop $next
      ;; Up to 24 bits in the buffer, as far as the input goes: a symbol and
      ;; most extra bits need no more.
      (block $full (loop $more
        (br_if $full (i32.ge_u (local.get $cnt) (i32.const 24)))
        (br_if $full (i32.ge_u (local.get $in) (local.get $inEnd)))
        (local.set $buf (i32.or (local.get $buf) (i32.shl (i32.load8_u (local.get $in)) (local.get $cnt))))
        (local.set $in (i32.add (local.get $in) (i32.const 1)))
        (local.set $cnt (i32.add (local.get $cnt) (i32.const 8)))
        (br $more)))
      ;; A literal or length symbol.
      (block $got
        (local.set $entry (i32.load16_u (i32.add (global.get $LENFAST) (i32.shl (i32.and (local.get $buf) (i32.const 511)) (i32.const 1)))))
        (local.set $len (i32.shr_u (local.get $entry) (i32.const 9)))
        (if (i32.and (i32.ne (local.get $entry) (i32.const 0)) (i32.le_u (local.get $len) (local.get $cnt)))
          (then
            (local.set $buf (i32.shr_u (local.get $buf) (local.get $len)))
            (local.set $cnt (i32.sub (local.get $cnt) (local.get $len)))
            (local.set $sym (i32.and (local.get $entry) (i32.const 511)))
            (br $got)))
        (global.set $bitbuf (local.get $buf)) (global.set $bitcnt (local.get $cnt)) (global.set $in (local.get $in))
        (local.set $sym (call $decode (global.get $LENCNT) (global.get $LENSYM) (global.get $LENFAST)))
        (local.set $buf (global.get $bitbuf)) (local.set $cnt (global.get $bitcnt)) (local.set $in (global.get $in)))
      (if (i32.lt_u (local.get $sym) (i32.const 256))
        (then
          (if (i32.ge_u (local.get $out) (local.get $outEnd)) (then (call $fail (i32.const 2))))
          (i32.store8 (local.get $out) (local.get $sym))
          (local.set $out (i32.add (local.get $out) (i32.const 1)))
          (br $next)))
      (if (i32.eq (local.get $sym) (i32.const 256))
        (then
          (global.set $bitbuf (local.get $buf)) (global.set $bitcnt (local.get $cnt))
          (global.set $in (local.get $in)) (global.set $out (local.get $out))
          (return)))
      (local.set $sym (i32.sub (local.get $sym) (i32.const 257)))
      (if (i32.ge_u (local.get $sym) (i32.const 29)) (then (call $fail (i32.const 1))))
      ;; The length: its base and extra bits.
      (local.set $n (i32.load16_u (i32.add (global.get $LEXT) (i32.shl (local.get $sym) (i32.const 1)))))
      (block $enough (loop $refill
        (br_if $enough (i32.ge_u (local.get $cnt) (local.get $n)))
        (if (i32.ge_u (local.get $in) (local.get $inEnd)) (then (call $fail (i32.const 1))))
        (local.set $buf (i32.or (local.get $buf) (i32.shl (i32.load8_u (local.get $in)) (local.get $cnt))))
        (local.set $in (i32.add (local.get $in) (i32.const 1)))
        (local.set $cnt (i32.add (local.get $cnt) (i32.const 8)))
        (br $refill)))
      (local.set $len (i32.add
        (i32.load16_u (i32.add (global.get $LBASE) (i32.shl (local.get $sym) (i32.const 1))))
        (i32.and (local.get $buf) (i32.sub (i32.shl (i32.const 1) (local.get $n)) (i32.const 1)))))
      (local.set $buf (i32.shr_u (local.get $buf) (local.get $n)))
      (local.set $cnt (i32.sub (local.get $cnt) (local.get $n)))
      ;; The distance symbol, looked up as the length symbol was.
      (block $full2 (loop $more2
        (br_if $full2 (i32.ge_u (local.get $cnt) (i32.const 24)))
        (br_if $full2 (i32.ge_u (local.get $in) (local.get $inEnd)))
        (local.set $buf (i32.or (local.get $buf) (i32.shl (i32.load8_u (local.get $in)) (local.get $cnt))))
        (local.set $in (i32.add (local.get $in) (i32.const 1)))
        (local.set $cnt (i32.add (local.get $cnt) (i32.const 8)))
        (br $more2)))
      (block $gotDist
        (local.set $entry (i32.load16_u (i32.add (global.get $DISTFAST) (i32.shl (i32.and (local.get $buf) (i32.const 511)) (i32.const 1)))))
        (local.set $n (i32.shr_u (local.get $entry) (i32.const 9)))
        (if (i32.and (i32.ne (local.get $entry) (i32.const 0)) (i32.le_u (local.get $n) (local.get $cnt)))
          (then
            (local.set $buf (i32.shr_u (local.get $buf) (local.get $n)))
            (local.set $cnt (i32.sub (local.get $cnt) (local.get $n)))
            (local.set $sym (i32.and (local.get $entry) (i32.const 511)))
            (br $gotDist)))
        (global.set $bitbuf (local.get $buf)) (global.set $bitcnt (local.get $cnt)) (global.set $in (local.get $in))
        (local.set $sym (call $decode (global.get $DISTCNT) (global.get $DISTSYM) (global.get $DISTFAST)))
        (local.set $buf (global.get $bitbuf)) (local.set $cnt (global.get $bitcnt)) (local.set $in (global.get $in)))
      (if (i32.ge_u (local.get $sym) (i32.const 30)) (then (call $fail (i32.const 1))))
      (local.set $n (i32.load16_u (i32.add (global.get $DEXT) (i32.shl (local.get $sym) (i32.const 1)))))
      (block $enough2 (loop $refill2
        (br_if $enough2 (i32.ge_u (local.get $cnt) (local.get $n)))
        (if (i32.ge_u (local.get $in) (local.get $inEnd)) (then (call $fail (i32.const 1))))
        (local.set $buf (i32.or (local.get $buf) (i32.shl (i32.load8_u (local.get $in)) (local.get $cnt))))
        (local.set $in (i32.add (local.get $in) (i32.const 1)))
        (local.set $cnt (i32.add (local.get $cnt) (i32.const 8)))
        (br $refill2)))
      (local.set $dist (i32.add
        (i32.load16_u (i32.add (global.get $DBASE) (i32.shl (local.get $sym) (i32.const 1))))
        (i32.and (local.get $buf) (i32.sub (i32.shl (i32.const 1) (local.get $n)) (i32.const 1)))))
      (local.set $buf (i32.shr_u (local.get $buf) (local.get $n)))
      (local.set $cnt (i32.sub (local.get $cnt) (local.get $n)))
      ;; The match: from no further back than the output goes, to no further than it may.
      (if (i32.gt_u (local.get $dist) (i32.sub (local.get $out) (local.get $outStart))) (then (call $fail (i32.const 1))))
      (if (i32.gt_u (local.get $len) (i32.sub (local.get $outEnd) (local.get $out))) (then (call $fail (i32.const 2))))
      (local.set $from (i32.sub (local.get $out) (local.get $dist)))
      (local.set $end (i32.add (local.get $out) (local.get $len)))
      (if (i32.ge_u (local.get $dist) (local.get $len))
        (then (memory.copy (local.get $out) (local.get $from) (local.get $len)))
        (else
          ;; An overlapping match repeats what it is copying: a byte at a time.
          (loop $copy
            (i32.store8 (local.get $out) (i32.load8_u (local.get $from)))
            (local.set $out (i32.add (local.get $out) (i32.const 1)))
            (local.set $from (i32.add (local.get $from) (i32.const 1)))
            (br_if $copy (i32.lt_u (local.get $out) (local.get $end))))))
      (local.set $out (local.get $end))
      (br $next)))

  (func $stored
    (local $len i32)
    ;; Skip to the next byte. A symbol's lookahead may have read whole bytes
    ;; past it into the bit buffer: they go back to the input first.
    (global.set $in (i32.sub (global.get $in) (i32.shr_u (global.get $bitcnt) (i32.const 3))))
    (global.set $bitbuf (i32.const 0))
    (global.set $bitcnt (i32.const 0))
    (if (i32.gt_u (i32.add (global.get $in) (i32.const 4)) (global.get $inEnd)) (then (call $fail (i32.const 1))))
    (local.set $len (i32.load16_u (global.get $in)))
    (if (i32.ne (local.get $len) (i32.xor (i32.load16_u (i32.add (global.get $in) (i32.const 2))) (i32.const 65535)))
      (then (call $fail (i32.const 1))))
    (global.set $in (i32.add (global.get $in) (i32.const 4)))
    (if (i32.gt_u (local.get $len) (i32.sub (global.get $inEnd) (global.get $in))) (then (call $fail (i32.const 1))))
    (if (i32.gt_u (local.get $len) (i32.sub (global.get $outEnd) (global.get $out))) (then (call $fail (i32.const 2))))
    (memory.copy (global.get $out) (global.get $in) (local.get $len))
    (global.set $in (i32.add (global.get $in) (local.get $len)))
    (global.set $out (i32.add (global.get $out) (local.get $len))))

  (func $fixed
    (local $s i32)
    (local.set $s (i32.const 0))
    (loop $lengths
      (i32.store16 (i32.add (global.get $LENGTHS) (i32.shl (local.get $s) (i32.const 1)))
        (select (i32.const 8)
          (select (i32.const 9) (select (i32.const 7) (i32.const 8) (i32.lt_u (local.get $s) (i32.const 280))) (i32.lt_u (local.get $s) (i32.const 256)))
          (i32.lt_u (local.get $s) (i32.const 144))))
      (local.set $s (i32.add (local.get $s) (i32.const 1)))
      (br_if $lengths (i32.lt_u (local.get $s) (i32.const 288))))
    (loop $distances
      (i32.store16 (i32.add (global.get $LENGTHS) (i32.shl (local.get $s) (i32.const 1))) (i32.const 5))
      (local.set $s (i32.add (local.get $s) (i32.const 1)))
      (br_if $distances (i32.lt_u (local.get $s) (i32.const 318))))
    (drop (call $construct (global.get $LENCNT) (global.get $LENSYM) (global.get $LENFAST) (global.get $LENGTHS) (i32.const 288)))
    (drop (call $construct (global.get $DISTCNT) (global.get $DISTSYM) (global.get $DISTFAST) (i32.add (global.get $LENGTHS) (i32.const 576)) (i32.const 30)))
    (call $codes))

  (func $dynamic
    (local $nlen i32) (local $ndist i32) (local $ncode i32) (local $index i32) (local $sym i32) (local $len i32) (local $repeat i32) (local $err i32)
    (local.set $nlen (i32.add (call $bits (i32.const 5)) (i32.const 257)))
    (local.set $ndist (i32.add (call $bits (i32.const 5)) (i32.const 1)))
    (local.set $ncode (i32.add (call $bits (i32.const 4)) (i32.const 4)))
    (if (i32.or (i32.gt_u (local.get $nlen) (i32.const 286)) (i32.gt_u (local.get $ndist) (i32.const 30))) (then (call $fail (i32.const 1))))
    ;; The code length code's lengths, in their odd order.
    (local.set $index (i32.const 0))
    (loop $read
      ;; Not `select`, which would read the bits whatever the condition.
      (i32.store16 (i32.add (global.get $LENGTHS) (i32.shl (i32.load8_u (i32.add (global.get $ORDER) (local.get $index))) (i32.const 1)))
        (if (result i32) (i32.lt_u (local.get $index) (local.get $ncode)) (then (call $bits (i32.const 3))) (else (i32.const 0))))
      (local.set $index (i32.add (local.get $index) (i32.const 1)))
      (br_if $read (i32.lt_u (local.get $index) (i32.const 19))))
    (if (call $construct (global.get $LENCNT) (global.get $LENSYM) (global.get $LENFAST) (global.get $LENGTHS) (i32.const 19))
      (then (call $fail (i32.const 1))))
    ;; The literal/length and distance codes' lengths, with their repeats.
    (local.set $index (i32.const 0))
    (block $done (loop $lengths
      (br_if $done (i32.ge_u (local.get $index) (i32.add (local.get $nlen) (local.get $ndist))))
      (local.set $sym (call $decode (global.get $LENCNT) (global.get $LENSYM) (global.get $LENFAST)))
      (if (i32.lt_u (local.get $sym) (i32.const 16))
        (then
          (i32.store16 (i32.add (global.get $LENGTHS) (i32.shl (local.get $index) (i32.const 1))) (local.get $sym))
          (local.set $index (i32.add (local.get $index) (i32.const 1)))
          (br $lengths)))
      (local.set $len (i32.const 0))
      (if (i32.eq (local.get $sym) (i32.const 16))
        (then
          (if (i32.eqz (local.get $index)) (then (call $fail (i32.const 1))))
          (local.set $len (i32.load16_u (i32.add (global.get $LENGTHS) (i32.shl (i32.sub (local.get $index) (i32.const 1)) (i32.const 1)))))
          (local.set $repeat (i32.add (i32.const 3) (call $bits (i32.const 2)))))
        (else (if (i32.eq (local.get $sym) (i32.const 17))
          (then (local.set $repeat (i32.add (i32.const 3) (call $bits (i32.const 3)))))
          (else (local.set $repeat (i32.add (i32.const 11) (call $bits (i32.const 7))))))))
      (if (i32.gt_u (i32.add (local.get $index) (local.get $repeat)) (i32.add (local.get $nlen) (local.get $ndist)))
        (then (call $fail (i32.const 1))))
      (loop $fill
        (i32.store16 (i32.add (global.get $LENGTHS) (i32.shl (local.get $index) (i32.const 1))) (local.get $len))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (local.set $repeat (i32.sub (local.get $repeat) (i32.const 1)))
        (br_if $fill (local.get $repeat)))
      (br $lengths)))
    ;; A block with no end code cannot end.
    (if (i32.eqz (i32.load16_u (i32.add (global.get $LENGTHS) (i32.const 512)))) (then (call $fail (i32.const 1))))
    ;; Incomplete codes only of a single symbol, as puff and zlib allow.
    (local.set $err (call $construct (global.get $LENCNT) (global.get $LENSYM) (global.get $LENFAST) (global.get $LENGTHS) (local.get $nlen)))
    (if (i32.and (i32.ne (local.get $err) (i32.const 0))
          (i32.or (i32.lt_s (local.get $err) (i32.const 0))
                  (i32.ne (local.get $nlen) (i32.add (i32.load16_u (global.get $LENCNT)) (i32.load16_u (i32.add (global.get $LENCNT) (i32.const 2)))))))
      (then (call $fail (i32.const 1))))
    (local.set $err (call $construct (global.get $DISTCNT) (global.get $DISTSYM) (global.get $DISTFAST)
      (i32.add (global.get $LENGTHS) (i32.shl (local.get $nlen) (i32.const 1))) (local.get $ndist)))
    (if (i32.and (i32.ne (local.get $err) (i32.const 0))
          (i32.or (i32.lt_s (local.get $err) (i32.const 0))
                  (i32.ne (local.get $ndist) (i32.add (i32.load16_u (global.get $DISTCNT)) (i32.load16_u (i32.add (global.get $DISTCNT) (i32.const 2)))))))
      (then (call $fail (i32.const 1))))
    (call $codes))

  ;; Inflate the raw deflate data at $in ($inLen bytes) to $out, at most
  ;; $outCap bytes. Returns the bytes written; `consumed()` then says where
  ;; the data ended.
  (func (export "inflate") (param $inAt i32) (param $inLen i32) (param $outAt i32) (param $outCap i32) (result i32)
    (local $last i32) (local $type i32)
    (global.set $status (i32.const 0))
    (global.set $in (local.get $inAt))
    (global.set $inEnd (i32.add (local.get $inAt) (local.get $inLen)))
    (global.set $bitbuf (i32.const 0))
    (global.set $bitcnt (i32.const 0))
    (global.set $outStart (local.get $outAt))
    (global.set $out (local.get $outAt))
    (global.set $outEnd (i32.add (local.get $outAt) (local.get $outCap)))
    (loop $block
      (local.set $last (call $bits (i32.const 1)))
      (local.set $type (call $bits (i32.const 2)))
      (if (i32.eqz (local.get $type)) (then (call $stored))
        (else (if (i32.eq (local.get $type) (i32.const 1)) (then (call $fixed))
          (else (if (i32.eq (local.get $type) (i32.const 2)) (then (call $dynamic))
            (else (call $fail (i32.const 1))))))))
      (br_if $block (i32.eqz (local.get $last))))
    (i32.sub (global.get $out) (global.get $outStart)))

  ;; Where the deflate data ended: the first whole byte after it (whole
  ;; bytes the lookahead read into the bit buffer were not used).
  (func (export "consumed") (result i32)
    (i32.sub (global.get $in) (i32.shr_u (global.get $bitcnt) (i32.const 3))))

  ;; Adler-32 of $len bytes at $at, as zlib's trailer holds it.
  (func (export "adler32") (param $at i32) (param $len i32) (result i32)
    (local $a i32) (local $b i32) (local $end i32) (local $chunkEnd i32)
    (local.set $a (i32.const 1))
    (local.set $end (i32.add (local.get $at) (local.get $len)))
    (block $done (loop $chunk
      (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
      ;; 5552 bytes is the most that cannot overflow 32 bits before the modulo.
      (local.set $chunkEnd (select (local.get $end) (i32.add (local.get $at) (i32.const 5552))
        (i32.lt_u (i32.sub (local.get $end) (local.get $at)) (i32.const 5552))))
      (loop $byte
        (local.set $a (i32.add (local.get $a) (i32.load8_u (local.get $at))))
        (local.set $b (i32.add (local.get $b) (local.get $a)))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br_if $byte (i32.lt_u (local.get $at) (local.get $chunkEnd))))
      (local.set $a (i32.rem_u (local.get $a) (i32.const 65521)))
      (local.set $b (i32.rem_u (local.get $b) (i32.const 65521)))
      (br $chunk)))
    (i32.or (i32.shl (local.get $b) (i32.const 16)) (local.get $a)))
)
