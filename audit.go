package backtrail

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/backtrail/backtrail/report"
)

// Audit counts sensitive calls per kind and unique calling stack. The
// counters live in a fixed lock-free table, so after the first call from a
// given stack an Audit costs one frame-pointer walk, one probe and an atomic
// add, and allocates nothing.

// auditTableSize bounds the distinct (kind, stack) pairs counted per
// client. Calls from pairs that find no free slot are counted as dropped
// rather than evicting a counter.
const auditTableSize = 4096

var kindSeed = maphash.MakeSeed()

type auditEntry struct {
	kind     string
	stack    *stackRecord
	count    atomic.Uint64
	first    int64 // unix nanoseconds; set before publication
	last     atomic.Int64
	reported atomic.Uint64 // count already sent in an audit report
}

type auditTable struct {
	t       *table[auditEntry]
	dropped atomic.Uint64

	mu          sync.Mutex // serialises audit reports
	since       time.Time
	droppedSent uint64
}

func newAuditTable() *auditTable {
	return &auditTable{t: newTable[auditEntry](auditTableSize)}
}

// Audit records that the caller performs a sensitive operation of the
// given kind ("exec", "net.dial", "contacts.read", ...) and counts it
// against the caller's stack. It allocates nothing once a stack has been
// seen. Counts appear in AuditSnapshot and in the audit reports ReportAudit
// writes.
//
//go:noinline
func Audit(kind string) { CurrentClient().audit(kind, 1) }

// Audit is the package-level Audit for this client.
//
//go:noinline
func (c *Client) Audit(kind string) { c.audit(kind, 1) }

// audit counts a call of kind from the stack skip frames above its caller.
//
//go:noinline
func (c *Client) audit(kind string, skip int) {
	s := Callers(skip + 1)
	c.audits.add(kind, &s, c.now().UnixNano())
}

func (a *auditTable) add(kind string, s *Stack, now int64) {
	h := hashMix(s.hash, maphash.String(kindSeed, kind))
	if e := a.t.find(h, func(e *auditEntry) bool { return e.kind == kind && e.stack.matches(s) }); e != nil {
		e.count.Add(1)
		e.last.Store(now)
		return
	}
	rec := internStack(s)
	e := &auditEntry{kind: kind, stack: rec, first: now}
	e.last.Store(now)
	got := a.t.tryInsert(h, e, func(o *auditEntry) bool { return o.kind == kind && o.stack == rec })
	if got == nil {
		a.dropped.Add(1)
		return
	}
	got.count.Add(1)
	if got != e {
		got.last.Store(now)
	}
}

// AuditRecord is the count of one kind of call from one stack.
type AuditRecord struct {
	Kind        string
	Stack       Stack
	Count       uint64
	First, Last time.Time
}

// AuditSnapshot returns the default client's audit counts, most frequent
// first.
func AuditSnapshot() []AuditRecord { return CurrentClient().AuditSnapshot() }

// AuditSnapshot returns this client's audit counts, most frequent first. It
// reads the counters without stopping writers, so concurrent calls may or
// may not be included.
func (c *Client) AuditSnapshot() []AuditRecord {
	var out []AuditRecord
	for i := range c.audits.t.slots {
		e := c.audits.t.slots[i].entry.Load()
		if e == nil || e.count.Load() == 0 {
			continue
		}
		out = append(out, AuditRecord{
			Kind:  e.kind,
			Stack: e.stack.stack(),
			Count: e.count.Load(),
			First: time.Unix(0, e.first),
			Last:  time.Unix(0, e.last.Load()),
		})
	}
	slices.SortFunc(out, func(a, b AuditRecord) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Compare(a.Stack.hash, b.Stack.hash)
	})
	return out
}

// ReportAudit writes an audit report to the default client's spool.
func ReportAudit() error { return CurrentClient().ReportAudit() }

// ReportAudit writes an audit report (docs/report-format.md §10) with the
// calls counted since the previous one, if there were any, and spools it.
func (c *Client) ReportAudit() error {
	a := c.audits
	a.mu.Lock()
	defer a.mu.Unlock()
	now := c.now()
	au := &report.Audit{Since: a.since}
	type sent struct {
		e *auditEntry
		n uint64
	}
	var marks []sent
	for i := range a.t.slots {
		e := a.t.slots[i].entry.Load()
		if e == nil {
			continue
		}
		n := e.count.Load()
		delta := n - e.reported.Load()
		if delta == 0 {
			continue
		}
		s := e.stack.stack()
		au.Entries = append(au.Entries, report.AuditEntry{
			Kind:      e.kind,
			Count:     delta,
			First:     time.Unix(0, e.first).UTC(),
			Last:      time.Unix(0, e.last.Load()).UTC(),
			Hash:      fmt.Sprintf("%016x", s.hash),
			Frames:    reportFrames(s.Frames()),
			Truncated: s.truncated,
		})
		marks = append(marks, sent{e, n})
	}
	d := a.dropped.Load()
	au.Dropped = d - a.droppedSent
	if len(au.Entries) == 0 && au.Dropped == 0 {
		return nil
	}
	slices.SortFunc(au.Entries, func(x, y report.AuditEntry) int { return cmp.Compare(y.Count, x.Count) })
	r := c.newReport(report.KindAudit)
	r.Audit = au
	if err := c.emit(r); err != nil {
		return err
	}
	for _, m := range marks {
		m.e.reported.Store(m.n)
	}
	a.droppedSent = d
	a.since = now.UTC()
	return nil
}

// Ready-made audits for the usual sensitive calls, so a program can audit
// without editing every call site. Each counts against the stack of the
// code that made the call.

// Kinds used by the ready-made audits.
const (
	AuditKindDial = "net.dial"
	AuditKindHTTP = "http.request"
	AuditKindExec = "exec"
	AuditKindOpen = "file.open"
)

// AuditDialer returns a copy of d (a zero Dialer if d is nil) whose
// ControlContext hook counts every connection attempt as AuditKindDial
// before running d's own hook. The hook runs on the goroutine that dials,
// which for DialContext is the caller's unless the dialer races addresses.
func AuditDialer(d *net.Dialer) *net.Dialer {
	var nd net.Dialer
	if d != nil {
		nd = *d
	}
	prevCtx, prev := nd.ControlContext, nd.Control
	nd.Control = nil
	nd.ControlContext = func(ctx context.Context, network, address string, rc syscall.RawConn) error {
		CurrentClient().audit(AuditKindDial, 1)
		switch {
		case prevCtx != nil:
			return prevCtx(ctx, network, address, rc)
		case prev != nil:
			return prev(network, address, rc)
		}
		return nil
	}
	return &nd
}

// AuditTransport wraps rt (http.DefaultTransport if nil) so that each
// request counts as AuditKindHTTP against the stack that made it.
func AuditTransport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return auditTransport{rt}
}

type auditTransport struct{ rt http.RoundTripper }

//go:noinline
func (t auditTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	CurrentClient().audit(AuditKindHTTP, 1)
	return t.rt.RoundTrip(req)
}

// AuditStart counts cmd as AuditKindExec against the caller's stack and
// starts it.
//
//go:noinline
func AuditStart(cmd *exec.Cmd) error {
	CurrentClient().audit(AuditKindExec, 1)
	return cmd.Start()
}

// AuditOpen counts an AuditKindOpen against the caller's stack and opens
// the named file, like os.Open.
//
//go:noinline
func AuditOpen(name string) (*os.File, error) {
	CurrentClient().audit(AuditKindOpen, 1)
	return os.Open(name)
}

// AuditOpenFile counts an AuditKindOpen against the caller's stack and
// opens the named file, like os.OpenFile.
//
//go:noinline
func AuditOpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	CurrentClient().audit(AuditKindOpen, 1)
	return os.OpenFile(name, flag, perm)
}
