package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/backtrail/backtrail/dump"
	"github.com/backtrail/backtrail/report"
)

func init() {
	register(&command{
		name:  "dump",
		args:  "PID [--json] [--freeze] [--stop] [--stats] [--max-frames N] [--upload URL --key KEY]",
		short: "print every thread's stack of a live process, symbolized",
		long: `
Dump prints the stack of every thread of the live Linux process PID,
symbolized with inline frames, in the style of eu-stack -i: a
"TID <tid> (<name>):" header per thread, then "#N 0xADDR function
(file:line) [module]" per frame, with "(inlined)" after frames that were
inlined into the next one.

By default a thread blocked in the kernel (waiting on a lock, a sleep, a
read) is not stopped at all on x86-64: its stack pointer and program
counter come from /proc/PID/task/TID/syscall, its stack is copied, and the
copy is kept only if the thread was not scheduled in meanwhile (its
schedstat) and unwinds from those two registers. Every other thread is
stopped on its own (PTRACE_SEIZE and PTRACE_INTERRUPT), its registers and
stack copied, and released at once, so no thread pauses for more than a
fraction of a millisecond; unwinding and symbolization happen afterwards.
--stop stops every thread that way, for all its registers. --freeze stops
every thread first for a consistent snapshot, then releases them all. The process is never left
stopped: errors, SIGINT and SIGTERM detach it, and so does the kernel if
backtrail itself dies.

Symbols come from the binaries, their separate debug files (next to the
binary, by .gnu_debuglink, or under /usr/lib/debug/.build-id), or from a
debuginfod server (--debuginfod, or DEBUGINFOD_URLS). Downloaded debug
files, uncompressed copies of compressed ones and, for those up to 64 MB,
their symcaches are kept in $XDG_CACHE_HOME/backtrail/debug by build id,
so that only the first dump pays for them. For a Go program a note
explains that OS threads show the Go scheduler, not goroutines.

--stats prints, on stderr, how long the dump took and how long it kept
threads from running: per thread, from PTRACE_INTERRUPT until its detach
returned (the pause), and the part of that after the thread had stopped
(held), as maximum, 99th percentile and median; a thread read without
stopping it has a pause of zero. With --freeze every thread's pause is the
whole freeze. On a terminal the line is printed anyway.

--json prints the dump as a report of kind "dump" (docs/report-format.md);
--upload sends that report to a backtrail server, which makes it an issue.

Dumping needs ptrace rights over the process: the same user (and
kernel.yama.ptrace_scope 0), or CAP_SYS_PTRACE.

A dump of a process of 256 threads or more allocates megabytes.
` + hugePagesHelp + `
`,
		flags: func(fs *flag.FlagSet) {
			fs.Bool("json", false, "print the report JSON instead of text")
			fs.Bool("freeze", false, "stop all threads for a consistent snapshot")
			fs.Bool("stop", false, "stop each thread to read it, even one blocked in the kernel")
			fs.Bool("stats", false, "print the dump's time and each thread's pause to stderr")
			fs.Int("max-frames", 256, "maximum physical frames per thread")
			fs.String("upload", "", "server `URL` to send the report to")
			fs.String("key", "", "project `key` for --upload (default: BACKTRAIL_KEY)")
			fs.String("debuginfod", "", "debuginfod server `URLs`, space-separated (default: DEBUGINFOD_URLS)")
			fs.String("debug-file-directory", "", "`dir` to search for separate debug files")
		},
		run: runDump,
	})
}

// hugeDumpThreads is how many threads a process has at least for the
// dump command to put its heap in huge pages (see hugeHeap), in a piece
// of 32 KB a thread: a dump allocates 6–16 KB a thread, most of it in
// fresh pages. A dump of 1000 threads took 1,180 page faults instead of
// 1,960 and 85 ms instead of 99, one of 500 threads 74.6 ms instead of
// 83.8; at 250 threads the two were even, at 100 the collection cost 2 ms
// more than the faults it saved (bench/dump.md, twelfth round).
const hugeDumpThreads = 256

func runDump(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if len(args) != 1 {
		return usagef("need exactly one PID")
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil || pid <= 0 {
		return usagef("PID %q is not a positive number", args[0])
	}
	maxFrames, _ := strconv.Atoi(flagString(fs, "max-frames"))
	if maxFrames <= 0 {
		return usagef("--max-frames must be positive")
	}
	uploadURL := strings.TrimRight(flagString(fs, "upload"), "/")
	key := flagString(fs, "key")
	if key == "" {
		key = os.Getenv("BACKTRAIL_KEY")
	}
	if uploadURL != "" && key == "" {
		return usagef("--upload needs --key (or BACKTRAIL_KEY)")
	}
	opts := dump.Options{Freeze: flagString(fs, "freeze") == "true", Stop: flagString(fs, "stop") == "true", MaxFrames: maxFrames}
	urls := flagString(fs, "debuginfod")
	if urls == "" {
		urls = os.Getenv("DEBUGINFOD_URLS")
	}
	opts.Debuginfod = strings.Fields(urls)
	if d := flagString(fs, "debug-file-directory"); d != "" {
		opts.DebugDirs = []string{d}
	}
	// A dump lives for a fraction of a second and its data (copied
	// stacks, frames) stays live until it is printed: collecting
	// garbage at the default pace would cost a tenth of the run.
	setGCPercent(800)
	if n, err := dump.Threads(pid); err == nil && n >= hugeDumpThreads {
		hugeHeap(n * 32 << 10)
	}
	restore := ignoreChildSignals()
	p, err := dump.Dump(ctx, pid, opts)
	restore()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("dump of %d interrupted; the process was released", pid)
		}
		return err
	}
	// The report is built only when it is printed or sent: it copies
	// every frame, megabytes for a thousand deep stacks.
	asJSON := flagString(fs, "json") == "true"
	var r *report.Report
	if asJSON || uploadURL != "" {
		r = p.Report()
	}
	if asJSON {
		if err := report.Encode(e.stdout, r); err != nil {
			return err
		}
	} else {
		if err := p.WriteText(e.stdout); err != nil {
			return err
		}
	}
	if flagString(fs, "stats") == "true" || e.isTerminal && flagString(fs, "json") != "true" {
		fmt.Fprintln(e.stderr, dumpStats(p))
	}
	if uploadURL != "" {
		if err := postReport(ctx, uploadURL, key, r); err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		fmt.Fprintf(e.stderr, "uploaded dump %s to %s\n", r.EventID, uploadURL)
	}
	return nil
}

// postReport sends r to the server's report endpoint (docs/report-format.md
// §1).
func postReport(ctx context.Context, base, key string, r *report.Report) error {
	var body bytes.Buffer
	if err := report.Encode(&body, r); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/reports", &body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return httpError(resp)
	}
	return nil
}

// dumpStats summarizes a dump's cost for --stats: its wall time and the
// distribution of the threads' pauses.
func dumpStats(p *dump.Process) string {
	pause := make([]time.Duration, len(p.Threads))
	held := make([]time.Duration, len(p.Threads))
	peeked := 0
	for i, t := range p.Threads {
		pause[i], held[i] = t.Pause, t.Held
		if t.Peeked {
			peeked++
		}
	}
	slices.Sort(pause)
	slices.Sort(held)
	pct := func(d []time.Duration, q int) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[(len(d)-1)*q/100].Round(time.Microsecond)
	}
	return fmt.Sprintf("stats: %d threads in %v, %d read without stopping them; pause per thread: max %v p99 %v median %v; held stopped: max %v p99 %v median %v",
		len(p.Threads), p.Elapsed.Round(time.Microsecond), peeked,
		pct(pause, 100), pct(pause, 99), pct(pause, 50), pct(held, 100), pct(held, 99), pct(held, 50))
}
