#!/usr/bin/env bash
# Builds Go toolchain commands with uncompressed DWARF, a second source of
# big real inputs for the symcache benchmark (Go DWARF: one unit per
# package, no types in inlined frames, pclntab beside it).
#
# usage: bench/corpus/go.sh OUTDIR [cmd...]   (default: compile go link vet pprof trace)
#
# Writes OUTDIR/<cmd> for each command and prints the paths, one a line.
# A binary is rebuilt only when the Go version changed.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: bench/corpus/go.sh OUTDIR [cmd...]" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
cmds=("$@")
[ ${#cmds[@]} -eq 0 ] && cmds=(compile go link vet pprof trace)

version=$(go version)
for c in "${cmds[@]}"; do
  bin=$out/$c
  if [ ! -f "$bin" ] || [ "$(cat "$bin.goversion" 2>/dev/null)" != "$version" ]; then
    echo "building cmd/$c ($version)..." >&2
    nice -n 10 go build -ldflags=-compressdwarf=false -o "$bin" "cmd/$c"
    echo "$version" > "$bin.goversion"
  fi
  echo "$bin"
done
