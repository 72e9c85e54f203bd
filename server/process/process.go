// Package process is the server's pipeline from an accepted event to an
// issue: decode the raw payload into a report, symbolicate native frames
// with the project's debug files (module-relative addresses, caller-address
// adjustment, inline frames expanded, names demangled), mark in-app frames,
// fingerprint, and record the result. Workers lease events from the store,
// so several processes (replicas) can share one queue.
package process

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/group"
	"github.com/backtrail/backtrail/server/ingest"
	"github.com/backtrail/backtrail/symbolize"
)

// Processor runs the pipeline. Set the fields, then call Run.
type Processor struct {
	Store   server.Store
	Symbols *Symbols
	// Name identifies this node's leases (default the host name and pid).
	Name string
	// Workers is the number of events processed in parallel, over all
	// batches in flight (default GOMAXPROCS − 1, at least 1: processing
	// leaves a processor to the HTTP handlers and the writer, whose
	// clients are waiting, where Go's scheduler would otherwise serve the
	// runnable processing goroutines first and notice network input late).
	// Batch the events leased and completed per transaction (default 64);
	// Lease how long a lease lasts (default 30 s).
	Workers int
	Batch   int
	Lease   time.Duration
	// Loops is the number of batches in flight (default 2): while one
	// batch waits for the database (claiming, or recording its results
	// behind other writers), the next one is being processed.
	Loops int
	// Poll is how often an idle processor looks for work it was not told
	// about (default 1 s), such as events accepted by another replica.
	Poll time.Duration
	// Gather is how long a loop waits after a batch smaller than Batch
	// before claiming again (default 100 ms, at most Poll): claiming and
	// recording cost a transaction each whatever the batch size, so under
	// moderate load waiting for a fuller batch costs less CPU per event
	// and holds the database (SQLite's one writer) less often.
	Gather time.Duration
	Logger *slog.Logger

	wake chan struct{}
	sem  chan struct{} // a token per running worker
	once sync.Once
}

func (p *Processor) init() {
	p.once.Do(func() {
		p.wake = make(chan struct{}, 1)
		if p.Workers <= 0 {
			p.Workers = max(1, runtime.GOMAXPROCS(0)-1)
		}
		p.sem = make(chan struct{}, p.Workers)
		if p.Loops <= 0 {
			p.Loops = 2
		}
		if p.Batch <= 0 {
			p.Batch = 64
		}
		if p.Lease <= 0 {
			p.Lease = 30 * time.Second
		}
		if p.Poll <= 0 {
			p.Poll = time.Second
		}
		if p.Gather <= 0 {
			p.Gather = min(100*time.Millisecond, p.Poll)
		}
		if p.Logger == nil {
			p.Logger = slog.Default()
		}
		if p.Name == "" {
			p.Name = fmt.Sprintf("node-%d", time.Now().UnixNano())
		}
	})
}

// Notify tells the processor that events were queued.
func (p *Processor) Notify() {
	p.init()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run processes queued events until ctx is done.
func (p *Processor) Run(ctx context.Context) error {
	p.init()
	var wg sync.WaitGroup
	for range p.Loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.loop(ctx)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// loop claims, processes and records batches until ctx is done.
func (p *Processor) loop(ctx context.Context) {
	t := time.NewTicker(p.Poll)
	defer t.Stop()
	for {
		n, err := p.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			p.Logger.Error("processing", "err", err)
		}
		if n > 0 && err == nil {
			if n == p.Batch {
				p.Notify() // more may be queued: another loop can take it
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(p.Gather):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-t.C:
		}
	}
}

// RunOnce leases one batch, processes it and records the results. It
// returns the number of events processed.
func (p *Processor) RunOnce(ctx context.Context) (int, error) {
	p.init()
	qs, err := p.Store.Claim(ctx, p.Name, p.Batch, p.Lease)
	if err != nil || len(qs) == 0 {
		return 0, err
	}
	out := make([]*server.Processed, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Add(1)
		p.sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-p.sem }()
			out[i] = p.Process(ctx, q)
		}()
	}
	wg.Wait()
	return len(qs), p.Store.Complete(ctx, out)
}

// Process runs the pipeline on one event. Failures are recorded in the
// result, never returned: a bad payload must not stop the queue.
func (p *Processor) Process(ctx context.Context, q *server.Queued) (res *server.Processed) {
	p.init()
	res = &server.Processed{ID: q.ID, ProjectID: q.ProjectID, Worker: p.Name, Attempt: q.Attempts}
	defer func() {
		if r := recover(); r != nil {
			res.Err = fmt.Errorf("processing failed: %v", r)
			p.Logger.Error("processing panicked", "event", q.EventID, "panic", r)
		}
	}()
	if q.Err != nil {
		res.Err = q.Err
		return res
	}
	r, err := ingest.Decode(q.Format, q.Raw)
	if err != nil {
		res.Err = err
		return res
	}
	r.EventID = q.EventID
	if r.Timestamp.IsZero() {
		r.Timestamp = q.Received
	}
	res.Report = r
	if p.Symbols != nil {
		res.Missing = p.symbolicate(ctx, q.ProjectID, r)
	}
	MarkInApp(r)
	g := group.Group(r)
	res.Fingerprint, res.Title, res.Culprit, res.GroupingVersion = g.Fingerprint, g.Title, g.Culprit, g.Version
	return res
}

// symbolicate fills in native frames and returns the modules that had
// frames but no debug file.
func (p *Processor) symbolicate(ctx context.Context, projectID int64, r *report.Report) []server.MissingModule {
	s := &symbolicator{p: p, ctx: ctx, project: projectID, r: r, missing: map[string]server.MissingModule{}, tables: map[*report.Module]*Table{}}
	for i := range r.Threads {
		r.Threads[i].Frames = s.frames(r.Threads[i].Frames, true)
	}
	for i := range r.Trail {
		r.Trail[i].Frames = s.frames(r.Trail[i].Frames, false)
	}
	if r.Hang != nil {
		for i := range r.Hang.Samples {
			r.Hang.Samples[i].Frames = s.frames(r.Hang.Samples[i].Frames, true)
		}
	}
	if r.Snapshot != nil {
		for i := range r.Snapshot.Stacks {
			r.Snapshot.Stacks[i].Frames = s.frames(r.Snapshot.Stacks[i].Frames, true)
		}
	}
	if r.Audit != nil {
		for i := range r.Audit.Entries {
			r.Audit.Entries[i].Frames = s.frames(r.Audit.Entries[i].Frames, false)
		}
	}
	var out []server.MissingModule
	for _, m := range s.missing {
		out = append(out, m)
	}
	return out
}

type symbolicator struct {
	p       *Processor
	ctx     context.Context
	project int64
	r       *report.Report
	missing map[string]server.MissingModule
	buf     []symbolize.Frame
	// tables holds the table of each module looked up so far, nil for
	// one without symbols: frames mostly share a few modules, and
	// Symbols.Lookup costs a formatted key and a lock each time.
	tables map[*report.Module]*Table
}

// table returns the symbols of module m, or nil (recording m as missing
// when it has no debug file).
func (s *symbolicator) table(m *report.Module) *Table {
	if t, ok := s.tables[m]; ok {
		return t
	}
	t, err := s.p.Symbols.Lookup(s.ctx, s.project, m.DebugID, m.CodeID, m.Arch)
	if err != nil {
		if !errors.Is(err, ErrNoSymbols) {
			s.p.Logger.Warn("symbols", "module", m.Name, "debug_id", m.DebugID, "err", err)
		}
		key := m.DebugID + "/" + m.CodeID
		s.missing[key] = server.MissingModule{DebugID: missingDebugID(m), CodeID: strings.ToLower(m.CodeID), Name: moduleName(m), Arch: m.Arch}
		t = nil
	}
	s.tables[m] = t
	return t
}

// frames symbolicates one stack. exactTop says the first frame's address
// is the instruction itself (a thread's or sample's program counter) rather
// than a return address.
func (s *symbolicator) frames(fs []report.Frame, exactTop bool) []report.Frame {
	var out []report.Frame
	changed := false
	for k, f := range fs {
		// Frames with an address are symbolicated even when the client
		// named them (Apple SDKs name frames from symbol tables, without
		// files, lines or inlined calls); frames that already have a
		// file and line (Go SDK, source languages) are kept.
		if f.Addr == 0 || f.Function != "" && f.File != "" && f.Line != 0 {
			out = append(out, f)
			continue
		}
		m := moduleFor(s.r, f)
		if m == nil || m.DebugID == "" && m.CodeID == "" {
			out = append(out, f)
			continue
		}
		t := s.table(m)
		if t == nil {
			out = append(out, f)
			continue
		}
		addr := uint64(f.Addr)
		if !(exactTop && k == 0) {
			addr = symbolize.CallerAddress(addr, archOf(s.r, m))
		}
		vmaddr := uint64(m.ImageVMAddr)
		if vmaddr == 0 {
			vmaddr = t.ImageVMAddr
		}
		fileAddr, ok := symbolize.FileAddress(addr, uint64(m.ImageAddr), vmaddr)
		if !ok {
			out = append(out, f)
			continue
		}
		s.buf = t.Frames(fileAddr, s.buf[:0])
		if len(s.buf) == 0 {
			out = append(out, f)
			continue
		}
		changed = true
		for _, sf := range s.buf {
			nf := report.Frame{Addr: f.Addr, Module: moduleName(m), Function: sf.Function, File: sf.File,
				Line: int(sf.Line), Column: int(sf.Column), Inlined: sf.Inlined, InApp: f.InApp}
			if sf.RawFunction != sf.Function {
				nf.RawFunction = sf.RawFunction
			}
			out = append(out, nf)
		}
	}
	if !changed {
		return fs
	}
	return out
}

// missingDebugID returns the debug id a debug file for m will be recorded
// with: the one the producer sent, else one derived from the code id as
// package debugfile derives it (an ELF build id read as a little-endian
// GUID; a Mach-O UUID as it is). The upload of the file looks up the
// events that missed it by that id.
func missingDebugID(m *report.Module) string {
	if m.DebugID != "" {
		return strings.ToLower(m.DebugID)
	}
	b, err := hex.DecodeString(m.CodeID)
	if err != nil || len(b) == 0 {
		return ""
	}
	var d debugfile.DebugID
	switch m.Type {
	case "elf":
		copy(d.UUID[:], b)
		u := &d.UUID
		u[0], u[1], u[2], u[3] = u[3], u[2], u[1], u[0]
		u[4], u[5] = u[5], u[4]
		u[6], u[7] = u[7], u[6]
	case "macho":
		if len(b) != 16 {
			return ""
		}
		copy(d.UUID[:], b)
	default:
		return ""
	}
	return d.String()
}

// moduleFor finds the module a frame belongs to: the one it names, else
// the one whose image holds its address.
func moduleFor(r *report.Report, f report.Frame) *report.Module {
	if f.Module != "" {
		for i := range r.Modules {
			m := &r.Modules[i]
			if f.Module == m.Name || f.Module == m.Path || strings.EqualFold(f.Module, m.DebugID) {
				return m
			}
		}
	}
	for i := range r.Modules {
		m := &r.Modules[i]
		if m.ImageAddr == 0 && m.ImageSize == 0 {
			continue
		}
		if f.Addr >= m.ImageAddr && (m.ImageSize == 0 || uint64(f.Addr-m.ImageAddr) < m.ImageSize) {
			return m
		}
	}
	return nil
}

func moduleName(m *report.Module) string {
	if m.Name != "" {
		return m.Name
	}
	if i := strings.LastIndexByte(m.Path, '/'); i >= 0 {
		return m.Path[i+1:]
	}
	return m.Path
}

func archOf(r *report.Report, m *report.Module) string {
	if m.Arch != "" {
		return m.Arch
	}
	return r.Arch
}
