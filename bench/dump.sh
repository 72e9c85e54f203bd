#!/usr/bin/env bash
# Benchmarks `backtrail dump` against `eu-stack -p` (with and without -i)
# and `gdb -batch -ex 'thread apply all bt' -p`, in the same run, on the
# project's target program (testdata/src/dump/parked.c, gcc -O2 -g) with N
# threads parked at depth D plus a heartbeat thread. Prints, per
# configuration, the median wall time and CPU time (user+sys) of each tool,
# the ratios, and two measures of the pause the dump inflicts:
#
#   - direct: backtrail's own per-thread measure (dump --stats), from
#     PTRACE_INTERRUPT until the thread's detach returned: max and p99 over
#     all threads of all runs, and the "held" part after the thread had
#     stopped (backtrail's own work; the rest is the kernel scheduling the
#     thread into its stop);
#   - heartbeat: the longest gap beyond its 200 µs sleep that the target's
#     heartbeat thread saw during each tool's runs, with a baseline
#     measured while no tool ran (scheduler noise).
#
# backtrail's cache of uncompressed debug files (see dump.Options.CacheDir)
# is emptied before each configuration; the first run fills it and is
# reported as "cold".
#
# With BASE set to another backtrail binary (say, one built from an
# earlier commit), the default-mode runs of this tree and of BASE take
# turns on the same target, and a table compares the two: on a shared
# machine whose load changes from minute to minute, that is the fair
# before/after.
#
# usage: bench/dump.sh [THREADSxDEPTH ...]   (default: 10x10 100x10 1000x10 1000x100)
# env:   RUNS (default 3; gdb runs once when it would take long), BENCH_DIR, BASE
set -euo pipefail
cd "$(dirname "$0")/.."
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(10x10 100x10 1000x10 1000x100)
runs=${RUNS:-3}
base_bin=${BASE:-}
work="${BENCH_DIR:-/tmp/backtrail-bench-dump}"
mkdir -p "$work"
gcc -O2 -g -pthread -o "$work/parked" testdata/src/dump/parked.c
go build -o "$work/backtrail" ./cmd/backtrail
export XDG_CACHE_HOME="$work/cache"
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
# once NAME CMD...: runs CMD once, appending its wall and CPU seconds to
# $work/NAME.runs, its --stats line to $work/NAME.stats, and its worst
# heartbeat gap to $work/NAME.hb; its output is left in $work/NAME.out.
once() {
  local name=$1 t0 t1
  shift
  hb > /dev/null
  t0=$(date +%s%N)
  /usr/bin/time -f '%U %S' -o "$work/$name.time" "$@" > "$work/$name.out" 2> "$work/$name.err" || true
  t1=$(date +%s%N)
  grep '^stats:' "$work/$name.err" >> "$work/$name.stats" || true
  echo "$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }') $(tail -1 "$work/$name.time" | awk '{printf "%.2f", $1 + $2}')" >> "$work/$name.runs"
  hb >> "$work/$name.hb"
}
# summary NAME: sets time_s and cpu_s (medians, seconds), pause_us (worst
# heartbeat gap), frames, and first_s (the first run's time) from once's files.
summary() {
  local n
  n=$(wc -l < "$work/$1.runs")
  first_s=$(head -1 "$work/$1.runs" | cut -d' ' -f1)
  time_s=$(cut -d' ' -f1 "$work/$1.runs" | sort -n | sed -n "$(( (n + 1) / 2 ))p")
  cpu_s=$(cut -d' ' -f2 "$work/$1.runs" | sort -n | sed -n "$(( (n + 1) / 2 ))p")
  pause_us=$(sort -n "$work/$1.hb" | tail -1)
  frames=$(grep -c '^#' "$work/$1.out" || true)
}
# reset NAME...: forgets the runs of each NAME.
reset() {
  for name in "$@"; do : > "$work/$name.runs"; : > "$work/$name.stats"; : > "$work/$name.hb"; done
}
# measure NAME RUNS CMD...: runs CMD RUNS times, then summary NAME.
measure() {
  local name=$1 n=$2
  shift 2
  reset "$name"
  for ((i = 0; i < n; i++)); do once "$name" "$@"; done
  summary "$name"
}

# direct NAME: the worst of the runs' --stats pause max, p99, and held max.
direct() {
  awk '
    function us(s) { if (s ~ /ms$/) return s * 1000; if (s ~ /µs$/) return s + 0; if (s ~ /ns$/) return s / 1000; return s * 1e6 }
    { for (i = 1; i <= NF; i++) {
        if ($i == "pause") { pm = max(pm, us($(i+4))); pp = max(pp, us($(i+6))) }
        if ($i == "held") { hm = max(hm, us($(i+3))); hp = max(hp, us($(i+5))) }
      } }
    function max(a, b) { return a > b ? a : b }
    END { printf "%d %d %d %d", pm, pp, hm, hp }' "$work/$1.stats"
}

fmt_pause() { awk -v u="$1" 'BEGIN { if (u >= 10000) printf "%.0f ms", u / 1000; else if (u >= 1000) printf "%.1f ms", u / 1000; else printf "%d µs", u }'; }
frac() { echo "$1 / $2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f×", (b > 0 ? a / b : 0) }'; }

rows=()
prows=()
brows=()
for c in "${configs[@]}"; do
  threads=${c%x*} depth=${c#*x}
  start_target "$threads" "$depth"
  pid=$target_pid
  sleep 1
  hb > /dev/null
  sleep 1
  base=$(hb)
  rm -rf "$XDG_CACHE_HOME"
  if [ -n "$base_bin" ]; then
    # This tree and BASE take turns, run by run, on the same target,
    # after a first run of this tree that fills the cache (cold).
    reset cold bt base
    once cold "$work/backtrail" dump --stats "$pid"
    summary cold; cold_s=$first_s
    for ((i = 0; i < runs; i++)); do
      once bt "$work/backtrail" dump --stats "$pid"
      once base "$base_bin" dump --stats "$pid"
    done
    summary base; base_t=$time_s base_c=$cpu_s base_p=$pause_us base_cold=$first_s
    read -r base_dm base_dp base_hm base_hp <<< "$(direct base)"
    summary bt; first_s=$cold_s
  else
    measure bt "$runs" "$work/backtrail" dump --stats "$pid"
  fi
  bt_t=$time_s bt_c=$cpu_s bt_p=$pause_us bt_f=$frames bt_cold=$first_s
  read -r bt_dm bt_dp bt_hm bt_hp <<< "$(direct bt)"
  measure btf "$runs" "$work/backtrail" dump --stats --freeze "$pid"; btf_t=$time_s btf_p=$pause_us
  read -r btf_dm _ _ _ <<< "$(direct btf)"
  measure eu "$runs" eu-stack -p "$pid"; eu_t=$time_s eu_c=$cpu_s
  measure eui "$runs" eu-stack -p "$pid" -i; eui_t=$time_s eui_c=$cpu_s eui_p=$pause_us eui_f=$frames
  gruns=$runs
  [ $((threads * depth)) -ge 100000 ] && gruns=1
  measure gdb "$gruns" gdb -batch -ex 'thread apply all bt' -p "$pid"; gdb_t=$time_s gdb_c=$cpu_s gdb_p=$pause_us
  stop_target
  rows+=("| $threads × $depth | $bt_t s ($bt_c) | $bt_cold s | $btf_t s | $eu_t s ($eu_c) | $eui_t s ($eui_c) | $gdb_t s ($gdb_c) | **$(ratio "$eui_t" "$bt_t")** ($(ratio "$eu_t" "$bt_t") no -i) | **$(ratio "$gdb_t" "$bt_t")** | $(frac "$bt_f" "$eui_f") |")
  [ -n "$base_bin" ] && brows+=("| $threads × $depth | $bt_t s ($bt_c) | $base_t s ($base_c) | $(ratio "$base_t" "$bt_t") | $(fmt_pause "$bt_dm") / $(fmt_pause "$base_dm") | $(fmt_pause "$bt_dp") / $(fmt_pause "$base_dp") | $(fmt_pause "$bt_hm") / $(fmt_pause "$base_hm") | $(fmt_pause "$bt_hp") / $(fmt_pause "$base_hp") | $(fmt_pause "$bt_p") / $(fmt_pause "$base_p") |")
  prows+=("| $threads × $depth | $(fmt_pause "$bt_dm") | $(fmt_pause "$bt_dp") | $(fmt_pause "$bt_hm") | $(fmt_pause "$bt_hp") | $(fmt_pause "$btf_dm") | $(fmt_pause "$bt_p") | $(fmt_pause "$btf_p") | $(fmt_pause "$eui_p") | $(fmt_pause "$gdb_p") | $(fmt_pause "$base") |")
  echo "done $c: backtrail $bt_t s, eu-stack -i $eui_t s, gdb $gdb_t s (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Wall time, median of $runs runs (CPU user+sys in parentheses); cold: backtrail's first run, with an empty debug-file cache."
echo
echo "| threads × depth | backtrail dump | cold | --freeze | eu-stack | eu-stack -i | gdb | eu-stack -i ÷ backtrail | gdb ÷ backtrail | frame lines (bt / eu -i) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "Pauses. Direct: backtrail's per-thread measure (--stats), worst over all threads of all runs: pause = PTRACE_INTERRUPT → detach returned; held = thread stopped → detach returned. Heartbeat: the target's heartbeat thread's longest gap during each tool's runs; baseline without any tool."
echo
echo "| threads × depth | pause max | pause p99 | held max | held p99 | --freeze pause | heartbeat: backtrail | --freeze | eu-stack -i | gdb | baseline |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${prows[@]}"
if [ -n "$base_bin" ]; then
  echo
  echo "This tree against BASE=$base_bin, taking turns run by run on the same target (default mode; wall median with CPU, and the pause figures as above, this tree / BASE)."
  echo
  echo "| threads × depth | backtrail dump | BASE | BASE ÷ this | pause max | pause p99 | held max | held p99 | heartbeat |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${brows[@]}"
fi
