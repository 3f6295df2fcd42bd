#!/bin/sh
# bitwire's float steps must round the same however they are compiled: the
# sources keep every product that feeds an add behind bw_nofuse, so no
# compiler flag can fuse them (WIRE.md, compressed_float). Two checks, each
# with fusion allowed (-ffp-contract=fast, plus -mfma on x86-64):
#  1. no fused multiply-add instruction in the assembly of the core, the
#     binding, the C that `bitwire gen c` writes and the C example;
#  2. core/test/fpcheck.c prints the same 31000 results (quantized floats,
#     quaternions, angles) as its -ffp-contract=off build (on a CPU with FMA),
#     with bw_nofuse's asm and with its volatile fallback.
# usage: sh tools/test_fpcontract.sh OUTDIR "CC" "LUA_CFLAGS" core.c... -- binding.c...
# (run from the repository root with LUA_PATH/LUA_CPATH set for ./lua, ./build)
set -e
out=$1; CC=$2; LUA_CFLAGS=$3; LUA=${LUA:-lua5.4}; shift 3
core=""; bind=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do core="$core $1"; shift; done
[ $# -gt 0 ] && shift
bind="$*"
case $($CC -dumpmachine) in
  x86_64*) fma="-mfma"; ops='vfn?m(add|sub)(add|sub)?[0-9]+[sp][sd]'
           noasm="-U__SSE2_MATH__" ;;  # bw.h takes its volatile fallback
  aarch64*) fma=""; ops='fn?m(add|sub)|fml[as]'; noasm="" ;;
  *) echo "fp-test: skipped (no FMA check for $($CC -dumpmachine))"; exit 0 ;;
esac
mkdir -p "$out/gen"

# the generated C of the cross test's descriptions and of the C example
for d in spec/fixtures/gen/*.lua spec/fixtures/defs/game_v3.lua; do
  n=$(basename "$(dirname "$d")")_$(basename "$d" .lua)
  $LUA bin/bitwire gen c "$d" -o "$out/gen" --name "$n" >/dev/null
done
$LUA bin/bitwire gen c examples/c_server/defs.lua -o "$out/gen" --name game \
  >/dev/null

# 1. "file function instruction" for each fused instruction 'cc' emits
scan () {
  cc=$1; shift
  for f in "$@"; do
    $cc -std=c99 -w -O2 $fma -ffp-contract=fast -Icore -I"$out/gen" \
      $LUA_CFLAGS -S -o "$out/scan.s" "$f" || exit 1
    awk -v f="$f" -v ops="$ops" '
      /^[A-Za-z_][A-Za-z0-9_.]*:/ { fn = $1 }
      $1 ~ "^(" ops ")$" { print f, fn, $1 }' "$out/scan.s"
  done
}
files="$core $bind $(ls "$out"/gen/*.c) examples/c_server/server.c"
nfiles=$(echo $files | wc -w)
compilers=$CC
command -v clang >/dev/null 2>&1 && [ "$CC" != clang ] && compilers="$CC clang"
fail=0
for cc in $compilers; do
  found=$(scan "$cc" $files) || { echo "fp-test: $cc failed"; exit 1; }
  if [ -n "$found" ]; then
    echo "fp-test: $cc fuses multiply-adds (a product must go through bw_nofuse):"
    echo "$found" | sort | uniq -c
    fail=1
  fi
done

# 2. the same results with and without contraction, also (on x86-64)
# through the volatile fallback that targets other than x86 and arm64 get
cflags="-std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -Icore"
fpsrc="core/test/fpcheck.c core/bw_stream.c core/bw_game.c"  # the float code
$CC $cflags -ffp-contract=off -o "$out/fp_off" $fpsrc -lm
$CC $cflags -ffp-contract=fast $fma -o "$out/fp_fast" $fpsrc -lm
variants=fast
if [ -n "$noasm" ]; then
  variants="fast volatile"
  $CC $cflags -ffp-contract=fast $fma $noasm -o "$out/fp_volatile" \
    $fpsrc -lm
fi
"$out/fp_off" >"$out/off.txt"
n=$(wc -l <"$out/off.txt")
if [ "$fma" = -mfma ] && ! grep -qw fma /proc/cpuinfo 2>/dev/null; then
  echo "fp-test: this CPU has no FMA: only the assembly was checked"
else
  for v in $variants; do
    "$out/fp_$v" >"$out/$v.txt"
    if ! cmp -s "$out/off.txt" "$out/$v.txt"; then
      echo "fp-test: $(diff "$out/off.txt" "$out/$v.txt" | grep -c '^<') of $n" \
           "results differ when fused ($v build), e.g.:"
      diff "$out/off.txt" "$out/$v.txt" | head -4
      fail=1
    fi
  done
fi
[ $fail = 0 ] && echo "fp-test: no fused multiply-add in $nfiles files ($compilers," \
  "-O2 -ffp-contract=fast $fma); $n results as with -ffp-contract=off"
exit $fail
