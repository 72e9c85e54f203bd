#!/usr/bin/env bash
# Benchmarks `backtrail dump` against `eu-stack -p` (with and without -i)
# and `gdb -batch -ex 'thread apply all bt' -p`, in the same run, on the
# project's target program (testdata/src/dump/parked.c, gcc -O2 -g) with N
# threads parked at depth D plus a heartbeat thread. Prints, per
# configuration, the median wall time of each tool, the ratios, and the
# worst pause the heartbeat thread saw during each tool's runs (its
# longest gap beyond its 200 µs sleep), with a baseline measured while no
# tool ran.
#
# usage: bench/dump.sh [THREADSxDEPTH ...]   (default: 10x10 100x10 1000x10 1000x100)
# env:   RUNS (default 3; gdb runs once when it would take long), BENCH_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(10x10 100x10 1000x10 1000x100)
runs=${RUNS:-3}
work="${BENCH_DIR:-/tmp/backtrail-bench-dump}"
mkdir -p "$work"
gcc -O2 -g -pthread -o "$work/parked" testdata/src/dump/parked.c
go build -o "$work/backtrail" ./cmd/backtrail
echo "machine: $(nproc) cores, $(uname -r), $(go version | cut -d' ' -f3), $(eu-stack --version | head -1), $(gdb --version | head -1)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

target_pid=""
start_target() { # threads depth
  rm -f "$work/ctl"
  mkfifo "$work/ctl"
  "$work/parked" -t "$1" -d "$2" -H 200 < "$work/ctl" > "$work/target.out" 2>&1 &
  target_pid=$!
  exec 3>"$work/ctl"
  for _ in $(seq 300); do grep -q '^ready' "$work/target.out" && return; sleep 0.1; done
  echo "target did not start" >&2
  exit 1
}
stop_target() {
  echo exit >&3 || true
  exec 3>&-
  wait "$target_pid" 2>/dev/null || true
}
# hb prints the heartbeat's worst gap (µs) since the last call, and resets it.
hb() {
  local n
  n=$(grep -c '^hb ' "$work/target.out" || true)
  echo hb >&3
  for _ in $(seq 100); do
    [ "$(grep -c '^hb ' "$work/target.out" || true)" -gt "$n" ] && break
    sleep 0.01
  done
  grep '^hb ' "$work/target.out" | tail -1 | sed 's/.*max_us=\([0-9]*\).*/\1/'
}
# measure NAME RUNS CMD...: sets time_s (median seconds) and pause_us (worst).
measure() {
  local name=$1 n=$2
  shift 2
  local ts=() worst=0 t0 t1 p
  hb > /dev/null
  for ((i = 0; i < n; i++)); do
    t0=$(date +%s%N)
    "$@" > "$work/$name.out" 2> "$work/$name.err" || true
    t1=$(date +%s%N)
    ts+=("$(( (t1 - t0) / 1000 ))")
    p=$(hb)
    [ "$p" -gt "$worst" ] && worst=$p
  done
  time_s=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (n + 1) / 2 ))p" | awk '{printf "%.3f", $1 / 1e6}')
  pause_us=$worst
  frames=$(grep -c '^#' "$work/$name.out" || true)
}

fmt_pause() { awk -v u="$1" 'BEGIN { if (u >= 10000) printf "%.0f ms", u / 1000; else if (u >= 1000) printf "%.1f ms", u / 1000; else printf "%d µs", u }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f×", (b > 0 ? a / b : 0) }'; }

rows=()
for c in "${configs[@]}"; do
  threads=${c%x*} depth=${c#*x}
  start_target "$threads" "$depth"
  pid=$target_pid
  sleep 1
  hb > /dev/null
  sleep 1
  base=$(hb)
  measure bt "$runs" "$work/backtrail" dump "$pid"; bt_t=$time_s bt_p=$pause_us bt_f=$frames
  measure btf "$runs" "$work/backtrail" dump --freeze "$pid"; btf_t=$time_s btf_p=$pause_us
  measure eu "$runs" eu-stack -p "$pid"; eu_t=$time_s eu_p=$pause_us
  measure eui "$runs" eu-stack -p "$pid" -i; eui_t=$time_s eui_p=$pause_us eui_f=$frames
  gruns=$runs
  [ $((threads * depth)) -ge 100000 ] && gruns=1
  measure gdb "$gruns" gdb -batch -ex 'thread apply all bt' -p "$pid"; gdb_t=$time_s gdb_p=$pause_us
  stop_target
  rows+=("| $threads × $depth | $bt_t s | $btf_t s | $eu_t s | $eui_t s | $gdb_t s | **$(ratio "$eui_t" "$bt_t")** ($(ratio "$eu_t" "$bt_t") no -i) | **$(ratio "$gdb_t" "$bt_t")** | $(fmt_pause "$bt_p") | $(fmt_pause "$btf_p") | $(fmt_pause "$eui_p") | $(fmt_pause "$gdb_p") | $(fmt_pause "$base") | $bt_f / $eui_f |")
  echo "done $c: backtrail $bt_t s, eu-stack -i $eui_t s, gdb $gdb_t s (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| threads × depth | backtrail dump | --freeze | eu-stack | eu-stack -i | gdb | eu-stack -i ÷ backtrail | gdb ÷ backtrail | worst pause: backtrail | --freeze | eu-stack -i | gdb | heartbeat baseline | frame lines (bt / eu -i) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
