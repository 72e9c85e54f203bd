package backtrail_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/backtrail/backtrail"
	"github.com/backtrail/backtrail/report"
)

// auditCounts returns kind's counts by first in-app frame "function:line".
func auditCounts(recs []backtrail.AuditRecord, kind string) map[string]uint64 {
	m := map[string]uint64{}
	for _, r := range recs {
		if r.Kind != kind {
			continue
		}
		for _, f := range r.Stack.Frames() {
			if f.InApp {
				m[f.Function+":"+itoa(f.Line)] += r.Count
				break
			}
		}
	}
	return m
}

// TestAuditExecPerCallSite: an audited exec is counted per call site, and
// the audit report carries the counts since the previous report.
func TestAuditExecPerCallSite(t *testing.T) {
	if _, err := exec.LookPath("true"); err != nil {
		t.Skip("no true(1)")
	}
	if err := backtrail.Init(backtrail.Options{}); err != nil {
		t.Fatal(err)
	}
	run := func(cmd *exec.Cmd) {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	var siteA, siteB string
	for range 3 {
		cmd := exec.Command("true")
		siteA = nextLine()
		if err := backtrail.AuditStart(cmd); err != nil {
			t.Fatal(err)
		}
		run(cmd)
	}
	for range 2 {
		cmd := exec.Command("true")
		siteB = nextLine()
		if err := backtrail.AuditStart(cmd); err != nil {
			t.Fatal(err)
		}
		run(cmd)
	}
	counts := auditCounts(backtrail.AuditSnapshot(), backtrail.AuditKindExec)
	if len(counts) != 2 || counts[siteA] != 3 || counts[siteB] != 2 {
		t.Errorf("exec counts %v, want %s: 3, %s: 2", counts, siteA, siteB)
	}

	// Audit reports carry deltas.
	if err := backtrail.ReportAudit(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	backtrail.AuditStart(cmd)
	run(cmd)
	if err := backtrail.ReportAudit(); err != nil {
		t.Fatal(err)
	}
	if err := backtrail.ReportAudit(); err != nil { // nothing new: no report
		t.Fatal(err)
	}
	rs := pending(t, backtrail.CurrentClient())
	if len(rs) != 2 {
		t.Fatalf("%d audit reports, want 2", len(rs))
	}
	var total [2]uint64
	for i, r := range rs {
		if r.Kind != report.KindAudit {
			t.Fatalf("report %d is %s", i, r.Kind)
		}
		for _, e := range r.Audit.Entries {
			total[i] += e.Count
		}
	}
	if total != [2]uint64{5, 1} {
		t.Errorf("audit report totals %v, want [5 1]", total)
	}
}

func TestAuditWrappers(t *testing.T) {
	if err := backtrail.Init(backtrail.Options{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()

	// http.RoundTripper.
	hc := &http.Client{Transport: backtrail.AuditTransport(nil)}
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	// net.Dialer control hook, chained to the dialer's own.
	var chained bool
	d := backtrail.AuditDialer(&net.Dialer{Control: func(string, string, syscall.RawConn) error { chained = true; return nil }})
	conn, err := d.DialContext(context.Background(), "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()

	// File opens.
	name := filepath.Join(t.TempDir(), "f")
	f, err := backtrail.AuditOpenFile(name, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err = backtrail.AuditOpen(name); err != nil {
		t.Fatal(err)
	}
	f.Close()

	recs := backtrail.AuditSnapshot()
	for kind, want := range map[string]uint64{backtrail.AuditKindHTTP: 1, backtrail.AuditKindDial: 1, backtrail.AuditKindOpen: 2} {
		var n uint64
		for _, v := range auditCounts(recs, kind) {
			n += v
		}
		if n != want {
			t.Errorf("%s counted %d times, want %d", kind, n, want)
		}
	}
	if !chained {
		t.Error("AuditDialer did not chain the dialer's Control hook")
	}
	for _, r := range recs {
		if r.Kind == backtrail.AuditKindOpen {
			if top := r.Stack.Frames()[0].Function; !strings.HasSuffix(top, ".TestAuditWrappers") {
				t.Errorf("file open counted against %s, want the test", top)
			}
		}
	}
}

func TestAuditNoAllocs(t *testing.T) {
	c := newClient(t, backtrail.Options{})
	c.Audit("warm")
	if n := testing.AllocsPerRun(100, func() { c.Audit("warm") }); n != 0 {
		t.Errorf("Audit from a known stack: %v allocs", n)
	}
}
