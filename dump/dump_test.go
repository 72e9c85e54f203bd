//go:build linux && (amd64 || arm64)

package dump_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backtrail/backtrail/dump"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
)

// euFrame is one line of eu-stack -i -m output.
type euFrame struct {
	addr   uint64
	name   string
	module string
}

// euStack runs eu-stack -p PID -i -m and returns the frames per thread.
func euStack(t *testing.T, pid int) map[int][]euFrame {
	t.Helper()
	cmd := exec.Command(testenv.Tool(t, "eu-stack"), "-p", strconv.Itoa(pid), "-i", "-m")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("eu-stack: %v\n%s", err, stderr.Bytes())
	}
	threads := map[int][]euFrame{}
	tid := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "TID "); ok {
			tid, _ = strconv.Atoi(strings.TrimSuffix(s, ":"))
			continue
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		addr, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err != nil {
			continue
		}
		rest := strings.Join(f[2:], " ")
		name, mod := rest, ""
		if i := strings.LastIndex(" "+rest, " - "); i >= 0 {
			name, mod = strings.TrimSpace((" " + rest)[:i]), strings.TrimSpace((" " + rest)[i+3:])
		}
		threads[tid] = append(threads[tid], euFrame{addr, name, mod})
	}
	return threads
}

// physical returns the PCs of the physical frames, innermost first.
func physical(fs []dump.Frame) []uint64 {
	var pcs []uint64
	for i, f := range fs {
		if i == 0 || f.Index != fs[i-1].Index {
			pcs = append(pcs, f.PC)
		}
	}
	return pcs
}

// compareEuStack checks every thread of d against eu-stack: the same
// physical frames (addresses), and in the target executable the same
// function for each physical frame, with eu-stack's inline frames a
// subsequence of ours, comparing C++ names without parameter lists (eu-stack
// omits those of static functions). Known differences, by design: eu-stack names libc's
// functions by their ELF symbols (__GI___libc_read) where we use DWARF
// (__read), so outside the target only addresses are compared; and eu-stack
// 0.188 misses some inline frames that clang describes (see
// TestInlineFramesLLVM, which checks ours against llvm-symbolizer).
func compareEuStack(t *testing.T, d *dump.Process, eu map[int][]euFrame, exe string) {
	t.Helper()
	base := filepath.Base(exe)
	for _, th := range d.Threads {
		ef, ok := eu[th.TID]
		if !ok {
			t.Errorf("thread %d (%s): not in eu-stack's output", th.TID, th.Name)
			continue
		}
		var euPCs []uint64
		for i, f := range ef {
			if i == 0 || f.addr != ef[i-1].addr {
				euPCs = append(euPCs, f.addr)
			}
		}
		ours := physical(th.Frames)
		if !slices.Equal(ours, euPCs) {
			t.Errorf("thread %d (%s): physical frames differ\nours     %x\neu-stack %x\n%s", th.TID, th.Name, ours, euPCs, text(th))
			continue
		}
		for _, pc := range ours {
			var euNames, ourNames []string
			for _, f := range ef {
				if f.addr == pc && filepath.Base(f.module) == base {
					euNames = append(euNames, bare(f.name))
				}
			}
			for _, f := range th.Frames {
				if f.PC == pc && f.Module == base {
					ourNames = append(ourNames, bare(f.Function))
				}
			}
			if len(euNames) == 0 {
				continue
			}
			if len(ourNames) == 0 || ourNames[len(ourNames)-1] != euNames[len(euNames)-1] || !subsequence(euNames, ourNames) {
				t.Errorf("thread %d (%s) pc %#x: functions %q, eu-stack %q", th.TID, th.Name, pc, ourNames, euNames)
			}
		}
	}
}

// bare drops a C++ parameter list: eu-stack prints functions with
// internal linkage (static worker_main) without theirs.
func bare(name string) string {
	if i := strings.IndexByte(name, '('); i > 0 {
		return name[:i]
	}
	return name
}

func subsequence(sub, of []string) bool {
	i := 0
	for _, s := range of {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

func text(th dump.Thread) string {
	var b strings.Builder
	(&dump.Process{Threads: []dump.Thread{th}}).WriteText(&b)
	return b.String()
}

// targetFrames returns the functions of th's frames in the target, without
// C++ parameter lists, and whether each was inlined.
func targetFrames(th dump.Thread, exe string) (names []string, inlined []bool) {
	for _, f := range th.Frames {
		if f.Module == filepath.Base(exe) {
			names = append(names, bare(f.Function))
			inlined = append(inlined, f.Inlined)
		}
	}
	return names, inlined
}

// wantWorker is the stack of worker i of a target run with -d depth -v,
// innermost first: park_here, then depth + i%4 level functions, then
// worker_main.
func wantWorker(i, depth int) []string {
	n := depth + i%4
	levels := []string{"level_a", "level_b", "level_c", "level_d"}
	want := []string{"park_here"}
	for k := n - 1; k >= 0; k-- {
		want = append(want, levels[k%4])
	}
	return append(want, "worker_main")
}

// TestDump dumps the target, built six ways (gcc and clang, -O0 and -O2,
// with and without frame pointers), in the default mode and with
// --freeze, and checks each thread: workers parked at known depths, with
// park_here inlined at -O2; the thread blocked in a signal handler, whose
// interrupted frame follows __restore_rt; agreement with eu-stack -i on
// every thread; and the target running normally afterwards.
func TestDump(t *testing.T) {
	testenv.Tool(t, "eu-stack")
	const depth = 6
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			exe := buildTarget(t, v)
			tg := start(t, exe, "-t", "4", "-d", strconv.Itoa(depth), "-v", "-s")
			for _, opts := range []dump.Options{{}, {Stop: true}, {Freeze: true}} {
				mode := fmt.Sprintf("stop=%v freeze=%v", opts.Stop, opts.Freeze)
				d, err := dump.Dump(context.Background(), tg.pid, opts)
				if err != nil {
					t.Fatalf("Dump(%s): %v", mode, err)
				}
				// eu-stack right away: the main thread's call site of
				// fgets changes once it reads a command.
				eu := euStack(t, tg.pid)
				tg.checkRunning()
				if len(d.Threads) != 6 {
					t.Errorf("%s: %d threads, want 6 (main, 4 workers, in-handler)", mode, len(d.Threads))
				}
				// The listing's order, whichever CPUs the threads last
				// ran on (the tracer takes them CPU by CPU).
				if d.Threads[0].TID != tg.pid {
					t.Errorf("first thread %d, want the main thread %d", d.Threads[0].TID, tg.pid)
				}
				if !slices.IsSortedFunc(d.Threads[1:], func(a, b dump.Thread) int { return a.TID - b.TID }) {
					t.Errorf("threads not in TID order: %v", tids(d))
				}
				checkWorkers(t, d, exe, v, depth)
				checkSignalThread(t, d, exe)
				checkPauses(t, d, opts.Freeze)
				checkPeeked(t, d, v, opts)
				compareEuStack(t, d, eu, exe)
				tg.checkRunning()
			}
			if a := tg.ask("release"); a != "released 5" {
				t.Errorf("release: %q", a)
			}
		})
	}
}

func tids(d *dump.Process) []int {
	var out []int
	for _, th := range d.Threads {
		out = append(out, th.TID)
	}
	return out
}

func checkWorkers(t *testing.T, d *dump.Process, exe string, v variant, depth int) {
	t.Helper()
	for _, th := range d.Threads {
		id, ok := strings.CutPrefix(th.Name, "worker-")
		if !ok {
			continue
		}
		i, _ := strconv.Atoi(id)
		names, inl := targetFrames(th, exe)
		if want := wantWorker(i, depth); !slices.Equal(names, want) {
			t.Errorf("%s: frames %q\nwant %q\n%s", th.Name, names, want, text(th))
			continue
		}
		if wantInl := v.opt == "-O2"; inl[0] != wantInl {
			t.Errorf("%s: park_here inlined=%v, want %v", th.Name, inl[0], wantInl)
		}
		if th.Truncated || th.Stop != "" {
			t.Errorf("%s: truncated=%v stop=%q", th.Name, th.Truncated, th.Stop)
		}
		if last := th.Frames[len(th.Frames)-1].Function; last != "clone3" && last != "__clone3" {
			t.Errorf("%s: outermost frame %q, want clone3", th.Name, last)
		}
	}
}

// checkPauses checks that every thread's pause was measured: the held
// part within the pause, and with freeze the pause of the whole freeze;
// a thread read without stopping it has none.
func checkPauses(t *testing.T, d *dump.Process, freeze bool) {
	t.Helper()
	for _, th := range d.Threads {
		if th.Peeked {
			if th.Pause != 0 || th.Held != 0 {
				t.Errorf("thread %d, read without stopping it: pause %v, held %v", th.TID, th.Pause, th.Held)
			}
			continue
		}
		if th.Held <= 0 || th.Held > th.Pause || th.Pause > d.MaxPause || freeze && th.Pause != d.MaxPause {
			t.Errorf("freeze=%v: thread %d: pause %v, held %v; the dump's longest pause %v", freeze, th.TID, th.Pause, th.Held, d.MaxPause)
		}
	}
}

// checkPeeked checks which threads were read without stopping them. All
// the target's threads are blocked in system calls (read, fgets), so by
// default on x86-64 the workers of a build without frame pointers are:
// their frames' rules start from the stack pointer. So is the thread
// blocked in a signal handler, whose walk goes from its alternate signal
// stack, which the dump copies, to its own stack, read within the peek. A build with
// frame pointers needs the frame pointer, which a peek does not read:
// its threads are stopped, and their frames still match eu-stack's
// (compareEuStack). A peeked thread's registers are those /proc shows.
func checkPeeked(t *testing.T, d *dump.Process, v variant, opts dump.Options) {
	t.Helper()
	want := runtime.GOARCH == "amd64" && !opts.Stop && !opts.Freeze
	for _, th := range d.Threads {
		if th.Peeked && !want {
			t.Errorf("stop=%v freeze=%v: thread %d read without stopping it", opts.Stop, opts.Freeze, th.TID)
		}
		if !th.Peeked {
			if want && !v.fp && (strings.HasPrefix(th.Name, "worker-") || th.Name == "in-handler") {
				t.Errorf("%s: stopped, want it read without stopping it\n%s", th.Name, text(th))
			}
			continue
		}
		for name := range th.Registers {
			if !slices.Contains([]string{"rsp", "rip", "rdi", "rsi", "rdx", "r10", "r8", "r9"}, name) {
				t.Errorf("thread %d, read without stopping it: register %s, which /proc does not show", th.TID, name)
			}
		}
		if th.Registers["rsp"] == 0 || th.Registers["rip"] != th.Frames[0].PC {
			t.Errorf("thread %d: rsp %#x, rip %#x; frame 0 at %#x", th.TID, th.Registers["rsp"], th.Registers["rip"], th.Frames[0].PC)
		}
	}
}

func checkSignalThread(t *testing.T, d *dump.Process, exe string) {
	t.Helper()
	for _, th := range d.Threads {
		if th.Name != "in-handler" {
			continue
		}
		names, _ := targetFrames(th, exe)
		if len(names) < 2 || names[0] != "handler_park" || names[len(names)-1] != "signal_main" {
			t.Errorf("in-handler: target frames %q, want handler_park … signal_main\n%s", names, text(th))
		}
		k := slices.IndexFunc(th.Frames, func(f dump.Frame) bool { return f.Function == "__restore_rt" })
		if k < 0 || k+1 >= len(th.Frames) {
			t.Errorf("in-handler: no __restore_rt frame\n%s", text(th))
			return
		}
		if !th.Frames[k+1].Exact {
			t.Errorf("in-handler: the frame interrupted by the signal is not marked exact\n%s", text(th))
		}
		return
	}
	t.Errorf("no in-handler thread")
}

// TestInlineFramesLLVM checks the frames of every thread in the target,
// inline frames included, against llvm-symbolizer-14 on the same file
// addresses (return addresses minus one, as llvm-symbolizer's users pass
// them).
func TestInlineFramesLLVM(t *testing.T) {
	sym := testenv.Tool(t, "llvm-symbolizer-14")
	for _, v := range []variant{{"gcc", "-O2", false}, {"clang-14", "-O2", false}} {
		t.Run(v.String(), func(t *testing.T) {
			exe := buildTarget(t, v)
			tg := start(t, exe, "-t", "3", "-d", "5", "-v", "-s")
			d, err := dump.Dump(context.Background(), tg.pid, dump.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var bias uint64
			for _, m := range d.Modules {
				if m.Path == exe {
					bias = m.Bias
				}
			}
			type query struct {
				addr   uint64
				frames []dump.Frame
			}
			var qs []query
			for _, th := range d.Threads {
				for i := 0; i < len(th.Frames); {
					j := i
					for j < len(th.Frames) && th.Frames[j].Index == th.Frames[i].Index {
						j++
					}
					f := th.Frames[i]
					if f.Module == filepath.Base(exe) {
						a := f.PC - bias
						if !f.Exact {
							a--
						}
						qs = append(qs, query{a, th.Frames[i:j]})
					}
					i = j
				}
			}
			var in strings.Builder
			for _, q := range qs {
				fmt.Fprintf(&in, "%#x\n", q.addr)
			}
			cmd := exec.Command(sym, "--obj="+exe, "--inlines")
			cmd.Stdin = strings.NewReader(in.String())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("llvm-symbolizer: %v", err)
			}
			blocks := strings.Split(strings.TrimSpace(string(out)), "\n\n")
			if len(blocks) != len(qs) {
				t.Fatalf("%d answers for %d addresses", len(blocks), len(qs))
			}
			inlined := 0
			for k, q := range qs {
				lines := strings.Split(blocks[k], "\n")
				var want []string
				for i := 0; i+1 < len(lines); i += 2 {
					fl := lines[i+1]
					if c := strings.LastIndexByte(fl, ':'); c >= 0 {
						fl = fl[:c] // drop the column
					}
					want = append(want, lines[i]+" "+fl)
				}
				var have []string
				for _, f := range q.frames {
					file := f.File
					if file == "" {
						file = "??"
					}
					have = append(have, fmt.Sprintf("%s %s:%d", f.Function, file, f.Line))
					if f.Inlined {
						inlined++
					}
				}
				if !slices.Equal(have, want) {
					t.Errorf("%#x: have %q\nllvm-symbolizer %q", q.addr, have, want)
				}
			}
			if inlined == 0 {
				t.Errorf("no inline frames in the target")
			}
		})
	}
}

// TestThreadsExiting dumps a target whose churn thread starts and ends
// threads all the time: threads that vanish are skipped with a note, the
// rest are complete, and nothing is left stopped.
func TestThreadsExiting(t *testing.T) {
	exe := buildTarget(t, variants[1])
	tg := start(t, exe, "-t", "4", "-d", "3", "-x")
	exited := 0
	for i := 0; i < 20; i++ {
		d, err := dump.Dump(context.Background(), tg.pid, dump.Options{Freeze: i%2 == 1, NoSymbols: i > 1})
		if err != nil {
			t.Fatalf("dump %d: %v", i, err)
		}
		workers := 0
		seen := map[int]bool{}
		for _, th := range d.Threads {
			if strings.HasPrefix(th.Name, "worker-") {
				workers++
			}
			if seen[th.TID] {
				// The second listing, for threads started during the
				// dump, must leave out those of the first.
				t.Errorf("dump %d: thread %d twice", i, th.TID)
			}
			seen[th.TID] = true
		}
		if workers != 4 {
			t.Errorf("dump %d: %d workers", i, workers)
		}
		for _, n := range d.Notes {
			if strings.Contains(n, "exited") {
				exited++
			}
		}
	}
	t.Logf("%d threads seen exiting over 20 dumps", exited)
	tg.checkRunning()
	if a := tg.ask("release"); a != "released 4" {
		t.Errorf("release: %q", a)
	}
}

// TestSignalDuringDump sends SIGUSR2 to each worker of the target, one
// after the other, while it is dumped again and again: whether the dump
// has the thread stopped, or released but still traced, or not yet seized,
// the thread handles its signal once, and afterwards no thread is traced
// or stopped.
func TestSignalDuringDump(t *testing.T) {
	exe := buildTarget(t, variants[1])
	tg := start(t, exe, "-t", "200", "-d", "4")
	var workers []int
	for tid := range tg.states() {
		if tid != tg.pid {
			workers = append(workers, tid)
		}
	}
	stop := make(chan struct{})
	errs := make(chan error, 1)
	dumps := 0
	go func() {
		defer close(errs)
		for {
			if _, err := dump.Dump(context.Background(), tg.pid, dump.Options{NoSymbols: true}); err != nil {
				errs <- err
				return
			}
			dumps++
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	for _, tid := range workers {
		if err := syscall.Tgkill(tg.pid, tid, syscall.SIGUSR2); err != nil {
			t.Fatalf("tgkill %d: %v", tid, err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("sigs %d", len(workers))
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if a := tg.ask("sigs"); a == want {
			break
		} else if time.Now().After(deadline) {
			t.Errorf("%s, want %s", a, want)
			break
		}
	}
	t.Logf("%d signals during %d dumps", len(workers), dumps)
	tg.checkRunning()
	for tid := range tg.states() {
		if v := statusField(t, tg.pid, tid, "TracerPid"); v != "0" {
			t.Errorf("thread %d: TracerPid %s after the dump", tid, v)
		}
	}
}

// TestStopDuringDump stops the target with SIGSTOP during a dump, and
// dumps it stopped: the dump completes, the process stays stopped, no
// thread is traced, and SIGCONT lets it run again.
func TestStopDuringDump(t *testing.T) {
	exe := buildTarget(t, variants[1])
	tg := start(t, exe, "-t", "200", "-d", "4")
	for _, early := range []bool{false, true} {
		errs := make(chan error, 1)
		if early {
			syscall.Kill(tg.pid, syscall.SIGSTOP)
		}
		go func() {
			d, err := dump.Dump(context.Background(), tg.pid, dump.Options{NoSymbols: true})
			if err == nil && len(d.Threads) != 201 {
				err = fmt.Errorf("%d threads, want 201", len(d.Threads))
			}
			errs <- err
		}()
		if !early {
			time.Sleep(2 * time.Millisecond)
			syscall.Kill(tg.pid, syscall.SIGSTOP)
		}
		if err := <-errs; err != nil {
			t.Fatalf("stopped early=%v: %v", early, err)
		}
		for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			running := 0
			for _, st := range tg.states() {
				if st != "T" {
					running++
				}
			}
			if running == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("stopped early=%v: %d threads not stopped after the dump", early, running)
			}
		}
		for tid := range tg.states() {
			if v := statusField(t, tg.pid, tid, "TracerPid"); v != "0" {
				t.Errorf("thread %d: TracerPid %s after the dump", tid, v)
			}
		}
		syscall.Kill(tg.pid, syscall.SIGCONT)
		tg.checkRunning()
	}
}

// statusField returns a field of /proc/PID/task/TID/status.
func statusField(t *testing.T, pid, tid int, name string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestKillDuringDump kills a process that dumps the target in a loop with
// SIGKILL, many times at random points, and checks that the kernel
// released every thread: none stays in a tracing stop and the target
// answers.
func TestKillDuringDump(t *testing.T) {
	exe := buildTarget(t, variants[1])
	tg := start(t, exe, "-t", "50", "-d", "4", "-H", "500")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), "BACKTRAIL_DUMP_HELPER="+strconv.Itoa(tg.pid), "BACKTRAIL_DUMP_LOOP=1")
		if i%2 == 1 {
			cmd.Env = append(cmd.Env, "BACKTRAIL_DUMP_FREEZE=1")
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+i*37) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		tg.checkRunning()
	}
	before := tg.ask("hb")
	time.Sleep(50 * time.Millisecond)
	after := tg.ask("hb")
	if beats(before) >= beats(after) {
		t.Errorf("heartbeat stopped: %q then %q", before, after)
	}
}

// beats returns the normal heartbeat's count of beats from a reply to "hb".
func beats(hb string) int {
	_, s, _ := strings.Cut(hb, " beats=")
	s, _, _ = strings.Cut(s, " ")
	n, _ := strconv.Atoi(s)
	return n
}

// TestRealtimeThread dumps a target with a SCHED_FIFO thread (parked's
// real-time heartbeat), for which the tracer takes a real-time priority
// while it holds it: the thread is dumped, keeps its priority and keeps
// beating, no thread stays stopped, and no thread of the dumping process
// keeps a real-time priority.
func TestRealtimeThread(t *testing.T) {
	if !dump.MayRealtime() {
		t.Skip("no real-time priority for this process (needs CAP_SYS_NICE)")
	}
	exe := buildTarget(t, variants[1])
	tg := start(t, exe, "-t", "8", "-d", "3", "-R", "200")
	for i := 0; i < 5; i++ {
		d, err := dump.Dump(context.Background(), tg.pid, dump.Options{})
		if err != nil {
			t.Fatal(err)
		}
		k := slices.IndexFunc(d.Threads, func(th dump.Thread) bool { return th.Name == "heartbeat-rt" })
		if k < 0 {
			t.Fatalf("dump %d: no heartbeat-rt thread among %v", i, tids(d))
		}
		rt := d.Threads[k]
		if names, _ := targetFrames(rt, exe); !slices.Contains(names, "heartbeat_main") {
			t.Errorf("dump %d: heartbeat-rt frames %q, want heartbeat_main\n%s", i, names, text(rt))
		}
		tg.checkRunning()
		if p := rtPriority(t, fmt.Sprintf("/proc/%d/task/%d/stat", tg.pid, rt.TID)); p != 80 {
			t.Errorf("dump %d: heartbeat-rt has real-time priority %d after the dump, want 80", i, p)
		}
	}
	before := tg.ask("hb")
	time.Sleep(20 * time.Millisecond)
	after := tg.ask("hb")
	if rtBeats(before) >= rtBeats(after) {
		t.Errorf("real-time heartbeat stopped: %q then %q", before, after)
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/stat")
	for _, f := range tasks {
		if p := rtPriority(t, f); p != 0 {
			t.Errorf("%s: the dumping process's thread has real-time priority %d", f, p)
		}
	}
}

// rtPriority returns the real-time priority in the stat file at path.
func rtPriority(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := dump.ParseStat(b)
	if err != nil {
		t.Fatal(err)
	}
	return st.RTPriority
}

// rtBeats returns the real-time heartbeat's count of beats from a reply
// to "hb".
func rtBeats(hb string) int {
	_, s, _ := strings.Cut(hb, " rt_beats=")
	n, _ := strconv.Atoi(s)
	return n
}

// TestErrors checks the errors for a PID that does not exist, a zombie,
// and a process the caller may not trace.
func TestErrors(t *testing.T) {
	_, err := dump.Dump(context.Background(), 0x3fffffff, dump.Options{})
	if !errors.Is(err, dump.ErrNoProcess) {
		t.Errorf("missing pid: %v", err)
	}
	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	// Not waited for: a zombie until Wait.
	for i := 0; i < 100; i++ {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", z.Process.Pid))
		if bytes.Contains(b, []byte(") Z ")) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err = dump.Dump(context.Background(), z.Process.Pid, dump.Options{})
	if !errors.Is(err, dump.ErrZombie) || !strings.Contains(err.Error(), "reap") {
		t.Errorf("zombie: %v", err)
	}
	z.Wait()
	t.Logf("zombie: %v", err)
}

// TestThreads checks dump.Threads against the target's task directory, and
// its error for a PID that does not exist.
func TestThreads(t *testing.T) {
	tg := start(t, buildTarget(t, variants[1]), "-t", "5", "-d", "2")
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", tg.pid))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := dump.Threads(tg.pid); err != nil || n != len(tasks) || n < 6 {
		t.Errorf("Threads = %d, %v; want the %d tasks listed", n, err, len(tasks))
	}
	if _, err := dump.Threads(0x3fffffff); !errors.Is(err, dump.ErrNoProcess) {
		t.Errorf("missing pid: %v", err)
	}
}

// TestNotPermitted dumps a root-owned target from a helper process running
// as nobody: ptrace refuses, and the error says why and what to do.
func TestNotPermitted(t *testing.T) {
	if os.Getuid() != 0 {
		// Without root, any process of another user will do.
		_, err := dump.Dump(context.Background(), 1, dump.Options{})
		if !errors.Is(err, dump.ErrNotPermitted) {
			t.Errorf("pid 1 as uid %d: %v", os.Getuid(), err)
		}
		t.Logf("%v", err)
		return
	}
	exe := buildTarget(t, variants[1])
	tg := start(t, exe, "-t", "2", "-d", "2")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The helper must be executable by nobody.
	dir, err := os.MkdirTemp("", "backtrail-perm-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	helperPath := filepath.Join(dir, "helper")
	if err := os.WriteFile(helperPath, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helperPath)
	cmd.Env = []string{"BACKTRAIL_DUMP_HELPER=" + strconv.Itoa(tg.pid), "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("helper as nobody dumped a root process: %s", out)
	}
	msg := string(out)
	if !strings.Contains(msg, "not permitted") || !strings.Contains(msg, "uid 0") {
		t.Errorf("error %q does not explain the permission problem", msg)
	}
	t.Logf("as nobody: %s", strings.TrimSpace(msg))
	tg.checkRunning()
}

// TestReport checks that a dump becomes a valid report of kind dump whose
// frames keep their symbols, inline flags and modules.
func TestReport(t *testing.T) {
	exe := buildTarget(t, variants[1])
	tg := start(t, exe, "-t", "2", "-d", "3")
	d, err := dump.Dump(context.Background(), tg.pid, dump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := d.Report()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var buf bytes.Buffer
	if err := report.Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	back, err := report.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if back.Kind != report.KindDump || back.Platform != report.PlatformNative || len(back.Threads) != 3 {
		t.Fatalf("report: kind %s platform %s threads %d", back.Kind, back.Platform, len(back.Threads))
	}
	var exeMod *report.Module
	for i := range back.Modules {
		if back.Modules[i].Path == exe {
			exeMod = &back.Modules[i]
		}
	}
	if exeMod == nil || exeMod.CodeID == "" || exeMod.DebugID == "" || exeMod.ImageAddr == 0 {
		t.Fatalf("executable module %+v", exeMod)
	}
	// gcc's PIE starts with a PT_LOAD at vaddr 0 and offset 0: the image is
	// where its first mapping starts.
	mf, err := os.Open(fmt.Sprintf("/proc/%d/maps", tg.pid))
	if err != nil {
		t.Fatal(err)
	}
	maps, _ := dump.ParseMaps(mf)
	mf.Close()
	for _, m := range maps {
		if m.Path == exe {
			if uint64(exeMod.ImageAddr) != m.Start || exeMod.ImageVMAddr != 0 {
				t.Errorf("image_addr %#x vmaddr %#x, want the first mapping %#x and 0", uint64(exeMod.ImageAddr), uint64(exeMod.ImageVMAddr), m.Start)
			}
			break
		}
	}
	inlined, inApp := 0, 0
	for _, th := range back.Threads {
		if th.Registers["rip"] == 0 && th.Registers["pc"] == 0 {
			t.Errorf("thread %d: no pc register", th.ID)
		}
		for _, f := range th.Frames {
			if f.Inlined {
				inlined++
			}
			if f.InApp {
				inApp++
				if f.Module != exeMod.Name || f.Addr < exeMod.ImageAddr || uint64(f.Addr-exeMod.ImageAddr) >= exeMod.ImageSize {
					t.Errorf("in-app frame %+v outside the executable %+v", f, exeMod)
				}
			}
		}
	}
	if inlined == 0 || inApp == 0 {
		t.Errorf("%d inlined and %d in-app frames", inlined, inApp)
	}
}

// TestGoTarget dumps a Go program: the dump says that OS threads show the
// scheduler and how to see goroutines.
func TestGoTarget(t *testing.T) {
	goTool := testenv.Tool(t, "go")
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	os.WriteFile(src, []byte("package main\n\nimport (\n\t\"fmt\"\n\t\"time\"\n)\n\nfunc main() {\n\tfmt.Println(\"ready 0\")\n\ttime.Sleep(time.Hour)\n}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module sleeper\n\ngo 1.22\n"), 0o644)
	exe := filepath.Join(dir, "sleeper")
	cmd := exec.Command(goTool, "build", "-o", exe, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	tg := start(t, exe)
	d, err := dump.Dump(context.Background(), tg.pid, dump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.GoProgram || !slices.ContainsFunc(d.Notes, func(n string) bool { return strings.Contains(n, "goroutine") }) {
		t.Errorf("GoProgram=%v notes %q", d.GoProgram, d.Notes)
	}
	found := false
	for _, th := range d.Threads {
		for _, f := range th.Frames {
			if strings.HasPrefix(f.Function, "runtime.") {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no runtime.* frame in the Go program's threads")
	}
}

// TestDeletedExecutable dumps a target whose executable was deleted after
// it started, as happens when a service is upgraded in place: the module
// is read through /proc/PID/map_files, and its frames are symbolized.
func TestDeletedExecutable(t *testing.T) {
	v := variants[1]
	built := buildTarget(t, v)
	exe := filepath.Join(t.TempDir(), filepath.Base(built))
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	const depth = 3
	tg := start(t, exe, "-t", "2", "-d", strconv.Itoa(depth), "-v")
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	d, err := dump.Dump(context.Background(), tg.pid, dump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Modules, func(m dump.Module) bool { return m.Name == filepath.Base(exe) && m.Symbols }) {
		t.Errorf("no symbolized module %s among %+v\nnotes %q", filepath.Base(exe), d.Modules, d.Notes)
	}
	checkWorkers(t, d, exe, v, depth)
	tg.checkRunning()
}

// TestStackRange checks that the copy of a stack starts a red zone below
// the stack pointer and ends a window above it, clamped to the mapping
// that holds it, and that a stack pointer outside every readable mapping
// copies nothing.
func TestStackRange(t *testing.T) {
	maps := []dump.Mapping{
		{Start: 0x10000, End: 0x20000, Perms: "rw-p"},
		{Start: 0x20000, End: 0x21000, Perms: "---p"}, // a guard page
		{Start: 0x30000, End: 0x40000, Perms: "rw-p"},
	}
	const window = 0x1000
	for _, tt := range []struct {
		sp, lo, hi uint64
	}{
		{0x0ffff, 0, 0},             // below every mapping
		{0x10000, 0x10000, 0x11000}, // at the start: no red zone below it
		{0x10080, 0x10000, 0x11080},
		{0x18000, 0x17f80, 0x19000}, // in the middle
		{0x1ffff, 0x1ff7f, 0x20000}, // at the end: clamped
		{0x20000, 0, 0},             // the guard page is not readable
		{0x21000, 0, 0},             // a hole
		{0x3ffff, 0x3ff7f, 0x40000},
		{0x40000, 0, 0},
	} {
		lo, hi, mp := dump.StackRange(maps, tt.sp, window)
		if lo != tt.lo || hi != tt.hi || (mp == nil) != (tt.hi == 0) {
			t.Errorf("sp %#x: [%#x, %#x) in %v, want [%#x, %#x)", tt.sp, lo, hi, mp, tt.lo, tt.hi)
		}
	}
}
