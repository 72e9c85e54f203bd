#!/usr/bin/env bash
# Builds a C++ ELF executable whose DWARF (the .debug_* sections, summed,
# uncompressed) is about SIZE_MB megabytes (±15%; usually within 5%), for the
# symcache benchmark. The program is made of generated translation units
# (bench/corpus/gen) compiled with clang++-14 -g -O2 and linked with lld-14;
# it runs and exits 0.
#
# usage: bench/corpus/make.sh SIZE_MB OUTDIR
#
# Writes OUTDIR/cxx-<SIZE>m (DWARF 5) or OUTDIR/cxx-<SIZE>m-dwarf4 and prints
# its path on the last line of standard output. Everything is cached in
# OUTDIR: objects are shared between sizes, so building 200 after 50 compiles
# only the new units, and re-running a finished size only re-checks it.
#
# environment:
#   DWARF=4     DWARF version (default 5)
#   ZLIB=1      also write <output>.zlib, the same file with its debug
#               sections compressed (objcopy --compress-debug-sections=zlib)
#   JOBS=N      parallel compiles (default 2)
#   SEED=N      corpus seed (default 1); a different seed is a different corpus
#   SPLIT=1     the same corpus with split DWARF (-gsplit-dwarf): writes
#               <output>-split, its .dwo files beside the objects, and
#               <output>-split.dwp (llvm-dwp-14); the size counts the
#               skeletons and the package. Build the size without SPLIT
#               first: its unit count is reused.
set -euo pipefail

if [ $# -ne 2 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ]; then
  echo "usage: bench/corpus/make.sh SIZE_MB OUTDIR" >&2
  exit 2
fi
size_mb=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
dwarf=${DWARF:-5}
jobs=${JOBS:-2}
seed=${SEED:-1}
case $dwarf in 4 | 5) ;; *) echo "make.sh: DWARF must be 4 or 5, not $dwarf" >&2; exit 2 ;; esac

prog=$out/cxx-${size_mb}m
[ "$dwarf" = 4 ] && prog+=-dwarf4
[ "$seed" != 1 ] && prog+=-seed$seed
target=$((size_mb * 1000 * 1000))
split=${SPLIT:-}
if [ "$split" = 1 ]; then
  if [ ! -f "$prog.units" ]; then
    echo "make.sh: SPLIT=1 reuses the unit count of $prog: build it first" >&2
    exit 2
  fi
  cp "$prog.units" "$prog-split.units"
  prog+=-split
fi
dwp=() # the package of a split corpus, whose DWARF counts too
[ "$split" = 1 ] && dwp=("$prog.dwp")

# debug_bytes FILE...: the .debug_* sections of each file, summed, in bytes.
# Compressed sections (flag C) count their uncompressed size (ch_size).
debug_bytes() {
  local f
  for f in "$@"; do
    llvm-readelf-14 -S -W "$f" | sed 's/^ *\[ *[0-9]*\] //' | awk -v f="$f" '
      function hex(s,  i, v) { v = 0; s = tolower(s)
        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return v }
      $1 ~ /^\.debug_/ {
        if ($7 ~ /C/) { z = 1; next }
        n += hex($5) }
      END { if (z) { print "compressed" } else { printf "%d\n", n } }' |
      while read -r n; do
        if [ "$n" = compressed ]; then
          # Decompress a copy: readelf does not show ch_size.
          llvm-objcopy-14 --decompress-debug-sections "$f" "$out/.decompressed"
          debug_bytes "$out/.decompressed"
          rm -f "$out/.decompressed"
        else
          echo "$n"
        fi
      done
  done | awk '{ s += $1 } END { printf "%d\n", s }'
}

# The generator's hash names the work directory, so a changed generator
# never mixes its units with an older one's.
gen_hash=$(cat "$here/gen/main.go" "$here/Makefile" | sha256sum | cut -c1-12)
work=$out/units-$gen_hash
gen=$work/gen
mkdir -p "$work"
if [ ! -x "$gen" ]; then
  (cd "$root" && go build -o "$gen" ./bench/corpus/gen)
fi

mk() {
  nice -n 10 make -s --no-print-directory -f "$here/Makefile" -j"$jobs" \
    GEN="$gen" WORK="$work" DWARF="$dwarf" SEED="$seed" SPLIT="$split" "$@"
}

start=$SECONDS
units_file=$prog.units
if [ -f "$units_file" ]; then
  n=$(cat "$units_file")
  mk N="$n" PROG="$prog"
else
  # Calibrate on the first two units: their objects' DWARF is close to what
  # each adds to the linked program (its strings are mostly its own).
  mk N=2 objects
  per=$(debug_bytes "$work/obj-dwarf$dwarf"/tu0000{0,1}.o | awk '{ print int($1 / 2) }')
  n=$(( (target + per / 2) / per ))
  [ "$n" -lt 1 ] && n=1
  echo "calibration: $((per / 1000)) kB of DWARF per unit → $n units for $size_mb MB" >&2
  # Units differ in size; correct N from the linked program until it lands
  # within 5% of the target.
  for try in 1 2 3 4; do
    echo "building $n units (make -j$jobs)..." >&2
    mk N="$n" PROG="$prog"
    have=$(debug_bytes "$prog")
    next=$(awk -v n="$n" -v t="$target" -v h="$have" 'BEGIN { m = int(n * t / h + 0.5); print (m < 1 ? 1 : m) }')
    if awk -v t="$target" -v h="$have" 'BEGIN { exit !(h > t * 0.95 && h < t * 1.05) }' || [ "$next" = "$n" ]; then
      break
    fi
    echo "$((have / 1000000)) MB of DWARF with $n units; trying $next" >&2
    n=$next
  done
  echo "$n" > "$units_file"
  echo "$((SECONDS - start))" > "$prog.buildtime"
fi
wall=$((SECONDS - start))

if [ "${ZLIB:-}" = 1 ] && { [ ! -f "$prog.zlib" ] || [ "$prog.zlib" -ot "$prog" ]; }; then
  objcopy --compress-debug-sections=zlib "$prog" "$prog.zlib.tmp"
  mv "$prog.zlib.tmp" "$prog.zlib"
fi

"$prog" > /dev/null || { echo "make.sh: $prog exited $?" >&2; exit 1; }

# Report: the debug sections, compile times, the output.
echo "| section | bytes | MB |"
echo "|---|---:|---:|"
llvm-readelf-14 -S -W "$prog" "${dwp[@]}" | sed 's/^ *\[ *[0-9]*\] //' | awk '
  function hex(s,  i, v) { v = 0; s = tolower(s)
    for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return v }
  $1 ~ /^\.debug_/ { n = hex($5); s += n; printf "| %s | %d | %.1f |\n", $1, n, n / 1e6 }
  $1 == ".text" { t = hex($5) }
  END { printf "| **all .debug_*** | **%d** | **%.1f** |\n| .text | %d | %.1f |\n", s, s / 1e6, t, t / 1e6 }'
have=$(debug_bytes "$prog" "${dwp[@]}")
cpu=$(cat "$work/obj-dwarf$dwarf${split:+-split}"/tu*.o.time | awk -v n="$n" 'NR <= n { s += $2 + $3 } END { printf "%d", s }')
echo
echo "units: $n (DWARF $dwarf, seed $seed), DWARF $((have / 1000000)) MB = $(awk -v h="$have" -v t="$target" 'BEGIN { printf "%+.1f%%", (h / t - 1) * 100 }') of the $size_mb MB target"
echo "compile: $cpu CPU-s summed over the units; first build took $(cat "$prog.buildtime" 2>/dev/null || echo '?') s wall; this run $wall s"
echo "file: $(du -m "$prog" | cut -f1) MB, runs: $("$prog")"
[ -f "$prog.zlib" ] && echo "zlib copy: $prog.zlib ($(du -m "$prog.zlib" | cut -f1) MB)"
echo "$prog"
