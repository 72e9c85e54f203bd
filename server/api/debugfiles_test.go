package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/server"
)

// TestDebugFileLifecycle uploads a universal dSYM (arm64 and x86_64
// slices in one file), uploads it again, and deletes its slices one by one:
// the file that holds both stays until neither is recorded.
func TestDebugFileLifecycle(t *testing.T) {
	t.Parallel()
	arm := fixture.Build(t, fixture.Spec{Lang: "macho-c", Compiler: "clang", Opt: 2, Arch: "arm64"})
	x86 := fixture.Build(t, fixture.Spec{Lang: "macho-c", Compiler: "clang", Opt: 2, Arch: "x86_64"})
	fat := fixture.FatBinary(t, arm, x86)
	srv := servertest.Start(t, servertest.Options{})

	files := srv.UploadDebugFile(t, nil, fat.DWARFPath)
	if len(files) != 2 || files[0].Blob != files[1].Blob || files[0].DebugID == files[1].DebugID {
		t.Fatalf("universal dSYM: %+v, want two slices of one file", files)
	}
	arches := []string{files[0].Arch, files[1].Arch}
	slices.Sort(arches)
	if !slices.Equal(arches, []string{"arm64", "x86_64"}) {
		t.Errorf("arches %q", arches)
	}
	if again := srv.UploadDebugFile(t, nil, fat.DWARFPath); len(again) != 2 || again[0].ID != files[0].ID || again[1].ID != files[1].ID {
		t.Errorf("uploading again recorded %+v, want the same two files", again)
	}
	list := func() []server.DebugFile {
		var fs []server.DebugFile
		srv.Get(t, "/api/v1/debug-files?project=default", &fs)
		return fs
	}
	if n := len(list()); n != 2 {
		t.Fatalf("%d debug files listed, want 2", n)
	}
	fetch := func(f *server.DebugFile) int {
		return srv.Admin(t, "GET", "/buildid/"+f.CodeID+"/debuginfo", nil).Status
	}
	for _, f := range files {
		if st := fetch(f); st != http.StatusOK {
			t.Fatalf("debuginfod for %s: %d", f.Arch, st)
		}
	}

	for _, tt := range []struct {
		path   string
		status int
	}{{"/api/v1/debug-files/999", 404}, {"/api/v1/debug-files/x", 400}} {
		if resp := srv.Admin(t, "DELETE", tt.path, nil); resp.Status != tt.status {
			t.Errorf("DELETE %s: %d, want %d", tt.path, resp.Status, tt.status)
		}
	}

	del := func(f *server.DebugFile) {
		t.Helper()
		if resp := srv.Admin(t, "DELETE", fmt.Sprintf("/api/v1/debug-files/%d", f.ID), nil); resp.Status != http.StatusNoContent {
			t.Fatalf("DELETE %s: %d %s", f.Arch, resp.Status, resp.Body)
		}
	}
	del(files[0])
	if fs := list(); len(fs) != 1 || fs[0].ID != files[1].ID {
		t.Errorf("after deleting %s: %+v", files[0].Arch, fs)
	}
	// The other slice is still served: the file holds it.
	if st := fetch(files[1]); st != http.StatusOK {
		t.Errorf("debuginfod for %s after deleting %s: %d, want 200", files[1].Arch, files[0].Arch, st)
	}
	del(files[1])
	if fs := list(); len(fs) != 0 {
		t.Errorf("after deleting both: %+v", fs)
	}
	if st := fetch(files[1]); st != http.StatusNotFound {
		t.Errorf("debuginfod after deleting both: %d, want 404", st)
	}
	if p, err := srv.Blobs.Path(t.Context(), files[0].Blob); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Errorf("blob of deleted files: %s, %v; want it gone", p, err)
	}
}
