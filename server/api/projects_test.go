package api_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/server"
)

// TestProjectIsolation checks that a project's key reaches its own project
// only: it cannot post to another project's endpoints, read anything, or
// fetch another project's debug files; symbols uploaded to one project do
// not symbolicate another's events; and event ids are per project.
//
// Code review (not tested here): the admin token and project keys are
// compared with crypto/subtle.ConstantTimeCompare (api.go: admin,
// projectByKey), and projectByKey compares against every project's key
// without stopping at a match.
func TestProjectIsolation(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, servertest.Options{})
	a := srv.Project
	b := srv.CreateProject(t, "b")
	dwarf := crashProbeDWARF(t, "CrashProbeiOS")
	fs := srv.UploadDebugFile(t, b, dwarf)
	if len(fs) != 1 || fs[0].ProjectID != b.ID {
		t.Fatalf("upload to b: %+v", fs)
	}
	codeID := fs[0].CodeID

	// The same CrashProbe event, and the same small event, in both.
	raw, data := readSentryEvent(t, filepath.Join(testenv.Testdata(t, "crashprobe", "arm64-debug"), "Call abort().json"))
	shared := eventID(1)
	for _, p := range []*server.Project{a, b} {
		for _, body := range [][]byte{data, smallSentryEvent(shared, "1.0", "in_"+p.Name)} {
			if resp := srv.StoreEvent(t, p, body); resp.Status != 200 {
				t.Fatalf("project %s: %d %s", p.Name, resp.Status, resp.Body)
			}
		}
	}
	srv.Wait(t)

	t.Run("event ids are per project", func(t *testing.T) {
		for _, p := range []*server.Project{a, b} {
			var ev servertest.Event
			srv.Get(t, fmt.Sprintf("/api/v1/events/%s?project=%s", shared, p.Name), &ev)
			if ev.ProjectID != p.ID || ev.Title == "" {
				t.Errorf("event %s in %s: project %d, title %q", shared, p.Name, ev.ProjectID, ev.Title)
			}
			if f := crashedThread(t, &ev.Report).Frames[0]; f.Function != "in_"+p.Name {
				t.Errorf("event %s in %s: top frame %s", shared, p.Name, f.Function)
			}
		}
	})

	t.Run("symbols are per project", func(t *testing.T) {
		probe := map[string]uint64{"CrashProbeiOS": textVMAddr(t, dwarf)}
		for _, p := range []*server.Project{a, b} {
			var ev servertest.Event
			srv.Get(t, fmt.Sprintf("/api/v1/events/%s?project=%s", raw.EventID, p.Name), &ev)
			frames := crashProbeAppFrames(t, raw, &ev.Report, probe)
			if len(frames) == 0 {
				t.Fatalf("no CrashProbeiOS frames")
			}
			for _, f := range frames {
				if symbolicated := f.got[len(f.got)-1].File != ""; symbolicated != (p == b) {
					t.Errorf("project %s: frame 0x%x: %s", p.Name, f.addr, framesString(f.got))
				}
			}
			var missing []*server.MissingSymbols
			srv.Get(t, "/api/v1/missing-symbols?project="+p.Name, &missing)
			listed := false
			for _, m := range missing {
				listed = listed || m.DebugID == fs[0].DebugID
				if m.ProjectID != p.ID {
					t.Errorf("missing symbols of %s lists %+v", p.Name, m)
				}
			}
			if listed != (p == a) {
				t.Errorf("project %s: CrashProbeiOS listed as missing: %v", p.Name, listed)
			}
		}
	})

	t.Run("keys", func(t *testing.T) {
		ev := smallSentryEvent(eventID(2), "1.0", "f")
		tests := []struct {
			name   string
			req    *http.Request
			status int
		}{
			{"a's key to b's store", srv.Request(t, "POST", fmt.Sprintf("/api/%d/store/", b.ID), ev, "X-Sentry-Auth", "Sentry sentry_key="+a.Key), 401},
			{"a's key to b's store by name", srv.Request(t, "POST", "/api/b/store/", ev, "X-Sentry-Auth", "Sentry sentry_key="+a.Key), 401},
			{"a's key in the query to b's store", srv.Request(t, "POST", fmt.Sprintf("/api/%d/store/?sentry_key=%s", b.ID, a.Key), ev), 401},
			{"a's key for b's debug file", srv.Request(t, "GET", "/debuginfod/"+a.Key+"/buildid/"+codeID+"/debuginfo", nil), 404},
			{"a's key as bearer for b's debug file", srv.Request(t, "GET", "/buildid/"+codeID+"/debuginfo", nil, "Authorization", "Bearer "+a.Key), 404},
			{"b's key for b's debug file", srv.Request(t, "GET", "/debuginfod/"+b.Key+"/buildid/"+codeID+"/debuginfo", nil), 200},
			{"no key for a debug file", srv.Request(t, "GET", "/buildid/"+codeID+"/debuginfo", nil), 401},
			{"admin token for any debug file", srv.Request(t, "GET", "/buildid/"+codeID+"/debuginfo", nil, "Authorization", "Bearer "+srv.AdminToken), 200},
		}
		for _, tt := range tests {
			resp := srv.Do(t, tt.req)
			if resp.Status != tt.status {
				t.Errorf("%s: %d %.200s, want %d", tt.name, resp.Status, resp.Body, tt.status)
			}
		}
	})

	t.Run("reads need the admin token", func(t *testing.T) {
		paths := []struct{ method, path string }{
			{"GET", "/api/v1/projects"},
			{"GET", "/api/v1/issues"},
			{"GET", "/api/v1/issues/1"},
			{"PUT", "/api/v1/issues/1"},
			{"GET", "/api/v1/issues/1/events"},
			{"GET", "/api/v1/events/" + shared},
			{"GET", "/api/v1/events/" + shared + "/raw"},
			{"GET", "/api/v1/missing-symbols"},
			{"GET", "/api/v1/debug-files"},
			{"POST", "/api/v1/debug-files"},
			{"DELETE", "/api/v1/debug-files/1"},
			{"GET", "/api/0/organizations/x/chunk-upload/"},
			{"POST", "/api/0/organizations/x/chunk-upload/"},
			{"POST", "/api/0/projects/x/default/files/difs/assemble/"},
		}
		for _, p := range paths {
			for _, auth := range []struct{ name, header string }{
				{"none", ""}, {"a's key", "Bearer " + a.Key}, {"b's key", "Bearer " + b.Key},
				{"wrong token", "Bearer " + srv.AdminToken[:len(srv.AdminToken)-1] + "x"}, {"token prefix", "Bearer " + srv.AdminToken[:8]},
			} {
				req := srv.Request(t, p.method, p.path, []byte(`{"status":"resolved"}`))
				if auth.header != "" {
					req.Header.Set("Authorization", auth.header)
				}
				if resp := srv.Do(t, req); resp.Status != http.StatusUnauthorized {
					t.Errorf("%s %s with %s: %d %.200s, want 401", p.method, p.path, auth.name, resp.Status, resp.Body)
				}
			}
		}
		// Nothing changed: the debug file and issues are there.
		var files []server.DebugFile
		srv.Get(t, "/api/v1/debug-files", &files)
		var issues []server.Issue
		srv.Get(t, "/api/v1/issues?status=unresolved", &issues)
		if len(files) != 1 || len(issues) != 4 {
			t.Errorf("%d debug files, %d unresolved issues; want 1 and 4", len(files), len(issues))
		}
	})
}
