#!/usr/bin/env bash
# Benchmarks `backtrail dump` against `eu-stack -p` (with and without -i)
# and `gdb -batch -ex 'thread apply all bt' -p`, in the same run, on the
# project's target program (testdata/src/dump/parked.c, gcc -O2 -g) with N
# threads parked at depth D plus two heartbeat threads. Prints, per
# configuration, the median wall time and CPU time (user+sys) of each tool,
# the ratios, and two measures of the pause the dump inflicts:
#
#   - direct: backtrail's own per-thread measure (dump --stats), from
#     PTRACE_INTERRUPT until the thread's detach returned: max and p99 over
#     all threads of all runs, and the "held" part after the thread had
#     stopped (backtrail's own work; the rest is the kernel scheduling the
#     thread into its stop);
#   - heartbeats: the longest gap beyond its 200 µs sleep that each of the
#     target's two heartbeat threads saw during each tool's runs, with a
#     baseline measured while no tool ran. The real-time heartbeat
#     (SCHED_FIFO, as cyclictest measures) takes a CPU the moment it is
#     woken, so its gaps are the tool's pauses plus the timer's and the
#     hypervisor's latency; the normal one also waits for a CPU behind
#     other users' processes. Each gap comes with its run delay (time
#     spent runnable, waiting for a CPU, from the thread's schedstat), and
#     for the normal heartbeat the longest gap less its run delay is shown
#     too. The target runs at normal priority apart from that thread, and
#     needs root or CAP_SYS_NICE for it.
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
CGO_ENABLED=0 go build -o "$work/backtrail" ./cmd/backtrail # as scripts/run builds it
export XDG_CACHE_HOME="$work/cache"
echo "machine: $(nproc) cores, $(uname -r), $(go version | cut -d' ' -f3), $(eu-stack --version | head -1), $(gdb --version | head -1)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

target_pid=""
start_target() { # threads depth
  rm -f "$work/ctl"
  mkfifo "$work/ctl"
  "$work/parked" -t "$1" -d "$2" -H 200 -R 200 < "$work/ctl" > "$work/target.out" 2>&1 &
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
# hb prints the heartbeats' figures (µs) since the last call, and resets
# them: the normal heartbeat's longest gap, its run delay, and the longest
# gap less its run delay, then the same three for the real-time heartbeat.
hb() {
  local n
  n=$(grep -c '^hb ' "$work/target.out" || true)
  echo hb >&3
  for _ in $(seq 100); do
    [ "$(grep -c '^hb ' "$work/target.out" || true)" -gt "$n" ] && break
    sleep 0.01
  done
  grep '^hb ' "$work/target.out" | tail -1 |
    sed 's/^hb max_us=\([0-9-]*\) wait_us=\([0-9-]*\) away_us=\([0-9-]*\) .* rt_max_us=\([0-9-]*\) rt_wait_us=\([0-9-]*\) rt_away_us=\([0-9-]*\) .*/\1 \2 \3 \4 \5 \6/'
}
# once NAME CMD...: runs CMD once, appending its wall and CPU seconds to
# $work/NAME.runs, its --stats line to $work/NAME.stats, and its worst
# heartbeat figures to $work/NAME.hb; its output is left in $work/NAME.out.
#
# The time is bash's time keyword's, which starts no process of its own:
# until the eleventh round the wall time was taken with two $(date) around
# /usr/bin/time, whose forks and execs added 6–12 ms to every run on the
# PVM guest (a dump of 1000 × 10 takes about a hundred).
once() {
  local name=$1 t
  shift
  hb > /dev/null
  t=$( { TIMEFORMAT='%3R %3U %3S'; time "$@" > "$work/$name.out" 2> "$work/$name.err"; } 2>&1 ) || true
  grep '^stats:' "$work/$name.err" >> "$work/$name.stats" || true
  echo "$t" | awk 'END { printf "%.3f %.2f\n", $1, $2 + $3 }' >> "$work/$name.runs"
  hb >> "$work/$name.hb"
}
# summary NAME: sets time_s and cpu_s (medians, seconds), frames, and
# first_s (the first run's time) from once's files, and the heartbeats'
# worst figures (see hbsum).
summary() {
  local n
  n=$(wc -l < "$work/$1.runs")
  first_s=$(head -1 "$work/$1.runs" | cut -d' ' -f1)
  time_s=$(cut -d' ' -f1 "$work/$1.runs" | sort -n | sed -n "$(( (n + 1) / 2 ))p")
  cpu_s=$(cut -d' ' -f2 "$work/$1.runs" | sort -n | sed -n "$(( (n + 1) / 2 ))p")
  hbsum "$1"
  frames=$(grep -c '^#' "$work/$1.out" || true)
}
# hbsum NAME: sets, from $work/NAME.hb, pause_us and pause_wait (the normal
# heartbeat's longest gap and its run delay), away_us (its longest gap
# less run delay), and rt_us and rt_wait (the real-time heartbeat's
# longest gap and its run delay).
hbsum() {
  read -r pause_us pause_wait _ <<< "$(sort -n -k1,1 "$work/$1.hb" | tail -1)"
  away_us=$(cut -d' ' -f3 "$work/$1.hb" | sort -n | tail -1)
  read -r _ _ _ rt_us rt_wait _ <<< "$(sort -n -k4,4 "$work/$1.hb" | tail -1)"
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
# hbcells NAME: the heartbeat table's three cells for NAME's runs,
# separated by "|": real-time, normal, normal less run delay.
hbcells() {
  hbsum "$1"
  echo "$(fmt_pause "$rt_us") ($(fmt_pause "$rt_wait") wait)|$(fmt_pause "$pause_us") ($(fmt_pause "$pause_wait") wait)|$(fmt_pause "$away_us")"
}

rows=()
prows=()
hrows=()
brows=()
for c in "${configs[@]}"; do
  threads=${c%x*} depth=${c#*x}
  start_target "$threads" "$depth"
  pid=$target_pid
  # The baseline: two windows of a second without any tool.
  sleep 1
  hb > /dev/null
  reset none
  for _ in 1 2; do sleep 1; hb >> "$work/none.hb"; done
  IFS='|' read -r none_rt none_n none_a <<< "$(hbcells none)"
  rm -rf "$XDG_CACHE_HOME"
  # The first run fills the cache (cold) and is not one of the timed runs.
  reset cold
  once cold "$work/backtrail" dump --stats "$pid"
  summary cold; cold_s=$first_s
  if [ -n "$base_bin" ]; then
    # This tree and BASE take turns, run by run, on the same target.
    reset bt base
    for ((i = 0; i < runs; i++)); do
      once bt "$work/backtrail" dump --stats "$pid"
      once base "$base_bin" dump --stats "$pid"
    done
    summary base; base_t=$time_s base_c=$cpu_s base_p=$pause_us base_rt=$rt_us
    read -r base_dm base_dp base_hm base_hp <<< "$(direct base)"
    summary bt
  else
    measure bt "$runs" "$work/backtrail" dump --stats "$pid"
  fi
  bt_t=$time_s bt_c=$cpu_s bt_p=$pause_us bt_rtp=$rt_us bt_f=$frames bt_cold=$cold_s
  IFS='|' read -r bt_rt bt_n bt_a <<< "$(hbcells bt)"
  read -r bt_dm bt_dp bt_hm bt_hp <<< "$(direct bt)"
  measure btf "$runs" "$work/backtrail" dump --stats --freeze "$pid"; btf_t=$time_s
  IFS='|' read -r btf_rt btf_n btf_a <<< "$(hbcells btf)"
  read -r btf_dm _ _ _ <<< "$(direct btf)"
  measure eu "$runs" eu-stack -p "$pid"; eu_t=$time_s eu_c=$cpu_s
  measure eui "$runs" eu-stack -p "$pid" -i; eui_t=$time_s eui_c=$cpu_s eui_f=$frames
  IFS='|' read -r eui_rt eui_n eui_a <<< "$(hbcells eui)"
  gruns=$runs
  [ $((threads * depth)) -ge 100000 ] && gruns=1
  measure gdb "$gruns" gdb -batch -ex 'thread apply all bt' -p "$pid"; gdb_t=$time_s gdb_c=$cpu_s
  IFS='|' read -r gdb_rt gdb_n gdb_a <<< "$(hbcells gdb)"
  stop_target
  rows+=("| $threads × $depth | $bt_t s ($bt_c) | $bt_cold s | $btf_t s | $eu_t s ($eu_c) | $eui_t s ($eui_c) | $gdb_t s ($gdb_c) | **$(ratio "$eui_t" "$bt_t")** ($(ratio "$eu_t" "$bt_t") no -i) | **$(ratio "$gdb_t" "$bt_t")** | $(frac "$bt_f" "$eui_f") |")
  [ -n "$base_bin" ] && brows+=("| $threads × $depth | $bt_t s ($bt_c) | $base_t s ($base_c) | $(ratio "$base_t" "$bt_t") | $(fmt_pause "$bt_dm") / $(fmt_pause "$base_dm") | $(fmt_pause "$bt_dp") / $(fmt_pause "$base_dp") | $(fmt_pause "$bt_hm") / $(fmt_pause "$base_hm") | $(fmt_pause "$bt_hp") / $(fmt_pause "$base_hp") | $(fmt_pause "$bt_rtp") / $(fmt_pause "$base_rt") | $(fmt_pause "$bt_p") / $(fmt_pause "$base_p") |")
  prows+=("| $threads × $depth | $(fmt_pause "$bt_dm") | $(fmt_pause "$bt_dp") | $(fmt_pause "$bt_hm") | $(fmt_pause "$bt_hp") | $(fmt_pause "$btf_dm") |")
  hrows+=("| $threads × $depth | real-time | $bt_rt | $btf_rt | $eui_rt | $gdb_rt | $none_rt |")
  hrows+=("| | normal | $bt_n | $btf_n | $eui_n | $gdb_n | $none_n |")
  hrows+=("| | normal less run delay | $bt_a | $btf_a | $eui_a | $gdb_a | $none_a |")
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
echo "Pauses measured by backtrail per thread (--stats), worst over all threads of all runs: pause = PTRACE_INTERRUPT → detach returned; held = thread stopped → detach returned."
echo
echo "| threads × depth | pause max | pause p99 | held max | held p99 | --freeze pause |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${prows[@]}"
echo
echo "Pauses seen by the target's heartbeats: the longest gap beyond the 200 µs sleep during each tool's runs (in parentheses: the run delay within that gap, time spent waiting for a CPU); no tool: two 1 s windows before the runs."
echo
echo "| threads × depth | heartbeat | backtrail | --freeze | eu-stack -i | gdb | no tool |"
echo "|---|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${hrows[@]}"
if [ -n "$base_bin" ]; then
  echo
  echo "This tree against BASE=$base_bin, taking turns run by run on the same target (default mode; wall median with CPU, and the pause figures as above, this tree / BASE)."
  echo
  echo "| threads × depth | backtrail dump | BASE | BASE ÷ this | pause max | pause p99 | held max | held p99 | real-time heartbeat | normal heartbeat |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${brows[@]}"
fi
