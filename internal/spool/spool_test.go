package spool_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/spool"
)

// clock is an injected time source that tests advance by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond) // keep names strictly increasing
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// implementations runs one test body against the directory and memory spools.
func implementations(t *testing.T, opts spool.Options, body func(t *testing.T, s *spool.Spool)) {
	t.Run("dir", func(t *testing.T) {
		s, err := spool.Open(t.TempDir(), opts)
		if err != nil {
			t.Fatal(err)
		}
		body(t, s)
	})
	t.Run("memory", func(t *testing.T) { body(t, spool.NewMemory(opts)) })
}

func names(t *testing.T, s *spool.Spool) []string {
	t.Helper()
	ents, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		data, err := s.Read(e.Name)
		if err != nil {
			t.Fatalf("Read(%s): %v", e.Name, err)
		}
		out = append(out, string(data))
	}
	return out
}

func TestPutListReadRemove(t *testing.T) {
	c := &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	implementations(t, spool.Options{Now: c.Now}, func(t *testing.T, s *spool.Spool) {
		var ents []spool.Entry
		for _, rec := range []string{"a", "bb", "ccc"} {
			e, err := s.Put([]byte(rec))
			if err != nil {
				t.Fatal(err)
			}
			if e.Size != int64(len(rec)) {
				t.Errorf("Put(%q).Size = %d", rec, e.Size)
			}
			ents = append(ents, e)
		}
		if got := strings.Join(names(t, s), ","); got != "a,bb,ccc" {
			t.Errorf("records = %s, want a,bb,ccc (oldest first)", got)
		}
		if err := s.Remove(ents[1].Name); err != nil {
			t.Fatal(err)
		}
		if err := s.Remove(ents[1].Name); err != nil {
			t.Errorf("second Remove = %v, want nil", err)
		}
		if _, err := s.Read(ents[1].Name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Read(removed) = %v, want ErrNotExist", err)
		}
		if got := strings.Join(names(t, s), ","); got != "a,ccc" {
			t.Errorf("after Remove: %s", got)
		}
		for _, bad := range []string{"../x", "r-1.json", "x"} {
			if _, err := s.Read(bad); err == nil {
				t.Errorf("Read(%q) succeeded", bad)
			}
		}
		if _, err := s.Put(nil); err == nil {
			t.Error("Put(nil) succeeded")
		}
	})
}

func TestBounds(t *testing.T) {
	tests := []struct {
		name string
		opts spool.Options
		put  []string
		age  time.Duration // clock advance before the last Put
		want string
	}{
		{"count at limit", spool.Options{MaxCount: 3}, []string{"1", "2", "3"}, 0, "1,2,3"},
		{"count over limit", spool.Options{MaxCount: 3}, []string{"1", "2", "3", "4"}, 0, "2,3,4"},
		{"bytes at limit", spool.Options{MaxBytes: 6}, []string{"aa", "bb", "cc"}, 0, "aa,bb,cc"},
		{"bytes over limit", spool.Options{MaxBytes: 6}, []string{"aa", "bb", "cc", "d"}, 0, "bb,cc,d"},
		{"age not reached", spool.Options{MaxAge: time.Hour}, []string{"old", "new"}, time.Hour - time.Second, "old,new"},
		{"age passed", spool.Options{MaxAge: time.Hour}, []string{"old", "new"}, time.Hour + time.Second, "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
			tt.opts.Now = c.Now
			implementations(t, tt.opts, func(t *testing.T, s *spool.Spool) {
				for i, rec := range tt.put {
					if i == len(tt.put)-1 {
						c.Advance(tt.age)
					}
					if _, err := s.Put([]byte(rec)); err != nil {
						t.Fatal(err)
					}
				}
				if got := strings.Join(names(t, s), ","); got != tt.want {
					t.Errorf("put %v: have %s, want %s", tt.put, got, tt.want)
				}
			})
		})
	}
}

func TestTooLarge(t *testing.T) {
	implementations(t, spool.Options{MaxBytes: 4}, func(t *testing.T, s *spool.Spool) {
		if _, err := s.Put([]byte("12345")); !errors.Is(err, spool.ErrTooLarge) {
			t.Errorf("Put(5 bytes) = %v, want ErrTooLarge", err)
		}
		if _, err := s.Put([]byte("1234")); err != nil {
			t.Errorf("Put(4 bytes) = %v", err)
		}
	})
}

func TestTornFileSkippedAndRemoved(t *testing.T) {
	dir := t.TempDir()
	s, err := spool.Open(dir, spool.Options{Valid: json.Valid})
	if err != nil {
		t.Fatal(err)
	}
	good, err := s.Put([]byte(`{"ok":true}`))
	if err != nil {
		t.Fatal(err)
	}
	// A record cut short, as a file system that reorders writes could leave.
	torn := "r-00000000000000000001-1-000001.json"
	if err := os.WriteFile(filepath.Join(dir, torn), []byte(`{"ok":tr`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A temporary file from a writer killed a while ago, and a fresh one.
	stale := filepath.Join(dir, ".tmp-stale")
	os.WriteFile(stale, []byte("partial"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	fresh := filepath.Join(dir, ".tmp-fresh")
	os.WriteFile(fresh, []byte("partial"), 0o600)

	s, err = spool.Open(dir, spool.Options{Valid: json.Valid})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temporary file survived Open: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temporary file (maybe a live writer's) was removed: %v", err)
	}
	ents, _ := s.List()
	if len(ents) != 2 || ents[0].Name != torn || ents[1].Name != good.Name {
		t.Fatalf("List = %+v", ents)
	}
	if _, err := s.Read(torn); !errors.Is(err, spool.ErrCorrupt) {
		t.Errorf("Read(torn) = %v, want ErrCorrupt", err)
	}
	if _, err := os.Stat(filepath.Join(dir, torn)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("torn record not removed")
	}
	if data, err := s.Read(good.Name); err != nil || string(data) != `{"ok":true}` {
		t.Errorf("Read(good) = %q, %v", data, err)
	}
}

func TestConcurrentPut(t *testing.T) {
	implementations(t, spool.Options{MaxCount: 50}, func(t *testing.T, s *spool.Spool) {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 20 {
					if _, err := s.Put([]byte(fmt.Sprintf("%d-%d", g, i))); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		ents, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 50 {
			t.Errorf("%d records after 160 puts with MaxCount 50", len(ents))
		}
	})
}

const childEnv = "BACKTRAIL_SPOOL_KILL_CHILD"

// TestMain lets the test binary double as the writer that TestKill9 kills.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		writeForever(dir)
		return
	}
	os.Exit(m.Run())
}

// writeForever puts 256 KiB JSON records as fast as it can and prints the
// name of each one after Put returns, so the parent knows what was promised.
func writeForever(dir string) {
	s, err := spool.Open(dir, spool.Options{MaxCount: 1 << 20, MaxBytes: 1 << 40, Valid: json.Valid})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pad := strings.Repeat("x", 256<<10)
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		e, err := s.Put([]byte(fmt.Sprintf(`{"i":%d,"pad":%q}`, i, pad)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintln(out, e.Name)
		out.Flush()
	}
}

// TestKill9 kills a writer with SIGKILL at varying moments and checks that
// the next Open reads every record whose Put had returned, and nothing torn.
func TestKill9(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs SIGKILL")
	}
	for round, after := range []int{1, 3, 7, 12} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		var promised []string
		for len(promised) < after && sc.Scan() {
			promised = append(promised, sc.Text())
		}
		// Kill mid-stream: the child is busy writing the next record.
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() { // names printed before the signal landed
			promised = append(promised, sc.Text())
		}
		cmd.Wait()
		if len(promised) < after {
			t.Fatalf("round %d: child wrote %d records before dying: %s", round, len(promised), stderr.String())
		}

		s, err := spool.Open(dir, spool.Options{MaxCount: 1 << 20, MaxBytes: 1 << 40, Valid: json.Valid})
		if err != nil {
			t.Fatal(err)
		}
		ents, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, e := range ents {
			if _, err := s.Read(e.Name); err != nil {
				t.Errorf("round %d: Read(%s) after kill: %v", round, e.Name, err)
			}
			have[e.Name] = true
		}
		for _, n := range promised {
			if !have[n] {
				t.Errorf("round %d: promised record %s lost", round, n)
			}
		}
		// At most the record being written is missing from the promises.
		if len(ents) > len(promised)+1 {
			t.Errorf("round %d: %d records on disk, %d promised", round, len(ents), len(promised))
		}
	}
}
