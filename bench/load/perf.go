package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// The server has no pprof endpoint, so the benchmark profiles it from
// outside: `perf record -g` samples the server process's threads with
// frame-pointer call chains (Go keeps frame pointers, and modernc.org's
// SQLite is Go code too), and the samples are attributed twice — to the
// pipeline stage that the stack is in (the outermost known function) and
// to the kind of work being done (the innermost frame that says, skipping
// neutral helpers such as memmove and map access).

// perfRecord samples pid at 499 Hz for d into file and returns when done.
func perfRecord(ctx context.Context, pid int64, d time.Duration, file, log string) error {
	secs := fmt.Sprintf("%.1f", d.Seconds())
	cmd := exec.CommandContext(ctx, "perf", "record", "-F", "499", "-g", "-p", fmt.Sprint(pid), "-o", file, "--", "sleep", secs)
	out, err := cmd.CombinedOutput()
	os.WriteFile(log, out, 0o644)
	if err != nil {
		return fmt.Errorf("perf record: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// stages are matched in order against every frame of a sample; the first
// stage with a matching frame takes the sample.
var stages = []struct {
	name  string
	match []string
}{
	{"ingest: commit (batcher → store.Accept: compression + INSERT + COMMIT)", []string{"store.(*DB).Accept"}},
	{"ingest: HTTP handler (auth, read body, detect, split)", []string{"api.(*Server).postReport", "api.(*batcher)"}},
	{"process: claim (UPDATE … RETURNING, decompression)", []string{"store.(*DB).Claim"}},
	{"process: complete (report encode, compression, issue/event SQL, COMMIT)", []string{"store.(*DB).Complete"}},
	{"process: decode report JSON", []string{"server/ingest.Decode"}},
	{"process: symbolicate", []string{"process.(*Processor).symbolicate", "process.(*symbolicator)", "process.(*Symbols)"}},
	{"process: in-app marking + grouping", []string{"process.MarkInApp", "server/group."}},
	{"process: other", []string{"process.(*Processor)"}},
	{"healthz + read API", []string{"api.(*Server)."}},
	{"net/http server (parse request, write answer, connections)", []string{"net/http."}},
	{"store: WAL checkpoints (SQLite, beside the writer)", []string{"store.(*DB).checkpoints"}},
	{"GC background workers", []string{"runtime.gcBgMarkWorker"}},
	{"runtime: scheduler, timers, other", nil},
}

// kinds are matched against frames from the innermost out; the first
// frame that matches a kind gives the sample's kind. Frames of neutral
// helpers are skipped.
var kinds = []struct {
	name string
	pre  []string // symbol prefixes or substrings ("~x")
}{
	{"SQLite engine (modernc.org)", []string{"modernc.org/"}},
	{"database/sql", []string{"database/sql"}},
	{"compression (S2, zstd)", []string{"github.com/klauspost/compress"}},
	{"JSON", []string{"encoding/json."}},
	{"symbolication", []string{"github.com/backtrail/backtrail/symbolize", "github.com/backtrail/backtrail/symcache", "github.com/backtrail/backtrail/demangle", "~process.(*Symbols)"}},
	{"regexp", []string{"regexp."}},
	{"hashing", []string{"crypto/"}},
	{"allocation + GC", []string{"runtime.mallocgc", "runtime.gc", "runtime.scan", "runtime.greyobject", "runtime.(*mspan)", "runtime.(*mcache)",
		"runtime.(*mcentral)", "runtime.(*mheap)", "runtime.(*gcWork)", "runtime.(*gcBits)", "runtime.markBits", "runtime.findObject", "runtime.wbBuf",
		"runtime.bulkBarrier", "runtime.newobject", "runtime.makeslice", "runtime.growslice", "runtime.heapBits", "runtime.typePointers",
		"runtime.markroot", "runtime.sweepone", "runtime.(*sweepLocked)", "runtime.nextFreeFast", "runtime.deductAssistCredit",
		"runtime.memclrNoHeapPointersChunked", "runtime.(*activeSweep)", "runtime.wbBufFlush", "runtime.gcWriteBarrier", "runtime.(*mspan)"}},
	{"HTTP, net, syscalls", []string{"net/http.", "net.", "internal/poll.", "bufio.", "syscall.", "internal/runtime/syscall", "net/textproto.", "mime."}},
	{"kernel", []string{"[kernel]"}},
	{"runtime: scheduler, futex, timers", []string{"runtime."}},
}

var neutral = []string{"runtime.memmove", "runtime.memclrNoHeapPointers", "runtime.memequal", "runtime.cmpbody", "runtime.mapaccess",
	"runtime.mapassign", "runtime.mapdelete", "internal/runtime/maps.", "runtime.aeshash", "runtime.strhash", "runtime.concatstring",
	"runtime.slicebytetostring", "runtime.stringtoslicebyte", "runtime.rawstring", "runtime.rawbyteslice", "runtime.convT", "runtime.assertE2I",
	"runtime.typeAssert", "runtime.getitab", "runtime.duffcopy", "runtime.duffzero", "runtime.ifaceeq", "runtime.efaceeq", "runtime.nilinterhash",
	"runtime.interhash", "runtime.typehash", "internal/bytealg.", "strings.", "strconv.", "bytes.", "unicode/", "sync.", "sync/atomic.",
	"internal/sync.", "sort.", "slices.", "reflect.", "fmt.", "internal/fmtsort.", "math/", "encoding/binary.", "encoding/hex.", "time.",
	"container/", "errors.", "io.", "runtime.deferreturn", "runtime.morestack", "runtime.newstack", "runtime.copystack", "runtime.panicIndex",
	"runtime.growWork", "runtime.(*itabTableType)", "runtime.procyield", "runtime.lock", "runtime.unlock", "runtime.memhash"}

type perfFrame struct{ sym, dso string }

// profile is the attribution of a perf recording.
type profile struct {
	Samples int
	Stages  []string
	Kinds   []string
	Matrix  [][]int       // [stage][kind] samples
	Top     []symbolShare // innermost frames by samples
	// Own is the innermost backtrail function of each sample (outside
	// the generic helpers of internal/): which of the project's own
	// functions the time is spent under.
	Own []symbolShare
}

type symbolShare struct {
	Sym     string
	Samples int
}

// perfAnalyze reads a recording with `perf script` and attributes its
// samples.
func perfAnalyze(ctx context.Context, file string) (*profile, error) {
	cmd := exec.CommandContext(ctx, "perf", "script", "-i", file, "-F", "comm,tid,ip,sym,dso")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &profile{}
	for _, s := range stages {
		p.Stages = append(p.Stages, s.name)
		p.Matrix = append(p.Matrix, make([]int, len(kinds)+1))
	}
	for _, k := range kinds {
		p.Kinds = append(p.Kinds, k.name)
	}
	p.Kinds = append(p.Kinds, "other Go code")
	top, own := map[string]int{}, map[string]int{}
	var stack []perfFrame
	flush := func() {
		if len(stack) == 0 {
			return
		}
		p.Samples++
		p.Matrix[stageOf(stack)][kindOf(stack)]++
		leaf := stack[0].sym
		if stack[0].dso == "[kernel]" {
			leaf += " [kernel]"
		}
		top[leaf]++
		o := "(none: runtime, net/http, GC)"
		for _, f := range stack {
			if strings.HasPrefix(f.sym, "github.com/backtrail/backtrail/") && !strings.HasPrefix(f.sym, "github.com/backtrail/backtrail/internal/") {
				o = strings.TrimPrefix(f.sym, "github.com/backtrail/backtrail/")
				break
			}
		}
		own[o]++
		stack = stack[:0]
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || (line[0] != '\t' && line[0] != ' ') {
			flush()
			continue
		}
		f := strings.TrimSpace(line)
		_, rest, _ := strings.Cut(f, " ")
		var fr perfFrame
		if j := strings.LastIndex(rest, " ("); j >= 0 {
			fr.dso = strings.TrimSuffix(rest[j+2:], ")")
			rest = rest[:j]
		}
		if strings.Contains(fr.dso, "kernel") || strings.HasPrefix(fr.dso, "[") {
			fr.dso = "[kernel]"
		}
		fr.sym = rest
		stack = append(stack, fr)
	}
	flush()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	p.Top, p.Own = ranked(top, 20), ranked(own, 25)
	return p, nil
}

func ranked(m map[string]int, n int) []symbolShare {
	var out []symbolShare
	for s, k := range m {
		out = append(out, symbolShare{s, k})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Samples != out[j].Samples {
			return out[i].Samples > out[j].Samples
		}
		return out[i].Sym < out[j].Sym
	})
	return out[:min(len(out), n)]
}

func stageOf(stack []perfFrame) int {
	for i, s := range stages {
		if s.match == nil {
			return i
		}
		for _, f := range stack {
			for _, m := range s.match {
				if strings.Contains(f.sym, m) {
					return i
				}
			}
		}
	}
	return len(stages) - 1
}

func kindOf(stack []perfFrame) int {
	for _, f := range stack {
		if f.dso == "[kernel]" {
			return kindIndex("kernel")
		}
		if hasAnyPrefix(f.sym, neutral) {
			continue
		}
		for i, k := range kinds {
			for _, p := range k.pre {
				if strings.HasPrefix(p, "~") && strings.Contains(f.sym, p[1:]) || strings.HasPrefix(f.sym, p) {
					return i
				}
			}
		}
		return len(kinds) // the first non-neutral frame is other Go code
	}
	return len(kinds)
}

func kindIndex(name string) int {
	for i, k := range kinds {
		if k.name == name {
			return i
		}
	}
	panic(name)
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
