#!/usr/bin/env bash
# Benchmarks symcache building and symcache lookups against the LLVM peers,
# in the same run and on the same files, and prints markdown tables with the
# ratios issue 3 sets targets for:
#
#   build:   backtrail symcache build FILE -o OUT   vs  llvm-gsymutil-14 --convert
#            (same thread count), with s/GB of DWARF, peak RSS / DWARF size,
#            and symcache size / DWARF size
#   lookups: backtrail symbolize --obj OUT.symcache  vs  llvm-symbolizer-14 --obj FILE
#            on random line-table addresses; the outputs must be identical
#
# usage: bench/symcache.sh [files...]
#
# With no files: the C++ corpora from bench/corpus/make.sh (50 and 200 MB of
# DWARF, built if missing; 1024 MB when it has been built) and the Go
# toolchain binaries from bench/corpus/go.sh.
#
# environment:
#   BENCH_DIR   work directory (default /tmp/backtrail-bench)
#   THREADS     threads for both builders (default: nproc); backtrail gets
#               --threads and GOMAXPROCS, gsymutil --num-threads
#   RUNS        runs per build and per lookup batch of up to 100k addresses;
#               the median by wall time is reported (default 3; bigger
#               lookup batches run once)
#   COUNTS      lookup batch sizes for every file (default "1 1000 10000 100000":
#               from one address, where opening the symcache or the debug file
#               is most of the cost, to many)
#   BIG_COUNTS  batch sizes for the file with the most DWARF
#               (default "1 1000 10000 100000 1000000")
#   BACKTRAIL   a backtrail binary to use instead of building ./cmd/backtrail
#   REV         build backtrail at this commit (git archive) instead of the
#               working tree; the working tree falls back to HEAD when it
#               does not build
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${BENCH_DIR:-/tmp/backtrail-bench}
threads=${THREADS:-$(nproc)}
runs=${RUNS:-3}
read -r -a counts <<<"${COUNTS:-1 1000 10000 100000}"
read -r -a big_counts <<<"${BIG_COUNTS:-1 1000 10000 100000 1000000}"
mkdir -p "$work/symcache"
out=$work/symcache

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  for mb in 50 200; do
    files+=("$(bench/corpus/make.sh "$mb" "$work/corpus" | tail -n 1)")
  done
  [ -f "$work/corpus/cxx-1024m.units" ] && files+=("$work/corpus/cxx-1024m")
  mapfile -t -O ${#files[@]} files < <(bench/corpus/go.sh "$work/go")
fi

# build_rev REV: builds cmd/backtrail of a commit, from `git archive` into the
# work directory (the checkout is not touched).
build_rev() {
  local src=$out/src-$1
  rm -rf "$src"
  mkdir -p "$src"
  git archive "$1" | tar -x -C "$src"
  (cd "$src" && CGO_ENABLED=0 nice -n 10 go build -o "$bt" ./cmd/backtrail)
}
bt=$out/backtrail
if [ -n "${BACKTRAIL:-}" ]; then
  bt=$BACKTRAIL
  bt_desc="$BACKTRAIL (given)"
elif [ -n "${REV:-}" ]; then
  rev=$(git rev-parse --short "$REV")
  build_rev "$rev"
  bt_desc="$rev (git archive)"
elif CGO_ENABLED=0 nice -n 10 go build -o "$bt" ./cmd/backtrail 2> "$out/build.log"; then
  bt_desc="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo '+dirty') (working tree)"
else
  # The working tree may be mid-edit; fall back to the last commit.
  echo "symcache.sh: the working tree does not build ($(head -n 2 "$out/build.log" | tail -n 1)); using HEAD" >&2
  rev=$(git rev-parse --short HEAD)
  build_rev "$rev"
  bt_desc="$rev (git archive; the working tree did not build)"
fi
have_build=0
if "$bt" help symcache build > /dev/null 2>&1; then
  have_build=1
fi

# debug_bytes FILE: the .debug_* sections summed, uncompressed.
debug_bytes() {
  local f=$1 flags
  flags=$(llvm-readelf-14 -S -W "$f" | sed 's/^ *\[ *[0-9]*\] //' | awk '$1 ~ /^\.debug_/ { print $7 }')
  if grep -q C <<<"$flags"; then
    llvm-objcopy-14 --decompress-debug-sections "$f" "$out/.decompressed"
    f=$out/.decompressed
  fi
  llvm-readelf-14 -S -W "$f" | sed 's/^ *\[ *[0-9]*\] //' | awk '
    function hex(s,  i, v) { v = 0; s = tolower(s)
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v }
    $1 ~ /^\.debug_/ { n += hex($5) }
    END { printf "%d\n", n }'
  rm -f "$out/.decompressed"
}

# measure STDIN STDOUT CMD...: runs CMD $n times (n=$runs unless set) and
# sets wall, cpu (user+sys) and rss (kB) from the median run by wall time,
# and status to its exit status. STDOUT receives that run's standard output.
# With $fresh set, that file is removed before each run: both builders then
# write a new file, as a first build does. (Replacing one costs either tool
# ext4's flush of the new file's blocks, auto_da_alloc: 0.16 s for a 264 MB
# symcache.)
measure() {
  local in=$1 dst=$2 i
  shift 2
  local rows=()
  status=0
  for ((i = 0; i < ${n:-$runs}; i++)); do
    local sink=$out/stdout.$i
    [ -c "$dst" ] && sink=$dst # straight into the device: no file is written
    [ -n "${fresh:-}" ] && rm -f "$fresh"
    /usr/bin/time -f '%e %U %S %M' -o "$out/time" "$@" < "$in" > "$sink" 2>> "$out/stderr" || status=$?
    [ "$status" -ne 0 ] && { tail -n 3 "$out/stderr" >&2; break; }
    rows+=("$(tail -n 1 "$out/time") $i")
  done
  if [ "$status" -ne 0 ]; then
    wall=0 cpu=0 rss=0
    return
  fi
  read -r wall user sys rss i <<<"$(printf '%s\n' "${rows[@]}" | sort -n | sed -n "$(( (${#rows[@]} + 1) / 2 ))p")"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  # Never rename over a device: "mv x /dev/null" would replace /dev/null.
  if [ -c "$dst" ]; then rm -f "$out/stdout.$i"; else mv "$out/stdout.$i" "$dst"; fi
  rm -f "$out"/stdout.*
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f×", a / b; else printf "–" }'; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }

echo "# symcache benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/^Mem:/ { print $2 }') GB RAM, load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- backtrail: $bt_desc, $(go version | cut -d' ' -f3); symcache build: $([ $have_build = 1 ] && echo available || echo 'NOT AVAILABLE in this binary')"
echo "- peers: $(llvm-gsymutil-14 --version | grep -o 'LLVM version [0-9.]*') llvm-gsymutil-14 and llvm-symbolizer-14"
echo "- threads: $threads (backtrail --threads=$threads with GOMAXPROCS=$threads, gsymutil --num-threads=$threads); build times are the median of $runs runs, page cache warm"
echo
echo "## Build"
echo
echo "s/GB is backtrail's wall time per 10⁹ bytes of DWARF; the speedups are gsymutil's time over backtrail's, by wall"
echo "clock and by CPU (user+sys) time."
echo
echo "| file | DWARF | backtrail wall | CPU | peak RSS | s/GB | RSS/DWARF | symcache | /DWARF | gsymutil wall | CPU | peak RSS | gsym | speedup wall | speedup CPU |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

declare -A dwarf_of
biggest= biggest_bytes=0
for f in "${files[@]}"; do
  name=$(basename "$f")
  d=$(debug_bytes "$f")
  # Split DWARF (bench/corpus/make.sh SPLIT=1): the package holds most of it.
  [ -f "$f.dwp" ] && d=$((d + $(debug_bytes "$f.dwp")))
  dwarf_of[$f]=$d
  if [ "$d" -gt "$biggest_bytes" ]; then biggest=$f biggest_bytes=$d; fi
  cat "$f" > /dev/null # warm the page cache for both tools

  bt_cols="n/a | | | | | | "
  if [ $have_build = 1 ]; then
    fresh=$out/$name.symcache GOMAXPROCS=$threads measure /dev/null /dev/null "$bt" symcache build --threads="$threads" "$f" -o "$out/$name.symcache"
    if [ "$status" -eq 0 ]; then
      bw=$wall bc=$cpu
      size=$(stat -c %s "$out/$name.symcache")
      bt_cols=$(awk -v w="$wall" -v c="$cpu" -v r="$rss" -v d="$d" -v s="$size" 'BEGIN {
        printf "%.2f s | %.2f s | %d MB | %.2f | %.2f | %.1f MB | %.1f%%",
          w, c, r / 1024, w / (d / 1e9), r * 1024 / d, s / 1e6, s * 100 / d }')
    else
      bw=0 bc=0 bt_cols="failed (exit $status) | | | | | | "
    fi
  fi

  fresh=$out/$name.gsym measure /dev/null /dev/null llvm-gsymutil-14 --convert "$f" --out-file "$out/$name.gsym" --num-threads="$threads" --quiet
  if [ "$status" -eq 0 ]; then
    gs_cols=$(awk -v w="$wall" -v c="$cpu" -v r="$rss" -v s="$(stat -c %s "$out/$name.gsym")" 'BEGIN {
      printf "%.2f s | %.2f s | %d MB | %.1f MB", w, c, r / 1024, s / 1e6 }')
  else
    gs_cols="failed (exit $status) | | | "
  fi
  speed="– | –"
  [ $have_build = 1 ] && [ "${bw:-0}" != 0 ] && speed="$(ratio "$wall" "$bw") | $(ratio "$cpu" "$bc")"
  echo "| $name | $(mb "$d") MB | $bt_cols | $gs_cols | $speed |"
done

echo
echo "## Lookups"
echo
echo "Random line-table addresses (llvm-dwarfdump-14 --debug-line rows, end_sequence rows excluded, deduplicated,"
echo "sampled with shuf and a fixed random source). Timed runs print to /dev/null; batches of up to 100k: median of $runs runs; bigger: one run."
echo
echo "Same output compares the two standard outputs byte for byte; when they differ, both tools run again with"
echo "--no-demangle to tell demangler differences from lookup differences."
echo
echo "| file | addresses | llvm-symbolizer-14 wall | CPU | backtrail symbolize wall | CPU | speedup wall | speedup CPU | to a file: llvm / backtrail wall (speedup) | llvm RSS | backtrail RSS | same output |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for f in "${files[@]}"; do
  name=$(basename "$f")
  rows=$out/$name.rows
  if [ ! -s "$rows" ] || [ "$rows" -ot "$f" ]; then
    llvm-dwarfdump-14 --debug-line "$f" | awk '/^0x[0-9a-f]+ / && !/end_sequence/ { print $1 }' |
      LC_ALL=C sort -u > "$rows.tmp"
    mv "$rows.tmp" "$rows"
  fi
  cs=("${counts[@]}")
  [ "$f" = "$biggest" ] && cs=("${big_counts[@]}")
  for c in "${cs[@]}"; do
    shuf -n "$c" --random-source=<(yes) "$rows" > "$out/addrs"
    got=$(wc -l < "$out/addrs")
    n=$runs
    [ "$c" -gt 100000 ] && n=1
    # Timed runs print to /dev/null: with deep C++ inlining the answers
    # are ~2 KB per address (2 GB for 1M), and the cost of writing that
    # into a new file is the kernel's page cache, which both tools pay
    # alike and which on this VM is several seconds and varies from run
    # to run. One more run of each prints to a file for the comparison;
    # its times are the "to a file" columns.
    rm -f "$out/llvm.out" "$out/bt.out"
    n=$n measure "$out/addrs" /dev/null llvm-symbolizer-14 --obj="$f"
    lw=$wall lc=$cpu lr=$rss
    n=1 measure "$out/addrs" "$out/llvm.out" llvm-symbolizer-14 --obj="$f"
    lfw=$wall
    if [ $have_build = 1 ] && [ -f "$out/$name.symcache" ]; then
      n=$n measure "$out/addrs" /dev/null "$bt" symbolize --obj="$out/$name.symcache"
      bw=$wall bc=$cpu br=$rss
      [ "$status" -eq 0 ] && n=1 measure "$out/addrs" "$out/bt.out" "$bt" symbolize --obj="$out/$name.symcache"
      bfw=$wall
      if [ "$status" -ne 0 ]; then
        same="backtrail failed (exit $status)"
      elif cmp -s "$out/llvm.out" "$out/bt.out"; then
        same=yes
      else
        # Each address prints a block ending in an empty line; count the
        # blocks that differ and keep the first few for the report.
        differ=$(paste -d '\t' <(awk -v RS= '{ gsub(/\n/, " ; "); print }' "$out/llvm.out") \
          <(awk -v RS= '{ gsub(/\n/, " ; "); print }' "$out/bt.out") | awk -F'\t' '$1 != $2' | tee "$out/$name.$c.diff" | wc -l)
        llvm-symbolizer-14 --no-demangle --obj="$f" < "$out/addrs" > "$out/llvm.raw"
        "$bt" symbolize --no-demangle --obj="$out/$name.symcache" < "$out/addrs" > "$out/bt.raw"
        if cmp -s "$out/llvm.raw" "$out/bt.raw"; then
          same="names demangled differently for $differ of $got; identical with --no-demangle (see $out/$name.$c.diff)"
        else
          raw=$(paste -d '\t' <(awk -v RS= '{ gsub(/\n/, " ; "); print }' "$out/llvm.raw") \
            <(awk -v RS= '{ gsub(/\n/, " ; "); print }' "$out/bt.raw") | awk -F'\t' '$1 != $2' | tee "$out/$name.$c.raw.diff" | wc -l)
          same="**NO**: $differ of $got differ; with --no-demangle $raw differ (see $out/$name.$c.diff and .raw.diff)"
        fi
      fi
      printf '| %s | %d | %.2f s | %.2f s | %.2f s | %.2f s | %s | %s | %.2f s / %.2f s (%s) | %d MB | %d MB | %s |\n' "$name" "$got" "$lw" "$lc" "$bw" "$bc" \
        "$(ratio "$lw" "$bw")" "$(ratio "$lc" "$bc")" "$lfw" "$bfw" "$(ratio "$lfw" "$bfw")" $((lr / 1024)) $((br / 1024)) "$same"
    else
      printf '| %s | %d | %.2f s | %.2f s | n/a | | – | – | – | %d MB | – | – |\n' "$name" "$got" "$lw" "$lc" $((lr / 1024))
    fi
  done
done

echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared; compare CPU columns when it is busy)."
