package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A cluster is the server processes of one run: replicas of `backtrail
// serve` sharing one data directory (blobs, symcaches, and the SQLite
// database unless --db names another) and one admin token. Its methods
// are safe for concurrent use.
type cluster struct {
	bin     string
	dir     string // data directory
	token   string
	extra   []string // further serve arguments
	servers []*serverProc
	http    *http.Client
	key     string // the default project's key
}

// serverProc is one replica: its address stays, its process changes when
// it is killed and started again.
type serverProc struct {
	i    int
	addr string
	log  *os.File

	mu     sync.Mutex // guards the fields below
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd has exited
	starts int

	pid atomic.Int64 // of the running process, 0 while down
}

func newCluster(bin, dir string, n, basePort int, extra []string) (*cluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: filepath.Join(dir, "data"), token: strconv.FormatInt(time.Now().UnixNano(), 36) + "-load",
		extra: extra, http: &http.Client{Timeout: 60 * time.Second}}
	for i := range n {
		port := 0
		if basePort > 0 {
			port = basePort + i
		} else {
			var err error
			if port, err = freePort(); err != nil {
				return nil, err
			}
		}
		log, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("server-%d.log", i)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		c.servers = append(c.servers, &serverProc{i: i, addr: fmt.Sprintf("127.0.0.1:%d", port), log: log})
	}
	return c, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *serverProc) url(path string) string { return "http://" + s.addr + path }

// start starts replica s and waits until its /healthz answers 200.
func (c *cluster) start(ctx context.Context, s *serverProc) error {
	args := append([]string{"serve", "--addr", s.addr, "--data", c.dir, "--admin-token", c.token}, c.extra...)
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	fmt.Fprintf(s.log, "\n=== %s start: %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(cmd.Args, " "))
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.starts++
	s.mu.Unlock()
	s.pid.Store(int64(cmd.Process.Pid))

	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-done:
			s.pid.Store(0)
			return fmt.Errorf("server %d exited while starting; see %s", s.i, s.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := c.pending(ctx, s); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server %d did not answer /healthz within 2 minutes; see %s", s.i, s.log.Name())
		}
	}
}

// kill9 kills replica s with SIGKILL and waits for it to be gone.
func (s *serverProc) kill9() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	s.pid.Store(0)
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	fmt.Fprintf(s.log, "=== %s killed with SIGKILL by the load benchmark\n", time.Now().Format(time.RFC3339Nano))
}

// stop stops replica s gracefully (SIGTERM, then SIGKILL after 20 s).
func (s *serverProc) stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
	s.pid.Store(0)
}

func (c *cluster) stopAll() {
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Go(s.stop)
	}
	wg.Wait()
	for _, s := range c.servers {
		s.log.Close()
	}
}

// call does an admin request and decodes a JSON answer into out.
func (c *cluster) call(ctx context.Context, s *serverProc, method, path string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, s.url(path), body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{method + " " + path, resp.StatusCode, strings.TrimSpace(string(b))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

type statusError struct {
	req    string
	status int
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("%s: HTTP %d: %s", e.req, e.status, e.body) }

// projectKey finds the key of the project "default".
func (c *cluster) projectKey(ctx context.Context) (string, error) {
	var ps []struct{ Name, Key string }
	if err := c.call(ctx, c.servers[0], "GET", "/api/v1/projects", nil, &ps); err != nil {
		return "", err
	}
	for _, p := range ps {
		if p.Name == "default" {
			return p.Key, nil
		}
	}
	return "", errors.New("no project named default")
}

// upload uploads a debug file to the default project and returns the ids
// the server read from it.
func (c *cluster) upload(ctx context.Context, path string) (debugID, codeID string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	var files []struct {
		DebugID string `json:"debug_id"`
		CodeID  string `json:"code_id"`
	}
	q := "/api/v1/debug-files?project=default&name=" + filepath.Base(path)
	if err := c.call(ctx, c.servers[0], "POST", q, bytes.NewReader(b), &files); err != nil {
		return "", "", err
	}
	if len(files) == 0 {
		return "", "", fmt.Errorf("upload of %s stored no debug file", path)
	}
	return files[0].DebugID, files[0].CodeID, nil
}

// pending asks replica s for the number of events waiting to be
// processed (all replicas share the queue).
func (c *cluster) pending(ctx context.Context, s *serverProc) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var h struct{ Pending int64 }
	err := c.call(ctx, s, "GET", "/healthz", nil, &h)
	return h.Pending, err
}

// anyPending asks the first replica that answers.
func (c *cluster) anyPending(ctx context.Context) (int64, error) {
	var err error
	for _, s := range c.servers {
		if s.pid.Load() == 0 {
			continue
		}
		var n int64
		if n, err = c.pending(ctx, s); err == nil {
			return n, nil
		}
	}
	if err == nil {
		err = errors.New("no server is running")
	}
	return 0, err
}

// issue is the part of an issue the benchmark reads.
type issue struct {
	ID    int64 `json:"id"`
	Count int64 `json:"count"`
	Title string
}

// issues lists every issue of the default project.
func (c *cluster) issues(ctx context.Context) ([]issue, error) {
	var all []issue
	for off := 0; ; off += 1000 {
		var page []issue
		if err := c.call(ctx, c.servers[0], "GET", fmt.Sprintf("/api/v1/issues?project=default&limit=1000&offset=%d", off), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < 1000 {
			return all, nil
		}
	}
}

// eventState is what GET /api/v1/events/{id} says about an event.
type eventState struct {
	Processed bool   `json:"processed"`
	Issue     int64  `json:"issue"`
	Error     string `json:"error"`
}

// event looks an event up by id in the default project (naming the
// project lets the store use its (project_id, event_id) index).
func (c *cluster) event(ctx context.Context, s *serverProc, id string) (*eventState, error) {
	var e eventState
	if err := c.call(ctx, s, "GET", "/api/v1/events/"+id+"?project=default", nil, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// dataSize is the size of the SQLite database files.
func (c *cluster) dataSize() int64 {
	var n int64
	for _, f := range []string{"backtrail.db", "backtrail.db-wal", "backtrail.db-shm"} {
		if fi, err := os.Stat(filepath.Join(c.dir, f)); err == nil {
			n += fi.Size()
		}
	}
	return n
}
