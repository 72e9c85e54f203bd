package api_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/api"
)

// smallSentryEvent returns a small Sentry event on one line: an exception
// raised in fn in release, with the given id.
func smallSentryEvent(id, release, fn string) []byte {
	return fmt.Appendf(nil, `{"event_id":%q,"platform":"python","release":%q,"timestamp":"2024-05-02T10:11:12Z",`+
		`"exception":{"values":[{"type":"KeyError","value":"'cart'","stacktrace":{"frames":[`+
		`{"function":"main","filename":"app.py","lineno":3,"in_app":true},`+
		`{"function":%q,"filename":"app.py","lineno":9,"in_app":true}]}}]}}`, id, release, fn)
}

func eventID(n int) string { return fmt.Sprintf("%032x", 0xe0000000+uint64(n)) }

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// elfHeader returns a 64-byte ELF64 little-endian header for x86-64 whose
// section header table is shnum entries at shoff.
func elfHeader(shoff uint64, shnum uint16) []byte {
	h := make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01")
	le := binary.LittleEndian
	le.PutUint16(h[16:], 2)     // ET_EXEC
	le.PutUint16(h[18:], 62)    // EM_X86_64
	le.PutUint32(h[20:], 1)     // EV_CURRENT
	le.PutUint64(h[40:], shoff) // e_shoff
	le.PutUint16(h[52:], 64)    // e_ehsize
	le.PutUint16(h[58:], 64)    // e_shentsize
	le.PutUint16(h[60:], shnum)
	return h
}

// zipOf returns a zip archive holding one deflated file. A declared size
// other than 0 is written as the entry's uncompressed size, true or not.
func zipOf(t *testing.T, name string, content []byte, declared uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	if declared == 0 {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(content)
	} else {
		var comp bytes.Buffer
		fw, _ := flate.NewWriter(&comp, flate.BestCompression)
		fw.Write(content)
		fw.Close()
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(content[:min(len(content), int(declared))]),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// machoBomb is a Mach-O header followed by zeros: n bytes that compress to
// almost nothing.
func machoBomb(n int) []byte {
	b := make([]byte, n)
	copy(b, "\xcf\xfa\xed\xfe\x0c\x00\x00\x01")
	return b
}

// state is what the server holds: the total count of its issues and its
// debug files.
type state struct {
	events     int64
	debugFiles int
}

func serverState(t *testing.T, srv *servertest.Server) state {
	t.Helper()
	srv.Wait(t)
	var issues []server.Issue
	srv.Get(t, "/api/v1/issues?limit=1000", &issues)
	var s state
	for _, is := range issues {
		s.events += is.Count
	}
	var files []server.DebugFile
	srv.Get(t, "/api/v1/debug-files", &files)
	s.debugFiles = len(files)
	return s
}

// TestBadInput sends what a broken or hostile client might: each request
// is answered with its status, and what was accepted before stays intact
// (the same events and debug files, each event still readable).
func TestBadInput(t *testing.T) {
	t.Parallel()
	limits := api.Limits{Body: 256 << 10, Event: 64 << 10, Envelope: 256 << 10, DebugFile: 1 << 20}
	srv := servertest.Start(t, servertest.Options{Limits: limits})
	other := srv.CreateProject(t, "other")
	def := srv.Project

	// What is accepted before: events in both projects and a debug file.
	var good []string
	for i, p := range []*server.Project{def, def, other} {
		id := eventID(i)
		if resp := srv.StoreEvent(t, p, smallSentryEvent(id, "1.0", "load_cart"+strconv.Itoa(i))); resp.Status != 200 {
			t.Fatalf("good event %d: %d %s", i, resp.Status, resp.Body)
		}
		good = append(good, id)
	}
	probe, err := os.ReadFile(crashProbeDWARF(t, "CrashProbeiOS")) // 0.9 MiB
	if err != nil {
		t.Fatal(err)
	}
	if resp := srv.UploadDebugData(t, nil, "CrashProbeiOS", probe); resp.Status != 200 {
		t.Fatalf("good debug file: %d %s", resp.Status, resp.Body)
	}
	before := serverState(t, srv)
	if before != (state{3, 1}) {
		t.Fatalf("before: %+v", before)
	}

	store := func(p *server.Project) string { return fmt.Sprintf("/api/%d/store/", p.ID) }
	envelope := func(p *server.Project) string { return fmt.Sprintf("/api/%d/envelope/", p.ID) }
	auth := func(key string) string { return "Sentry sentry_version=7, sentry_key=" + key }
	ev := smallSentryEvent(eventID(100), "1.0", "f")
	// A Mach-O whose load commands claim more bytes than the file has.
	corruptMachO := append([]byte(nil), probe[:4096]...)
	binary.LittleEndian.PutUint32(corruptMachO[16:], 0xffff)     // ncmds
	binary.LittleEndian.PutUint32(corruptMachO[20:], 0x7fffffff) // sizeofcmds
	// Bytes whose deflated form fits the limits and whose inflated form
	// does not.
	bomb := machoBomb(4 << 20)
	big := bytes.Repeat([]byte(" "), 300<<10)

	tests := []struct {
		name   string
		method string
		path   string
		header []string
		body   []byte
		status int
	}{
		{"garbage to store", "POST", store(def), []string{"X-Sentry-Auth", auth(def.Key)}, []byte("\x00\x01garbage{"), 400},
		{"garbage report", "POST", "/api/v1/reports", []string{"Authorization", "Bearer " + def.Key}, []byte("\x00\x01garbage{"), 415},
		{"report JSON of no known kind", "POST", "/api/v1/reports", []string{"Authorization", "Bearer " + def.Key}, []byte(`{"hello":"world"}`), 415},
		{"report of a future major version", "POST", "/api/v1/reports", []string{"Authorization", "Bearer " + def.Key}, []byte(`{"version":"9.0","kind":"crash"}`), 400},
		{"event id not hex", "POST", store(def), []string{"X-Sentry-Auth", auth(def.Key)}, smallSentryEvent("not-an-id", "1.0", "f"), 400},
		{"truncated gzip", "POST", store(def), []string{"X-Sentry-Auth", auth(def.Key), "Content-Encoding", "gzip"}, gzipped(ev)[:60], 400},
		{"gzip that is not", "POST", store(def), []string{"X-Sentry-Auth", auth(def.Key), "Content-Encoding", "gzip"}, ev, 400},
		{"no key", "POST", store(def), nil, ev, 401},
		{"wrong key", "POST", store(def), []string{"X-Sentry-Auth", auth(strings.Repeat("ab", 16))}, ev, 401},
		{"key of another project", "POST", store(other), []string{"X-Sentry-Auth", auth(def.Key)}, ev, 401},
		{"key of another project, envelope", "POST", envelope(other), []string{"X-Sentry-Auth", auth(def.Key)},
			fmt.Appendf(nil, "{\"event_id\":%q}\n{\"type\":\"event\"}\n%s\n", eventID(100), ev), 401},
		{"wrong report key", "POST", "/api/v1/reports", []string{"Authorization", "Bearer " + strings.Repeat("ab", 16)}, ev, 401},
		{"body over the limit", "POST", store(def), []string{"X-Sentry-Auth", auth(def.Key)}, big, 413},
		{"event over the limit", "POST", store(def), []string{"X-Sentry-Auth", auth(def.Key)}, big[:100<<10], 413},
		{"gzip bomb", "POST", store(def), []string{"X-Sentry-Auth", auth(def.Key), "Content-Encoding", "gzip"}, gzipped(bomb), 413},
		{"envelope header not JSON", "POST", envelope(def), []string{"X-Sentry-Auth", auth(def.Key)}, []byte("garbage\n{\"type\":\"event\"}\n{}\n"), 400},
		{"envelope item longer than the envelope", "POST", envelope(def), []string{"X-Sentry-Auth", auth(def.Key)},
			fmt.Appendf(nil, "{\"event_id\":%q}\n{\"type\":\"event\",\"length\":100000}\n%s\n", eventID(100), ev), 400},
		{"envelope event not JSON", "POST", envelope(def), []string{"X-Sentry-Auth", auth(def.Key)},
			fmt.Appendf(nil, "{\"event_id\":%q}\n{\"type\":\"event\",\"length\":5}\n{{{{{\n", eventID(100)), 400},
		{"debug file without token", "POST", "/api/v1/debug-files", nil, probe, 401},
		{"debug file with a project key", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + def.Key}, probe, 401},
		{"debug file of garbage", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, []byte("garbage, not ELF or Mach-O"), 400},
		{"truncated ELF", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, elfHeader(0, 0)[:40], 400},
		{"ELF with sections past its end", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, elfHeader(1<<40, 0xffff), 400},
		{"truncated Mach-O", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, probe[:100], 400},
		{"Mach-O with load commands past its end", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, corruptMachO, 400},
		{"debug file over the limit", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, machoBomb(2 << 20), 413},
		{"zip bomb", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, zipOf(t, "x.dSYM/Contents/Resources/DWARF/x", bomb, 0), 413},
		{"zip bomb with a lying size", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, zipOf(t, "x.dSYM/Contents/Resources/DWARF/x", bomb, 4096), 400},
		{"zip without debug files", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, zipOf(t, "README", []byte("hello"), 0), 400},
		{"truncated zip", "POST", "/api/v1/debug-files", []string{"Authorization", "Bearer " + srv.AdminToken}, zipOf(t, "x", probe[:1000], 0)[:200], 400},
		{"assemble of garbage", "POST", "/api/0/projects/x/default/files/difs/assemble/", []string{"Authorization", "Bearer " + srv.AdminToken}, []byte("[[["), 400},
		{"chunk named wrong", "POST", "/api/0/organizations/x/chunk-upload/",
			[]string{"Authorization", "Bearer " + srv.AdminToken, "Content-Type", "multipart/form-data; boundary=b"},
			[]byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"0000000000000000000000000000000000000000\"\r\n\r\nhello\r\n--b--\r\n"), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := srv.Do(t, srv.Request(t, tt.method, tt.path, tt.body, tt.header...))
			if resp.Status != tt.status {
				t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, resp.Status, resp.Body, tt.status)
			}
			var e struct{ Error, Detail string }
			if err := jsonUnmarshal(resp.Body, &e); err != nil || e.Error == "" {
				t.Errorf("answer %q is not a JSON error", resp.Body)
			}
			if after := serverState(t, srv); after != before {
				t.Errorf("after: %+v, before: %+v", after, before)
			}
		})
	}
	for _, id := range good {
		if resp := srv.Admin(t, "GET", "/api/v1/events/"+id, nil); resp.Status != http.StatusOK {
			t.Errorf("event %s: %d %s", id, resp.Status, resp.Body)
		}
	}
	// The server still takes events.
	if resp := srv.StoreEvent(t, nil, smallSentryEvent(eventID(200), "1.0", "after")); resp.Status != 200 {
		t.Errorf("event after the bad input: %d %s", resp.Status, resp.Body)
	}
	if after := serverState(t, srv); after != (state{4, 1}) {
		t.Errorf("at the end: %+v", after)
	}
}

// TestRateLimit sets a rate limit: once a project's burst is spent its
// events get 429 with Retry-After and X-Sentry-Rate-Limits and are not
// stored, while other projects go on.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	// 0.1 events per second: the bucket does not refill during the test.
	srv := servertest.Start(t, servertest.Options{Limits: api.Limits{EventsPerS: 0.1, EventsBurst: 2}})
	other := srv.CreateProject(t, "other")
	for i := range 2 {
		if resp := srv.StoreEvent(t, nil, smallSentryEvent(eventID(i), "1.0", "f")); resp.Status != 200 {
			t.Fatalf("event %d within the burst: %d %s", i, resp.Status, resp.Body)
		}
	}
	tests := []struct {
		name string
		req  func() *http.Request
	}{
		{"store", func() *http.Request {
			return srv.Request(t, "POST", fmt.Sprintf("/api/%d/store/", srv.Project.ID), smallSentryEvent(eventID(10), "1.0", "f"),
				"X-Sentry-Auth", "Sentry sentry_key="+srv.Project.Key)
		}},
		{"envelope", func() *http.Request {
			return srv.Request(t, "POST", fmt.Sprintf("/api/%d/envelope/", srv.Project.ID),
				fmt.Appendf(nil, "{\"event_id\":%q}\n{\"type\":\"event\"}\n%s\n", eventID(11), smallSentryEvent(eventID(11), "1.0", "f")),
				"X-Sentry-Auth", "Sentry sentry_key="+srv.Project.Key)
		}},
		{"report", func() *http.Request {
			r := report.Report{Version: report.Version, Kind: report.KindCrash, EventID: eventID(12), Platform: report.PlatformGo,
				Exception: &report.Exception{Type: "panic", Value: "boom"}}
			var buf bytes.Buffer
			report.Encode(&buf, &r)
			return srv.Request(t, "POST", "/api/v1/reports", buf.Bytes(), "Authorization", "Bearer "+srv.Project.Key)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := srv.Do(t, tt.req())
			if resp.Status != http.StatusTooManyRequests {
				t.Fatalf("%d %s, want 429", resp.Status, resp.Body)
			}
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || secs < 1 || secs > 20 {
				t.Errorf("Retry-After %q, want the seconds until a token is back (about 10)", resp.Header.Get("Retry-After"))
			}
			if rl := resp.Header.Get("X-Sentry-Rate-Limits"); !strings.HasPrefix(rl, strconv.Itoa(secs)+":") {
				t.Errorf("X-Sentry-Rate-Limits %q, want %d:…", rl, secs)
			}
		})
	}
	srv.Wait(t)
	for i, want := range map[int]int{0: 200, 1: 200, 10: 404, 11: 404, 12: 404} {
		if resp := srv.Admin(t, "GET", "/api/v1/events/"+eventID(i), nil); resp.Status != want {
			t.Errorf("event %d: %d, want %d", i, resp.Status, want)
		}
	}
	if resp := srv.StoreEvent(t, other, smallSentryEvent(eventID(20), "1.0", "f")); resp.Status != 200 {
		t.Errorf("another project's event: %d %s", resp.Status, resp.Body)
	}
}
