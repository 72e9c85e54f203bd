package backtrail

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backtrail/backtrail/report"
)

// Fatal errors. Some failures never reach a deferred recover: concurrent
// map writes, deadlock, stack exhaustion, an unrecovered panic on a
// goroutine the SDK did not start. runtime/debug.SetCrashOutput (Go 1.23)
// makes the runtime copy its dying words to a file as well as to stderr.
// Each process writes crash-<pid>.log in the spool directory; the next
// client to open the directory parses any non-empty file into a crash
// report (traceback.go), spools it and removes the file.

const (
	crashPrefix = "crash-"
	crashSuffix = ".log"
	// crashStale is the age at which an empty crash file is taken to belong
	// to a process that exited without Close, and removed.
	crashStale = 24 * time.Hour
	// crashSettle keeps a fresh, non-empty file alone: its process may be
	// still writing it as it dies.
	crashSettle = 2 * time.Second
	// crashMaxRead bounds how much of a crash file is read.
	crashMaxRead = 4 << 20
)

// crashOwner is the client whose file the runtime currently writes crash
// output to; SetCrashOutput is process-wide, so the last client to set it
// wins and only it may unset it.
var (
	crashMu    sync.Mutex
	crashOwner *Client
)

func (c *Client) startCrashOutput() error {
	name := filepath.Join(c.opts.SpoolDir, fmt.Sprintf("%s%d%s", crashPrefix, os.Getpid(), crashSuffix))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close() // SetCrashOutput keeps its own duplicate of the descriptor
	crashMu.Lock()
	defer crashMu.Unlock()
	if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
		os.Remove(name)
		return err
	}
	c.crashFile = name
	crashOwner = c
	return nil
}

func (c *Client) stopCrashOutput() {
	crashMu.Lock()
	defer crashMu.Unlock()
	if crashOwner != c {
		return // another client took over, perhaps with the same file
	}
	debug.SetCrashOutput(nil, debug.CrashOptions{})
	crashOwner = nil
	if fi, err := os.Stat(c.crashFile); err == nil && fi.Size() == 0 {
		os.Remove(c.crashFile)
	}
}

// collectCrashes turns crash files left by other processes into reports.
func (c *Client) collectCrashes() {
	names, _ := filepath.Glob(filepath.Join(c.opts.SpoolDir, crashPrefix+"*"+crashSuffix))
	self := strconv.Itoa(os.Getpid())
	now := time.Now()
	for _, name := range names {
		base := filepath.Base(name)
		pid := strings.TrimSuffix(strings.TrimPrefix(base, crashPrefix), crashSuffix)
		if pid == self {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			continue
		}
		if fi.Size() == 0 {
			if now.Sub(fi.ModTime()) > crashStale {
				os.Remove(name)
			}
			continue
		}
		if now.Sub(fi.ModTime()) < crashSettle {
			continue
		}
		data, err := readHead(name, crashMaxRead)
		if err != nil {
			continue
		}
		if r := c.crashReport(data, fi.ModTime()); r != nil {
			if err := c.emit(r); err != nil && err != errDropped {
				c.log.Warn("backtrail: crash report not spooled", "file", name, "err", err)
				continue // keep the file; try again next start
			}
		}
		os.Remove(name)
	}
}

func readHead(name string, n int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, 0)
	if k > 0 {
		err = nil
	}
	return buf[:k], err
}

// crashReport builds a crash report from crash output, or returns nil when
// there is nothing to report: the output of a panic the SDK already
// recorded before re-panicking (its finish frame is on the stack).
func (c *Client) crashReport(text []byte, when time.Time) *report.Report {
	tb := report.ParseTraceback(text)
	if tb.Exception == nil && len(tb.Threads) == 0 {
		return nil
	}
	for _, th := range tb.Threads {
		if th.Crashed {
			for _, f := range th.Frames {
				if f.Function == sdkPackage+".(*Client).finish" {
					return nil
				}
			}
		}
	}
	r := c.newReport(report.KindCrash)
	r.Timestamp = when.UTC()
	r.Exception = tb.Exception
	r.Threads = tb.Threads
	if tb.Truncated {
		r.Truncated = &report.Truncated{Threads: true}
	}
	for i := range r.Threads {
		for j := range r.Threads[i].Frames {
			f := &r.Threads[i].Frames[j]
			f.InApp = inApp(f.Function)
		}
	}
	return r
}
