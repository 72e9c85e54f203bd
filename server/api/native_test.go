package api_test

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
)

// sentryDebugID derives the debug id Sentry SDKs send for an ELF file from
// its build id: the first 16 bytes read as a little-endian GUID.
func sentryDebugID(buildID string) string {
	b, _ := hex.DecodeString(buildID)
	var u [16]byte
	copy(u[:], b)
	d1 := binary.LittleEndian.Uint32(u[0:4])
	d2 := binary.LittleEndian.Uint16(u[4:6])
	d3 := binary.LittleEndian.Uint16(u[6:8])
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", d1, d2, d3, u[8:10], u[10:16])
}

// loadVMAddr returns the lowest p_vaddr of an ELF file's PT_LOAD segments.
func loadVMAddr(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return p.Vaddr &^ (p.Align - 1)
		}
	}
	t.Fatalf("%s has no PT_LOAD", path)
	return 0
}

// nativeEvent is a Sentry event of a native crash in an ELF image loaded at
// load, frames innermost first, as sentry-native sends them.
func nativeEvent(id, exe string, load uint64, addrs []uint64, codeID, debugID string) []byte {
	var frames []string
	for i := len(addrs) - 1; i >= 0; i-- {
		frames = append(frames, fmt.Sprintf(`{"instruction_addr":"0x%x"}`, addrs[i]))
	}
	image := fmt.Sprintf(`"type":"elf","code_file":"/opt/calc/%s","image_addr":"0x%x","image_size":1048576,"arch":"x86_64","code_id":%q`, filepath.Base(exe), load, codeID)
	if debugID != "" {
		image += fmt.Sprintf(`,"debug_id":%q`, debugID)
	}
	return fmt.Appendf(nil, `{"event_id":%q,"platform":"native","release":"calc@1.0","level":"fatal",`+
		`"contexts":{"os":{"name":"Linux"}},`+
		`"exception":{"values":[{"type":"SIGSEGV","value":"Segfault","mechanism":{"type":"signalhandler","handled":false},"stacktrace":{"frames":[%s]}}]},`+
		`"debug_meta":{"images":[{%s}]}}`, id, strings.Join(frames, ","), image)
}

// TestNativeELF posts sentry-native style events of a crash in a gcc-built
// ELF fixture before its debug file is uploaded, one naming the image by
// debug id and code id, one by code id alone: both list the image as
// missing, both are symbolicated once the debug file arrives, frame by frame
// as llvm-symbolizer-14 reads the debug file.
func TestNativeELF(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "llvm-symbolizer-14")
	c := newNativeCrash(t)
	b, codeID, load, addrs, want := c.bin, c.codeID, c.load, c.addrs, c.want

	srv := servertest.Start(t, servertest.Options{})
	events := []struct{ name, id, debugID string }{
		{"debug id and code id", eventID(1), sentryDebugID(codeID)},
		{"code id alone", eventID(2), ""},
	}
	for _, e := range events {
		if resp := srv.StoreEvent(t, nil, nativeEvent(e.id, b.Path, load, addrs, codeID, e.debugID)); resp.Status != 200 {
			t.Fatalf("%s: %d %s", e.name, resp.Status, resp.Body)
		}
	}
	srv.Wait(t)
	var missing []*server.MissingSymbols
	srv.Get(t, "/api/v1/missing-symbols", &missing)
	if len(missing) != 1 || missing[0].CodeID != codeID || missing[0].Events != 2 {
		t.Errorf("missing symbols %+v, want the fixture's image, missed by 2 events", missing)
	}
	fs := srv.UploadDebugFile(t, nil, b.Debug)
	if len(fs) != 1 || fs[0].DebugID != sentryDebugID(codeID) {
		t.Fatalf("uploaded %+v, want debug id %s", fs, sentryDebugID(codeID))
	}
	for _, e := range events {
		t.Run(e.name, func(t *testing.T) {
			var phys [][]report.Frame
			err := servertest.Poll(30*time.Second, func() error {
				ev := srv.Event(t, e.id)
				phys = physicalFrames(crashedThread(t, &ev.Report).Frames)
				if len(phys) != len(addrs) {
					return fmt.Errorf("%d physical frames, want %d", len(phys), len(addrs))
				}
				if phys[0][0].File == "" {
					return fmt.Errorf("not symbolicated: %s", framesString(phys[0]))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, got := range phys {
				if !sameFrames(got, want[i]) {
					t.Errorf("frame %d (0x%x):\n\tserver: %s\n\tllvm:   %v", i, addrs[i], framesString(got), want[i])
				}
			}
		})
	}
	srv.Wait(t)
	srv.Get(t, "/api/v1/missing-symbols", &missing)
	if len(missing) != 0 {
		t.Errorf("missing symbols after the upload: %+v", missing)
	}
}

// nativeCrash is a crash in a gcc-built ELF fixture with a split debug
// file: the addresses of four functions' frames at a PIE load address, and
// what llvm-symbolizer-14 says of each frame from the debug file.
type nativeCrash struct {
	bin    fixture.Binary
	codeID string
	load   uint64
	addrs  []uint64      // runtime addresses, the first of the crashing frame
	want   [][]llvmFrame // llvm-symbolizer's frames per address
}

func newNativeCrash(t *testing.T) nativeCrash {
	t.Helper()
	b := fixture.Build(t, fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, Split: true})
	c := nativeCrash{bin: b, codeID: buildID(t, b.Path), load: 0x5581_2000_0000}
	vmaddr := loadVMAddr(t, b.Path)
	var asked []uint64
	for i, a := range pickAddrs(t, b.Path, b.Debug, "x86_64", "parse_digits", "opcode_eval", "fib", "main") {
		c.addrs = append(c.addrs, a-vmaddr+c.load)
		asked = append(asked, callSite(a, "x86_64", i == 0))
	}
	c.want = llvmSymbolize(t, b.Debug, asked)
	return c
}
