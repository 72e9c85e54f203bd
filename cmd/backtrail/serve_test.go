package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/testenv"
)

// buildBacktrail builds this command into a temporary directory as
// scripts/run builds it, without cgo, and checks that the result is static:
// users copy it onto the machine or into the container of a process to
// dump, where the C library it was linked against may not be.
func buildBacktrail(t *testing.T) string {
	t.Helper()
	goTool := testenv.Tool(t, "go")
	exe := filepath.Join(t.TempDir(), "backtrail")
	cmd := exec.Command(goTool, "build", "-o", exe, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s asks for a dynamic loader: a dependency needs cgo", exe)
		}
	}
	return exe
}

// serveProcess is `backtrail serve` running as a child process.
type serveProcess struct {
	cmd  *exec.Cmd
	url  string // base URL
	key  string // the default project's key
	done chan struct{}
	logs *bytes.Buffer
}

var serveBanner = regexp.MustCompile(`(?m)^backtrail serving at (http://\S+)\n(?s:.*)DSN:\s+http://([0-9a-f]+)@`)

// startServe starts `backtrail serve --addr 127.0.0.1:0` with args and
// waits until it prints where it serves; its log is shown if the test fails.
func startServe(t *testing.T, exe string, args ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(exe, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, done: make(chan struct{}), logs: new(bytes.Buffer)}
	cmd.Stderr = &lockedWriter{w: p.logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("serve %s log:\n%s", p.url, p.logs)
		}
	})
	banner := make(chan []string, 1)
	go func() {
		defer close(p.done)
		var out bytes.Buffer
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if m := serveBanner.FindStringSubmatch(out.String()); m != nil && !sent {
				banner <- m
				sent = true
			}
		}
		cmd.Wait()
	}()
	select {
	case m := <-banner:
		p.url, p.key = m[1], m[2]
	case <-p.done:
		t.Fatalf("backtrail serve exited: %s", p.logs)
	case <-time.After(2 * time.Minute):
		t.Fatalf("backtrail serve printed no banner in 2 minutes: %s", p.logs)
	}
	return p
}

// kill kills the server with SIGKILL: no shutdown, no flush.
func (p *serveProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestServeDurability runs `backtrail serve` as a process, sends events from
// several goroutines at once, kills the server with SIGKILL in the middle
// of it, and restarts it on the same data directory: every event that was
// acknowledged with a 2xx is there, and is processed in the end.
func TestServeDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs backtrail serve")
	}
	exe := buildBacktrail(t)
	dir := t.TempDir()
	token := "durability-test-token"
	srv := startServe(t, exe, "--data", dir, "--admin-token", token)

	const senders = 4
	const killAfter = 200 // acknowledged events
	var (
		mu    sync.Mutex
		acked []string
		sent  int
	)
	killed := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Bounded: each sender stops at its first failure (the
			// server is gone) or after 2000 events.
			for i := 0; i < 2000; i++ {
				var raw [16]byte
				rand.Read(raw[:])
				id := hex.EncodeToString(raw[:])
				body := fmt.Sprintf(`{"event_id":%q,"platform":"go","release":"durable@1","exception":{"values":[{"type":"E%d","value":"sender %d","stacktrace":{"frames":[{"function":"main.send","filename":"send.go","lineno":%d,"in_app":true}]}}]}}`, id, g, g, 10+g)
				req, _ := http.NewRequest("POST", srv.url+"/api/1/store/", strings.NewReader(body))
				req.Header.Set("X-Sentry-Auth", "Sentry sentry_version=7, sentry_key="+srv.key)
				req.Header.Set("Content-Type", "application/json")
				mu.Lock()
				sent++
				mu.Unlock()
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					return
				}
				mu.Lock()
				acked = append(acked, id)
				n := len(acked)
				mu.Unlock()
				if n == killAfter {
					close(killed)
				}
			}
		}()
	}
	select {
	case <-killed:
	case <-time.After(time.Minute):
		t.Fatalf("fewer than %d events acknowledged in a minute: %s", killAfter, srv.logs)
	}
	srv.kill(t)
	wg.Wait()
	t.Logf("sent %d events, %d acknowledged before and while the server was killed", sent, len(acked))

	srv = startServe(t, exe, "--data", dir, "--admin-token", token)
	get := func(path string, v any) (int, error) {
		req, _ := http.NewRequest("GET", srv.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK && v != nil {
			return resp.StatusCode, json.NewDecoder(resp.Body).Decode(v)
		}
		return resp.StatusCode, nil
	}
	lost := 0
	for _, id := range acked {
		if status, err := get("/api/v1/events/"+id, nil); status != http.StatusOK {
			lost++
			t.Errorf("acknowledged event %s: %d %v", id, status, err)
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged events lost", lost, len(acked))
	}

	deadline := time.Now().Add(time.Minute)
	for {
		var h struct{ Pending int64 }
		if _, err := get("/healthz", &h); err != nil {
			t.Fatal(err)
		}
		if h.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events still pending a minute after the restart", h.Pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, id := range acked {
		var ev struct {
			Processed bool
			Error     string
		}
		if _, err := get("/api/v1/events/"+id, &ev); err != nil || !ev.Processed || ev.Error != "" {
			t.Errorf("event %s: processed %v, error %q (%v)", id, ev.Processed, ev.Error, err)
		}
	}
	var issues []struct{ Count int64 }
	if _, err := get("/api/v1/issues?limit=1000", &issues); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, is := range issues {
		total += is.Count
	}
	if total < int64(len(acked)) || len(issues) != senders {
		t.Errorf("%d issues counting %d events, want %d issues counting at least the %d acknowledged", len(issues), total, senders, len(acked))
	}
}
