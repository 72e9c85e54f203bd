// Command load is backtrail's load benchmark (issues 5 and 8): one client
// process drives `backtrail serve` over loopback with native crash reports
// whose frames are bare addresses, which the server symbolicates against a
// real debug file. It measures accepted and processed (symbolicated)
// events per second, accept latency, the servers' memory and CPU, can
// kill -9 and restart a server during the load, and at the end checks
// that every acknowledged event was stored and processed exactly once.
// It prints a markdown summary; README.md beside this file says what each
// number means.
//
// usage: go run ./bench/load [flags]
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type config struct {
	duration, warmup time.Duration
	concurrency      []int
	mode             string
	rate             float64
	servers          int
	db               string
	serveArgs        []string
	kill9            bool
	kills            int
	killAt           time.Duration
	issues           int
	variants         int
	frames           int
	threads          int
	systemFrames     int
	target           string
	bin              string
	work             string
	keep             bool
	verify           int
	record           string
	perf             time.Duration
	seed             uint64
	port             int
	json             bool
	drainTimeout     time.Duration
}

func parseFlags() *config {
	c := &config{}
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./bench/load [flags]\n\nLoad benchmark for `backtrail serve`; see bench/load/README.md.\n\n")
		fs.PrintDefaults()
	}
	conc := fs.String("concurrency", "16", "`list` of connection counts, comma-separated; each is a separate run on a fresh server (4,16,64 prints the growth table)")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "measured load `time` per run, after the warm-up")
	fs.DurationVar(&c.warmup, "warmup", 5*time.Second, "load `time` before the measurement window")
	fs.StringVar(&c.mode, "mode", "closed", "`closed`: each connection sends when its last event is answered; open: events at --rate whatever the answers")
	fs.Float64Var(&c.rate, "rate", 2000, "`events` per second in total, for --mode open")
	fs.IntVar(&c.servers, "servers", 1, "server `processes` (replicas) sharing the data directory and database; connections are spread over them")
	fs.StringVar(&c.db, "db", "", "database `URL` passed to every server as --db (default: SQLite in the data directory)")
	serveArgs := fs.String("serve-args", "", "further `arguments` for `backtrail serve`, space-separated")
	fs.BoolVar(&c.kill9, "kill9", false, "kill -9 a server during the load, restart it on the same data and port, and check that no acknowledged event was lost")
	fs.IntVar(&c.kills, "kills", 1, "`number` of kill -9 restarts with --kill9, at random moments in the middle half of the window (replicas in turn)")
	fs.DurationVar(&c.killAt, "kill-at", 0, "with --kill9 and --kills 1: kill at this `time` after the load starts instead of a random one")
	fs.IntVar(&c.issues, "issues", 100, "distinct crash stacks, so about this many issues")
	fs.IntVar(&c.variants, "variants", 8, "bodies per crash stack, differing in their outer frames")
	fs.IntVar(&c.frames, "frames", 30, "frames per thread")
	fs.IntVar(&c.threads, "threads", 1, "threads per event, each with --frames frames")
	fs.IntVar(&c.systemFrames, "system-frames", 0, "outermost `frames` of each thread placed in libc, which has no debug file on the server")
	fs.StringVar(&c.target, "target", "", "ELF `file` with DWARF to crash in (default: build testdata/src/cpp with g++ -O2 -g)")
	fs.StringVar(&c.bin, "bin", "", "backtrail `binary` to serve with (default: go build ./cmd/backtrail)")
	fs.StringVar(&c.work, "work", "", "work `directory` (default: a new temporary one, removed at the end unless --keep)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory: data, server logs, perf recordings")
	verify := fs.String("verify", "", "acknowledged ids to look up one by one after the run: a `number` or all (default: all with --kill9, else 2000)")
	fs.StringVar(&c.record, "record", "", "append the markdown summary to this `file` (e.g. bench/load.md)")
	fs.DurationVar(&c.perf, "perf", 0, "profile the first server with perf record for this `time` in the window (0: no profile)")
	fs.Uint64Var(&c.seed, "seed", 0, "random `seed` (default: from the clock; printed)")
	fs.IntVar(&c.port, "port", 0, "first server `port` (default: free ports)")
	fs.BoolVar(&c.json, "json", false, "print the results as JSON instead of markdown")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", 10*time.Minute, "how long to wait for the queue to drain after the load")
	fs.Parse(os.Args[1:])
	if fs.NArg() > 0 {
		usage(fs, "unexpected argument %q", fs.Arg(0))
	}
	for _, s := range strings.Split(*conc, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			usage(fs, "--concurrency: %q is not a positive number", s)
		}
		c.concurrency = append(c.concurrency, k)
	}
	c.serveArgs = strings.Fields(*serveArgs)
	if c.db != "" {
		c.serveArgs = append(c.serveArgs, "--db", c.db)
	}
	switch {
	case c.mode != "closed" && c.mode != "open":
		usage(fs, "--mode must be closed or open")
	case c.mode == "open" && c.rate <= 0:
		usage(fs, "--rate must be positive")
	case c.servers < 1:
		usage(fs, "--servers must be at least 1")
	case c.duration <= 0 || c.warmup < 0:
		usage(fs, "--duration must be positive and --warmup not negative")
	case c.kill9 && c.kills < 1:
		usage(fs, "--kills must be at least 1")
	case c.killAt > 0 && (!c.kill9 || c.kills != 1):
		usage(fs, "--kill-at needs --kill9 and --kills 1")
	case c.killAt > 0 && c.killAt >= c.warmup+c.duration:
		usage(fs, "--kill-at must fall within the load")
	case c.perf > 0 && c.kill9:
		usage(fs, "--perf follows one server process; do not combine it with --kill9")
	case c.frames < 2 || c.threads < 1 || c.issues < 1 || c.variants < 1 || c.systemFrames >= c.frames:
		usage(fs, "--frames ≥ 2, --threads, --issues and --variants ≥ 1, --system-frames < --frames")
	}
	switch *verify {
	case "":
		c.verify = 2000
		if c.kill9 {
			c.verify = -1
		}
	case "all":
		c.verify = -1
	default:
		n, err := strconv.Atoi(*verify)
		if err != nil || n < 0 {
			usage(fs, "--verify: %q is neither a number nor all", *verify)
		}
		c.verify = n
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	if c.perf > 0 {
		if _, err := exec.LookPath("perf"); err != nil {
			usage(fs, "--perf needs perf in PATH")
		}
	}
	return c
}

func usage(fs *flag.FlagSet, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "load: "+format+"\n", args...)
	fs.Usage()
	os.Exit(2)
}

func main() {
	cfg := parseFlags()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lost, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "load: %v\n", err)
		os.Exit(1)
	}
	if lost > 0 {
		fmt.Fprintf(os.Stderr, "load: %d acknowledged events lost or unprocessed\n", lost)
		os.Exit(1)
	}
}

// environment is what every run of one invocation shares.
type environment struct {
	root    string // module root
	bin     string
	command string
	machine string
	commit  string
}

func run(ctx context.Context, cfg *config) (lost int, err error) {
	env := &environment{command: commandLine()}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == os.DevNull {
		return 0, errors.New("run from inside the backtrail module (go env GOMOD is empty)")
	}
	env.root = filepath.Dir(strings.TrimSpace(string(out)))
	work := cfg.work
	if work == "" {
		if work, err = os.MkdirTemp("", "backtrail-load-"); err != nil {
			return 0, err
		}
		if !cfg.keep {
			defer os.RemoveAll(work)
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return 0, err
	}
	work, _ = filepath.Abs(work)
	logf("work directory %s, seed %d", work, cfg.seed)

	env.bin = cfg.bin
	if env.bin == "" {
		env.bin = filepath.Join(work, "backtrail")
		logf("building backtrail")
		cmd := exec.Command("go", "build", "-o", env.bin, "./cmd/backtrail")
		cmd.Dir = env.root
		if b, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build ./cmd/backtrail: %v\n%s", err, b)
		}
	}
	tpath := cfg.target
	if tpath == "" {
		logf("building the C++ fixture (g++ -O2 -g)")
		if tpath, err = buildFixture(env.root, work); err != nil {
			return 0, err
		}
	}
	tgt, err := readTarget(tpath)
	if err != nil {
		return 0, err
	}
	env.machine, env.commit = machineInfo(env.root)
	if cfg.bin != "" {
		env.commit = fmt.Sprintf("binary %s (--bin, sha256 %s)", cfg.bin, fileHash(cfg.bin))
	}

	var results []*result
	for _, k := range cfg.concurrency {
		r, err := runOne(ctx, cfg, env, tgt, k, filepath.Join(work, fmt.Sprintf("run-%s-k%d", cfg.mode, k)))
		if err != nil {
			return 0, err
		}
		results = append(results, r)
		if r.Verify != nil {
			lost += r.Verify.Lost + r.Verify.Unprocessed + r.Verify.Failed
		}
		if !cfg.json {
			fmt.Print(r.markdown())
		}
	}
	var md strings.Builder
	for _, r := range results {
		md.WriteString(r.markdown())
	}
	if len(results) > 1 {
		g := growthTable(results)
		md.WriteString(g)
		if !cfg.json {
			fmt.Print(g)
		}
	}
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return lost, err
		}
	}
	if cfg.record != "" {
		f, err := os.OpenFile(cfg.record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return lost, err
		}
		_, err = f.WriteString(md.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return lost, err
		}
		logf("appended the summary to %s", cfg.record)
	}
	return lost, nil
}

// runOne is one run: fresh servers and data, priming, load, drain,
// verification.
func runOne(ctx context.Context, cfg *config, env *environment, tgt *target, k int, dir string) (*result, error) {
	res := &result{When: time.Now().UTC(), Command: env.command, Machine: env.machine, Commit: env.commit, LoadBefore: loadAvg(),
		Target: tgt.describe(), Mode: cfg.mode, K: k, Servers: cfg.servers, ServeArgs: strings.Join(cfg.serveArgs, " "),
		Duration: cfg.duration, Warmup: cfg.warmup, Seed: cfg.seed, Frames: cfg.frames, Threads: cfg.threads}
	if cfg.mode == "open" {
		res.Rate = cfg.rate
	}
	res.DB = "SQLite (data directory)"
	if cfg.db != "" {
		res.DB = redactURL(cfg.db)
	}
	args := cfg.serveArgs
	var pg *pgRun
	if isPostgres(cfg.db) {
		var err error
		if pg, err = newPGRun(ctx, cfg.db, fmt.Sprintf("%s_k%d_%d", cfg.mode, k, time.Now().Unix())); err != nil {
			return nil, err
		}
		defer pg.close(context.WithoutCancel(ctx), cfg.keep)
		args = append(args[:len(args):len(args)], "--db", pg.url) // the later --db wins
	}
	cl, err := newCluster(env.bin, dir, cfg.servers, cfg.port, args)
	if err != nil {
		return nil, err
	}
	defer cl.stopAll()
	for _, s := range cl.servers {
		if err := cl.start(ctx, s); err != nil {
			return nil, err
		}
	}
	if cl.key, err = cl.projectKey(ctx); err != nil {
		return nil, err
	}
	if tgt.debugID, tgt.codeID, err = cl.upload(ctx, tgt.path); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.seed, 1))
	bodies, err := tgt.bodies(rng, stackOptions{templates: cfg.issues, variants: cfg.variants, frames: cfg.frames, fixed: 16,
		threads: cfg.threads, systemFrames: cfg.systemFrames})
	if err != nil {
		return nil, err
	}
	for _, b := range bodies {
		res.BodyBytes += len(b.data)
	}
	res.BodyBytes /= len(bodies)
	var urls []string
	for _, s := range cl.servers {
		urls = append(urls, "http://"+s.addr)
	}
	d := newDriver(cfg.mode, cfg.rate, k, urls, cl.key, bodies, cfg.seed, cfg.warmup+cfg.duration)

	// Prime: one event, processed before the clock starts, so that the
	// symcache is built (and its build time is not part of the load).
	logf("run %s K=%d: priming", cfg.mode, k)
	primeStart := time.Now()
	d.workers[0].event(ctx, time.Now())
	if d.acked.Load() != 1 {
		return nil, fmt.Errorf("priming event not acknowledged: %s", d.workers[0].firstErr)
	}
	if err := waitDrained(ctx, cl, 2*time.Minute); err != nil {
		return nil, fmt.Errorf("priming: %w", err)
	}
	res.PrimeTime = time.Since(primeStart)
	d.acked.Store(0)
	w0 := d.workers[0]
	w0.ids, w0.sent, w0.win, w0.lat, w0.e2e = nil, 0, 0, nil, nil

	if pg != nil {
		if err := pg.begin(ctx); err != nil {
			return nil, err
		}
	}
	logf("run %s K=%d: %s warm-up + %s load", cfg.mode, k, cfg.warmup, cfg.duration)
	d.setClock(cfg.warmup, cfg.duration)
	smp := newSampler(cl, d)
	smp.start(ctx, d.t0)
	kills := make(chan []killRecord, 1)
	go func() { kills <- killLoop(ctx, cfg, cl, d, rng) }()
	perfDone := make(chan error, 1)
	perfFile := filepath.Join(dir, "perf.data")
	if cfg.perf > 0 {
		go func() {
			at := d.t0.Add(cfg.warmup + time.Second)
			dur := min(cfg.perf, cfg.duration-2*time.Second)
			time.Sleep(time.Until(at))
			perfDone <- perfRecord(ctx, cl.servers[0].pid.Load(), dur, perfFile, filepath.Join(dir, "perf-record.log"))
		}()
	}
	d.run(ctx)
	loadEnd := time.Now()
	res.Kills = <-kills
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	d.closeIdle()

	logf("run %s K=%d: load over (%d acknowledged); draining", cfg.mode, k, d.acked.Load())
	backlog, _ := cl.anyPending(ctx)
	res.BacklogAtEnd = backlog
	err = waitDrained(ctx, cl, cfg.drainTimeout)
	drained := time.Now()
	res.Drained = err == nil
	res.DrainTime = drained.Sub(loadEnd)
	smp.close()
	res.LoadAfter = loadAvg()
	res.DBBytes = cl.dataSize()
	if pg != nil && res.Drained {
		// Backends report their counters to pg_stat_database at most
		// every 10 s when idle.
		time.Sleep(11 * time.Second)
		if res.PG, err = pg.cost(ctx, d.acked.Load()+1, drained.Sub(d.t0)); err != nil {
			return nil, err
		}
		res.DBBytes = int64(res.PG.SizeBytes * float64(d.acked.Load()+1))
	}
	res.Load = d.stats()
	res.compute(d, smp, loadEnd, drained)

	if cfg.perf > 0 {
		if err := <-perfDone; err != nil {
			res.ProfileError = err.Error()
		} else if res.Profile, err = perfAnalyze(ctx, perfFile); err != nil {
			res.ProfileError = err.Error()
		}
		res.ProfileTime = min(cfg.perf, cfg.duration-2*time.Second)
	}

	if res.Drained {
		logf("run %s K=%d: verifying", cfg.mode, k)
		if res.Verify, err = verify(ctx, cl, d, res.Load.ids, 1, cfg.verify, cfg.seed); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}
	return res, nil
}

// killLoop kills replicas with SIGKILL at random moments in the middle
// half of the window (or at --kill-at), restarting each at once.
func killLoop(ctx context.Context, cfg *config, cl *cluster, d *driver, rng *rand.Rand) []killRecord {
	if !cfg.kill9 {
		return nil
	}
	var out []killRecord
	for j := range cfg.kills {
		lo := cfg.warmup + cfg.duration/4 + time.Duration(float64(cfg.duration/2)*float64(j)/float64(cfg.kills))
		span := time.Duration(float64(cfg.duration/2) / float64(cfg.kills))
		at := lo + time.Duration(rng.Int64N(int64(span)))
		if cfg.killAt > 0 {
			at = cfg.killAt
		}
		select {
		case <-time.After(time.Until(d.t0.Add(at))):
		case <-ctx.Done():
			return out
		}
		s := cl.servers[j%len(cl.servers)]
		kr := killRecord{Server: s.i, At: time.Since(d.t0), AckedBefore: d.acked.Load()}
		start := time.Now()
		s.kill9()
		logf("killed server %d with SIGKILL at %.1f s", s.i, kr.At.Seconds())
		if err := cl.start(ctx, s); err != nil {
			kr.Error = err.Error()
			out = append(out, kr)
			return out
		}
		kr.Downtime = time.Since(start)
		out = append(out, kr)
	}
	return out
}

type killRecord struct {
	Server      int
	At          time.Duration // since the load started
	Downtime    time.Duration // from the kill until the restarted server answered /healthz
	AckedBefore int64
	Error       string `json:",omitempty"`
}

// waitDrained polls /healthz until nothing is pending.
func waitDrained(ctx context.Context, cl *cluster, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, err := cl.anyPending(ctx)
		if err == nil && n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err
			}
			return fmt.Errorf("%d events still pending after %s", n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "load: "+format+"\n", args...)
}

// commandLine is how this invocation was spelled, as a go run command.
func commandLine() string {
	parts := []string{"go", "run", "./bench/load"}
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// machineInfo describes the machine and the commit the server was built
// from.
func machineInfo(root string) (machine, commit string) {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	machine = fmt.Sprintf("%s, %d CPUs, Linux %s, %s %s/%s", model, runtime.NumCPU(), strings.TrimSpace(string(kernel)),
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = root
	if b, err := cmd.Output(); err == nil {
		commit = "commit " + strings.TrimSpace(string(b))
		cmd = exec.Command("git", "status", "--porcelain", "--untracked-files=no")
		cmd.Dir = root
		if b, err := cmd.Output(); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			commit += " + uncommitted changes"
		}
	}
	return machine, commit
}

func fileHash(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// redactURL hides a password in a database URL.
func redactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.IndexByte(u[i+3:], '@'); j >= 0 {
			if k := strings.IndexByte(u[i+3:i+3+j], ':'); k >= 0 {
				return u[:i+3+k+1] + "xxx" + u[i+3+j:]
			}
		}
	}
	return u
}
