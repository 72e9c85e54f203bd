//go:build linux && (amd64 || arm64)

package dump_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backtrail/backtrail/dump"
	"github.com/backtrail/backtrail/internal/testenv"
)

var buildDir string

func TestMain(m *testing.M) {
	// Re-executed as a helper by TestKillDuringDump and TestNotPermitted.
	if pid := os.Getenv("BACKTRAIL_DUMP_HELPER"); pid != "" {
		helper(pid)
		return
	}
	dir, err := os.MkdirTemp("", "backtrail-dump-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	// Dumps with default options keep their uncompressed debug files
	// here, not in the user's cache.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// helper dumps the process named by its argument: forever with
// BACKTRAIL_DUMP_LOOP set, else once, printing the error.
func helper(arg string) {
	pid, _ := strconv.Atoi(arg)
	for {
		_, err := dump.Dump(context.Background(), pid, dump.Options{Freeze: os.Getenv("BACKTRAIL_DUMP_FREEZE") != ""})
		if os.Getenv("BACKTRAIL_DUMP_LOOP") == "" {
			if err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			os.Exit(0)
		}
		fmt.Println("dumped")
	}
}

// variant is one way to build the target program.
type variant struct {
	cc  string // "gcc", "clang-14", or "g++" (compiling parked.c as C++)
	opt string // "-O0" or "-O2"
	fp  bool   // -fno-omit-frame-pointer
}

func (v variant) String() string {
	s := strings.ReplaceAll(v.cc, "+", "x") + v.opt
	if v.fp {
		s += "-fp"
	} else {
		s += "-nofp"
	}
	return s
}

var variants = []variant{
	{"gcc", "-O0", true}, {"gcc", "-O2", false}, {"gcc", "-O2", true},
	{"clang-14", "-O0", true}, {"clang-14", "-O2", false}, {"clang-14", "-O2", true},
	{"g++", "-O2", false},
}

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// buildTarget compiles testdata/src/dump/parked.c once per variant and
// test binary:
//
//	<cc> [-x c++] <opt> -g [-fno-omit-frame-pointer | -fomit-frame-pointer] -pthread -o parked-<variant> parked.c
func buildTarget(t *testing.T, v variant) string {
	t.Helper()
	cc := testenv.Tool(t, v.cc)
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[v.String()]; ok {
		return p
	}
	src := testenv.Testdata(t, "src", "dump", "parked.c")
	out := filepath.Join(buildDir, "parked-"+v.String())
	fp := "-fomit-frame-pointer"
	if v.fp {
		fp = "-fno-omit-frame-pointer"
	}
	args := []string{v.opt, "-g", fp, "-pthread", "-o", out, src}
	if v.cc == "g++" {
		args = append([]string{"-x", "c++"}, args...)
	}
	cmd := exec.Command(cc, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	built[v.String()] = out
	return out
}

// target is a running parked program.
type target struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	pid   int
	path  string
	lines chan string
}

// start runs the target with args and waits until it is ready.
func start(t *testing.T, path string, args ...string) *target {
	t.Helper()
	cmd := exec.Command(path, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tg := &target{t: t, cmd: cmd, in: in, out: bufio.NewReader(out), pid: cmd.Process.Pid, path: path, lines: make(chan string, 16)}
	go func() {
		for {
			line, err := tg.out.ReadString('\n')
			if line != "" {
				tg.lines <- strings.TrimSpace(line)
			}
			if err != nil {
				close(tg.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if line := tg.next(); !strings.HasPrefix(line, "ready ") {
		t.Fatalf("target said %q, want ready", line)
	}
	if strings.HasPrefix(filepath.Base(path), "parked") {
		tg.waitIdle()
	}
	return tg
}

// next returns the target's next line of output.
func (tg *target) next() string {
	tg.t.Helper()
	select {
	case l, ok := <-tg.lines:
		if !ok {
			tg.t.Fatalf("target exited")
		}
		return l
	case <-time.After(30 * time.Second):
		tg.t.Fatalf("target did not answer within 30s")
	}
	return ""
}

// ask sends a command and returns the answer.
func (tg *target) ask(cmd string) string {
	tg.t.Helper()
	if _, err := io.WriteString(tg.in, cmd+"\n"); err != nil {
		tg.t.Fatal(err)
	}
	return tg.next()
}

// states returns the /proc state letter of each of the target's threads.
func (tg *target) states() map[int]string {
	out := map[int]string{}
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", tg.pid))
	for _, e := range ents {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", tg.pid, e.Name()))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		tid, _ := strconv.Atoi(e.Name())
		if i > 0 && i+2 < len(s) {
			out[tid] = s[i+2 : i+3]
		}
	}
	return out
}

// checkRunning fails if any thread of the target is stopped by a tracer
// (state t) or the target does not answer.
func (tg *target) checkRunning() {
	tg.t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		stopped := 0
		for tid, st := range tg.states() {
			if st == "t" || st == "T" {
				stopped++
				if time.Now().After(deadline) {
					tg.t.Errorf("thread %d is in state %s after the dump", tid, st)
				}
			}
		}
		if stopped == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if a := tg.ask("ping"); a != "pong" {
		tg.t.Errorf("ping: %q", a)
	}
	tg.waitIdle()
}

// waitIdle waits until the main thread blocks reading its next command
// (read(0, …) in /proc/PID/syscall), so that its stack is the same for
// every tool that looks at it next.
func (tg *target) waitIdle() {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", tg.pid))
		if strings.HasPrefix(string(b), "0 0x0 ") {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
