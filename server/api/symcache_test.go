package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/symbolize"
)

// splitSymcache builds the symcache of a binary with split DWARF as
// `backtrail symcache build` does, following its skeletons to the .dwo
// files.
func splitSymcache(t *testing.T, exe string) string {
	t.Helper()
	f, err := debugfile.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.FollowSplitDWARF(exe, "")
	out := filepath.Join(t.TempDir(), filepath.Base(exe)+".symcache")
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := symbolize.WriteObject(w, f.Objects[0], f.Objects[0], symbolize.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if errs := f.SplitDWARFErrors(); len(errs) > 0 {
		t.Fatalf("split DWARF not found: %v", errs)
	}
	return out
}

// TestSymcacheUpload uploads the symcache of a gcc build with split DWARF,
// which the binary only names, and symbolicates native crashes through it
// with the inline frames llvm-symbolizer-14 reads from the binary and its
// .dwo files, in place of the binary uploaded before or after it. A damaged
// symcache is refused and leaves nothing behind; one the server can no
// longer read gives way to the binary; debuginfod serves the binary, never
// the symcache.
func TestSymcacheUpload(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "llvm-symbolizer-14")
	b := fixture.Build(t, fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 5, Fission: "dwo"})
	codeID := buildID(t, b.Path)
	sc := splitSymcache(t, b.Path)
	load := uint64(0x5581_2000_0000)
	vmaddr := loadVMAddr(t, b.Path)
	var addrs, asked []uint64
	for i, a := range pickAddrs(t, b.Path, b.Path, "x86_64", "parse_digits", "opcode_eval", "fib", "main") {
		addrs = append(addrs, a-vmaddr+load)
		asked = append(asked, callSite(a, "x86_64", i == 0))
	}
	want := llvmSymbolize(t, b.Path, asked)
	if len(want[0]) < 2 {
		t.Fatalf("llvm-symbolizer gives no inline frames at 0x%x: %v", asked[0], want[0])
	}

	srv := servertest.Start(t, servertest.Options{})
	// Projects made before the server caches the project keys.
	other := srv.CreateProject(t, "symcache-first")
	stale := srv.CreateProject(t, "stale-symcache")
	data, err := os.ReadFile(sc)
	if err != nil {
		t.Fatal(err)
	}
	damaged := slices.Clone(data)
	for i := len(damaged) / 2; i < len(damaged); i++ {
		damaged[i] ^= 0x5a
	}
	for name, bad := range map[string][]byte{"truncated": data[:len(data)/2], "damaged": damaged} {
		if resp := srv.UploadDebugData(t, nil, name+".symcache", bad); resp.Status != http.StatusBadRequest {
			t.Errorf("%s symcache: %d %s, want 400", name, resp.Status, resp.Body)
		}
	}
	var listed []*server.DebugFile
	srv.Get(t, "/api/v1/debug-files", &listed)
	if len(listed) != 0 {
		t.Fatalf("refused uploads left %+v", listed)
	}

	// The binary alone has symbols and the skeletons' lines, but not the
	// inline frames: they are in the .dwo files it names.
	if fs := srv.UploadDebugFile(t, nil, b.Path); len(fs) != 1 || fs[0].Format != "elf" {
		t.Fatalf("uploaded %+v, want the ELF binary", fs)
	}
	symbolicated := func(p *server.Project, id string) [][]report.Frame {
		t.Helper()
		if resp := srv.StoreEvent(t, p, nativeEvent(id, b.Path, load, addrs, codeID, sentryDebugID(codeID))); resp.Status != 200 {
			t.Fatalf("event: %d %s", resp.Status, resp.Body)
		}
		srv.Wait(t)
		var phys [][]report.Frame
		err := servertest.Poll(30*time.Second, func() error {
			ev := srv.Event(t, id)
			phys = physicalFrames(crashedThread(t, &ev.Report).Frames)
			if len(phys) != len(addrs) || phys[0][0].File == "" {
				return fmt.Errorf("not symbolicated: %d physical frames", len(phys))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return phys
	}
	if phys := symbolicated(nil, eventID(1)); len(phys[0]) != 1 {
		t.Errorf("from the binary alone: %s, want no inline frames", framesString(phys[0]))
	}

	// The symcache, uploaded after it, answers from then on.
	fs := srv.UploadDebugFile(t, nil, sc)
	if len(fs) != 1 || fs[0].Format != "symcache" || fs[0].DebugID != sentryDebugID(codeID) || fs[0].CodeID != codeID ||
		!slices.Contains(fs[0].Features, "debug") {
		t.Fatalf("uploaded %+v, want a symcache of debug id %s with debug information", fs, sentryDebugID(codeID))
	}
	checkInline := func(p *server.Project, id string) {
		t.Helper()
		for i, got := range symbolicated(p, id) {
			if !sameFrames(got, want[i]) {
				t.Errorf("event %s frame %d (0x%x):\n\tserver: %s\n\tllvm:   %v", id, i, addrs[i], framesString(got), want[i])
			}
		}
	}
	checkInline(nil, eventID(2))
	// And so it does when the binary comes after it.
	srv.UploadDebugFile(t, other, sc)
	srv.UploadDebugFile(t, other, b.Path)
	checkInline(other, eventID(3))

	// A symcache of another version, as after an upgrade of the server,
	// cannot be rebuilt: the binary answers for it.
	stored := srv.UploadDebugFile(t, stale, sc)
	srv.UploadDebugFile(t, stale, b.Path)
	blob, err := srv.Blobs.Path(context.Background(), stored[0].Blob)
	if err != nil {
		t.Fatal(err)
	}
	tamper, err := os.OpenFile(blob, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tamper.WriteAt([]byte{99, 0, 0, 0}, 4); err != nil { // the version field
		t.Fatal(err)
	}
	tamper.Close()
	if phys := symbolicated(stale, eventID(4)); len(phys[0]) != 1 {
		t.Errorf("with the symcache unreadable: %s, want the binary's frame", framesString(phys[0]))
	}

	resp := srv.Admin(t, "GET", "/buildid/"+codeID+"/debuginfo", nil)
	exe, err := os.ReadFile(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || !bytes.Equal(resp.Body, exe) {
		t.Errorf("debuginfod answered %d with %d bytes, want the binary's %d", resp.Status, len(resp.Body), len(exe))
	}
}
