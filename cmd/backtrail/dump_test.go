//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
)

// startParked builds testdata/src/dump/parked.c with gcc -O2 -g and runs
// it with args (default: 3 workers at depth 4); it returns the pid once
// the target is ready.
func startParked(t *testing.T, args ...string) int {
	t.Helper()
	return startParkedBuilt(t, buildParked(t), args...)
}

// buildParked compiles the parked target with gcc -O2 -g and cflags into
// a new directory, and returns the executable.
func buildParked(t *testing.T, cflags ...string) string {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "parked")
	src := testenv.Testdata(t, "src", "dump", "parked.c")
	cmd := exec.Command(testenv.Tool(t, "gcc"), append(append([]string{"-O2", "-g", "-pthread"}, cflags...), "-o", exe, src)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return exe
}

// startParkedBuilt starts the parked target exe with args and waits until
// its threads are parked.
func startParkedBuilt(t *testing.T, exe string, args ...string) int {
	t.Helper()
	if len(args) == 0 {
		args = []string{"-t", "3", "-d", "4"}
	}
	cmd := exec.Command(exe, args...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "ready ") {
		t.Fatalf("target said %q", line)
	}
	return cmd.Process.Pid
}

// TestDumpSplitDWARF dumps a target built with -gsplit-dwarf: its inline
// frames come from the .dwo file beside it, and without that file the
// dump still names every function, without them.
func TestDumpSplitDWARF(t *testing.T) {
	exe := buildParked(t, "-gsplit-dwarf")
	dwos, _ := filepath.Glob(filepath.Join(filepath.Dir(exe), "*.dwo"))
	if len(dwos) != 1 {
		t.Fatalf("gcc -gsplit-dwarf left %q", dwos)
	}
	dump := func() string {
		t.Helper()
		p := strconv.Itoa(startParkedBuilt(t, exe))
		code, out, errs := runCode("dump", p)
		if code != 0 {
			t.Fatalf("dump: exit %d: %s", code, errs)
		}
		for _, want := range []string{" level_d (", " level_a (", " worker_main ("} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		return out
	}
	// park_here is inlined into level_d.
	if out := dump(); !strings.Contains(out, " park_here (") || !strings.Contains(out, "[parked] (inlined)\n") {
		t.Errorf("no inline frames from %s:\n%s", dwos[0], out)
	}
	if err := os.Remove(dwos[0]); err != nil {
		t.Fatal(err)
	}
	if out := dump(); strings.Contains(out, "[parked] (inlined)") {
		t.Errorf("inline frames of parked without the .dwo file:\n%s", out)
	}
}

func TestDumpCommand(t *testing.T) {
	pid := startParked(t)
	p := strconv.Itoa(pid)

	code, out, errs := runCode("dump", p)
	if code != 0 {
		t.Fatalf("dump: exit %d: %s", code, errs)
	}
	for _, want := range []string{"PID " + p + " - process parked\n", "TID " + p + " (parked):\n", "TID ", " (worker-0):\n",
		" park_here (", "parked.c:", "[parked] (inlined)\n", " level_a (", " worker_main (", "[libc.so.6]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "#0  0x") {
		t.Errorf("no #0 frame line:\n%s", out)
	}

	code, out, errs = runCode("dump", "--json", "--freeze", "--max-frames", "3", p)
	if code != 0 {
		t.Fatalf("dump --json: exit %d: %s", code, errs)
	}
	r, err := report.Parse([]byte(out))
	if err != nil {
		t.Fatalf("--json output: %v", err)
	}
	if r.Kind != report.KindDump || len(r.Threads) != 4 || !r.Threads[1].Truncated {
		t.Errorf("report kind %s, %d threads, truncated %v", r.Kind, len(r.Threads), r.Threads[1].Truncated)
	}

	var got struct {
		auth, ctype string
		body        []byte
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/api/v1/reports" || req.Method != http.MethodPost {
			http.NotFound(w, req)
			return
		}
		got.auth, got.ctype = req.Header.Get("Authorization"), req.Header.Get("Content-Type")
		got.body, _ = io.ReadAll(req.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	code, _, errs = runCode("dump", "--upload", srv.URL, "--key", "k123", p)
	if code != 0 {
		t.Fatalf("dump --upload: exit %d: %s", code, errs)
	}
	if got.auth != "Bearer k123" || got.ctype != "application/json" {
		t.Errorf("upload headers %q %q", got.auth, got.ctype)
	}
	if r, err := report.Parse(got.body); err != nil || r.Kind != report.KindDump || r.Validate() != nil {
		t.Errorf("uploaded report: %v", err)
	}
}

// TestDumpSignal interrupts backtrail dump, run as a command, with SIGINT
// and SIGTERM at several points of a dump of 500 threads: each time the
// command ends, at once, with success or with the message that the
// process was released, and no thread of the target is left traced or
// stopped.
func TestDumpSignal(t *testing.T) {
	pid := startParked(t, "-t", "500", "-d", "20")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	interrupted, early := 0, 0
	for i, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, os.Interrupt, syscall.SIGTERM, os.Interrupt, syscall.SIGTERM} {
		for _, freeze := range []string{"--freeze=false", "--freeze=true"} {
			cmd := exec.Command(self, "dump", freeze, strconv.Itoa(pid))
			cmd.Env = append(os.Environ(), "BACKTRAIL_TEST_AS_CLI=1")
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(50+i*30) * time.Millisecond)
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var exit *exec.ExitError
			switch {
			case err == nil:
			case strings.Contains(stderr.String(), "interrupted; the process was released"):
				interrupted++
			case errors.As(err, &exit) && exit.ExitCode() == -1 && stderr.Len() == 0:
				// The signal came before main installed its handler, on
				// a machine slow to start the binary.
				early++
			default:
				t.Errorf("%v %s: %v: %s", sig, freeze, err, stderr.String())
			}
			checkReleased(t, pid)
		}
	}
	t.Logf("%d of 12 dumps were interrupted midway, %d before they started", interrupted, early)
}

// checkReleased fails if a thread of pid is traced or in a stop.
func checkReleased(t *testing.T, pid int) {
	t.Helper()
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if len(tasks) == 0 {
		t.Fatalf("process %d has no threads", pid)
	}
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "TracerPid:"); ok && strings.TrimSpace(v) != "0" {
				t.Errorf("%s: traced by %s", f, strings.TrimSpace(v))
			}
			if v, ok := strings.CutPrefix(line, "State:"); ok && (strings.Contains(v, "stopped") || strings.Contains(v, "tracing stop")) {
				t.Errorf("%s: %s", f, strings.TrimSpace(v))
			}
		}
	}
}

func TestDumpCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dump"}, 2, "need exactly one PID"},
		{[]string{"dump", "abc"}, 2, "not a positive number"},
		{[]string{"dump", "--upload", "http://127.0.0.1:1", "1"}, 2, "--upload needs --key"},
		{[]string{"dump", "1073741823"}, 1, "backtrail: process 1073741823: no such process"},
	} {
		code, _, errs := runCode(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// TestDumpUploadServe runs the server in-process on 127.0.0.1:0 and
// uploads a dump to it: the server stores it as an issue of kind dump.
func TestDumpUploadServe(t *testing.T) {
	pid := startParked(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		e := &env{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard}
		done <- run(ctx, e, []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--admin-token", "tok"})
		pw.Close()
	}()
	defer func() {
		cancel()
		<-done
	}()
	var base, key string
	sc := bufio.NewScanner(pr)
	for sc.Scan() && (base == "" || key == "") {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "backtrail serving at "); ok {
			base = s
		}
		if _, dsn, ok := strings.Cut(line, "DSN:"); ok {
			dsn = strings.TrimSpace(dsn)
			if i, j := strings.Index(dsn, "//"), strings.Index(dsn, "@"); i >= 0 && j > i {
				key = dsn[i+2 : j]
			}
		}
	}
	go io.Copy(io.Discard, pr)
	if base == "" || key == "" {
		t.Fatalf("server did not print its address and DSN")
	}
	code, _, errs := runCode("dump", "--upload", base, "--key", key, strconv.Itoa(pid))
	if code != 0 {
		t.Fatalf("dump --upload: exit %d: %s", code, errs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest("GET", base+"/api/v1/issues?project=default", nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `"dump"`) {
			t.Logf("issue: %.300s", body)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dump issue on the server: %s %s", resp.Status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDumpRestoresChildSignals checks that the dump command, which has the
// kernel stop sending SIGCHLD while it traces, gives the runtime its
// handling back: afterwards a child's exit status reaches Wait, which an
// ignored SIGCHLD would have the kernel discard.
func TestDumpRestoresChildSignals(t *testing.T) {
	p := strconv.Itoa(startParked(t))
	if code, _, errs := runCode("dump", p); code != 0 {
		t.Fatalf("dump: exit %d: %s", code, errs)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	const sigchld = 1 << (17 - 1)
	for _, line := range strings.Split(string(status), "\n") {
		field, mask, ok := strings.Cut(line, ":")
		if field != "SigIgn" && field != "SigCgt" || !ok {
			continue
		}
		m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if caught := m&sigchld != 0; caught != (field == "SigCgt") {
			t.Errorf("after the dump %s = %#x: SIGCHLD should be caught by the runtime, not ignored", field, m)
		}
	}
	if err := exec.Command(testenv.Tool(t, "true")).Run(); err != nil {
		t.Errorf("a child after the dump: %v", err)
	}
}
