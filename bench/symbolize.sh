#!/usr/bin/env bash
# Benchmarks `backtrail symbolize` against llvm-symbolizer-14 on the Go
# toolchain's cmd/compile built with (uncompressed) DWARF: random line-table
# addresses, with inline frames, in one process per run. Prints wall time
# and peak RSS of each tool per address count, the ratio, and checks that
# both print the same answers.
#
# usage: bench/symbolize.sh [counts...]   (default: 1000 10000 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
counts=("${@:-1000 10000 100000}")
[ $# -eq 0 ] && counts=(1000 10000 100000)
work="${BENCH_DIR:-/tmp/backtrail-bench}"
mkdir -p "$work"
runs=3

obj="$work/compile"
if [ ! -f "$obj" ]; then
  echo "building cmd/compile with DWARF..." >&2
  go build -ldflags=-compressdwarf=false -o "$obj" cmd/compile
fi
CGO_ENABLED=0 go build -o "$work/backtrail" ./cmd/backtrail # as scripts/run builds it
llvm-dwarfdump-14 --debug-line "$obj" | awk '/^0x[0-9a-f]+ /{print $1}' | sort -u > "$work/rows.txt"
echo "object: $obj ($(du -h "$obj" | cut -f1), $(wc -l < "$work/rows.txt") line-table addresses)"
echo "go: $(go version | cut -d' ' -f3), $(llvm-symbolizer-14 --version | grep -o 'LLVM version [0-9.]*'), $(nproc) cores"

# measure CMD...: prints "seconds maxrss_kb" of the median run
measure() {
  local out=() i
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" < "$work/addrs.txt" > "$work/out.txt"
    out+=("$(cat "$work/time")")
  done
  printf '%s\n' "${out[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

printf '\n| addresses | llvm-symbolizer-14 | backtrail symbolize | speedup | llvm RSS | backtrail RSS |\n|---:|---:|---:|---:|---:|---:|\n'
for n in "${counts[@]}"; do
  shuf -n "$n" --random-source=<(yes) "$work/rows.txt" > "$work/addrs.txt"
  read -r lt lm <<<"$(measure llvm-symbolizer-14 --obj="$obj")"
  cp "$work/out.txt" "$work/llvm.out"
  read -r bt bm <<<"$(measure "$work/backtrail" symbolize --obj="$obj")"
  if ! cmp -s "$work/out.txt" "$work/llvm.out"; then
    echo "outputs differ for $n addresses" >&2
    exit 1
  fi
  ratio=$(awk -v a="$lt" -v b="$bt" 'BEGIN { printf "%.1f×", (b > 0 ? a / b : 0) }')
  printf '| %d | %.2f s | %.2f s | %s | %d MB | %d MB |\n' "$n" "$lt" "$bt" "$ratio" $((lm / 1024)) $((bm / 1024))
done
