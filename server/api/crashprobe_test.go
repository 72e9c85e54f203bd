package api_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
)

// CrashProbe (testdata/crashprobe, see testdata/PROVENANCE.md) is 21 real
// Sentry events that sentry-swift 1.4.4 sent for the crashes of the
// CrashProbe iOS app on an arm64 iPhone, with the dSYMs of the app
// (CrashProbeiOS) and its framework (CrashLibiOS).

// crashProbeDWARF returns the DWARF file inside the dSYM of a CrashProbe
// module ("CrashProbeiOS" or "CrashLibiOS").
func crashProbeDWARF(t *testing.T, module string) string {
	t.Helper()
	bundle := map[string]string{"CrashProbeiOS": "arm64-CrashProbeiOS.app.dSYM", "CrashLibiOS": "arm64-CrashLibiOS.framework.dSYM"}[module]
	return testenv.Testdata(t, "crashprobe", "arm64-debug", "dSYMs", bundle, "Contents", "Resources", "DWARF", module)
}

// crashProbeEvents returns the paths of the 21 events.
func crashProbeEvents(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.Testdata(t, "crashprobe", "arm64-debug"), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 21 {
		t.Fatalf("%d CrashProbe events, want 21", len(files))
	}
	return files
}

// sentryEvent is what the test reads from a Sentry event itself, apart
// from the server: ids, stacks (outermost first, as Sentry lists them) and
// images.
type sentryEvent struct {
	EventID string `json:"event_id"`
	Threads struct {
		Values []struct {
			Stacktrace *sentryStack `json:"stacktrace"`
		} `json:"values"`
	} `json:"threads"`
	Exception struct {
		Values []struct {
			Stacktrace *sentryStack `json:"stacktrace"`
		} `json:"values"`
	} `json:"exception"`
	DebugMeta struct {
		Images []struct {
			Name      string `json:"name"`
			UUID      string `json:"uuid"`
			ImageAddr string `json:"image_addr"`
			ImageSize uint64 `json:"image_size"`
		} `json:"images"`
	} `json:"debug_meta"`
}

type sentryStack struct {
	Frames []struct {
		InstructionAddr string `json:"instruction_addr"`
	} `json:"frames"`
}

func readSentryEvent(t *testing.T, path string) (*sentryEvent, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ev sentryEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &ev, data
}

func hexAddr(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("address %q: %v", s, err)
	}
	return v
}

// stacks returns the event's stacks as addresses, innermost first.
func (ev *sentryEvent) stacks(t *testing.T) [][]uint64 {
	var out [][]uint64
	add := func(st *sentryStack) {
		if st == nil || len(st.Frames) == 0 {
			return
		}
		var s []uint64
		for i := len(st.Frames) - 1; i >= 0; i-- {
			s = append(s, hexAddr(t, st.Frames[i].InstructionAddr))
		}
		out = append(out, s)
	}
	for _, th := range ev.Threads.Values {
		add(th.Stacktrace)
	}
	for _, ex := range ev.Exception.Values {
		add(ex.Stacktrace)
	}
	return out
}

// appFrame is one frame in CrashProbeiOS or CrashLibiOS: where the server
// shows it and what llvm-symbolizer says it is.
type appFrame struct {
	event, module string
	addr          uint64 // as the event gives it
	fileAddr      uint64 // computed here
	got           []report.Frame
}

// crashProbeAppFrames matches each stack of the event, by its addresses,
// with a thread of the server's report and returns the physical frames in
// the two app modules, with the file address computed from the event's
// image list and each dSYM's __TEXT vmaddr.
func crashProbeAppFrames(t *testing.T, raw *sentryEvent, got *report.Report, vmaddr map[string]uint64) []appFrame {
	t.Helper()
	var out []appFrame
	for _, stack := range raw.stacks(t) {
		var phys [][]report.Frame
		for _, th := range got.Threads {
			p := physicalFrames(th.Frames)
			var addrs []uint64
			for _, fs := range p {
				addrs = append(addrs, uint64(fs[0].Addr))
			}
			if slices.Equal(addrs, stack) {
				phys = p
				break
			}
		}
		if phys == nil {
			t.Errorf("event %s: no thread of the processed event has the stack %x", raw.EventID, stack)
			continue
		}
		for k, addr := range stack {
			for _, im := range raw.DebugMeta.Images {
				base := hexAddr(t, im.ImageAddr)
				module := filepath.Base(im.Name)
				if _, app := vmaddr[module]; !app || addr < base || addr-base >= im.ImageSize {
					continue
				}
				a := addr
				if k > 0 {
					// A return address: the call is the instruction
					// before it (arm64 instructions are 4 bytes).
					a = a&^3 - 4
				}
				out = append(out, appFrame{event: raw.EventID, module: module, addr: addr, fileAddr: a - base + vmaddr[module], got: phys[k]})
			}
		}
	}
	return out
}

// TestCrashProbeSymbolication uploads both CrashProbe dSYMs, posts all 21
// events to the Sentry store endpoint, and checks every frame in the app's
// modules against llvm-symbolizer-14 run on the dSYM: each function, file
// and line of the inline chain, innermost first.
func TestCrashProbeSymbolication(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "llvm-symbolizer-14")
	srv := servertest.Start(t, servertest.Options{})
	modules := []string{"CrashProbeiOS", "CrashLibiOS"}
	vmaddr := map[string]uint64{}
	for _, m := range modules {
		dwarf := crashProbeDWARF(t, m)
		vmaddr[m] = textVMAddr(t, dwarf)
		if fs := srv.UploadDebugFile(t, nil, dwarf); len(fs) != 1 || fs[0].Arch != "arm64" || fs[0].Format != "macho" {
			t.Fatalf("upload %s: %+v", m, fs)
		}
	}
	type posted struct {
		name string
		raw  *sentryEvent
	}
	var events []posted
	for _, path := range crashProbeEvents(t) {
		raw, data := readSentryEvent(t, path)
		if resp := srv.StoreEvent(t, nil, data); resp.Status != 200 {
			t.Fatalf("%s: %d %s", filepath.Base(path), resp.Status, resp.Body)
		}
		events = append(events, posted{strings.TrimSuffix(filepath.Base(path), ".json"), raw})
	}
	srv.Wait(t)

	var frames []appFrame
	for _, e := range events {
		ev := srv.Event(t, e.raw.EventID)
		if !ev.Processed || ev.Error != "" {
			t.Fatalf("%s: processed %v, error %q", e.name, ev.Processed, ev.Error)
		}
		frames = append(frames, crashProbeAppFrames(t, e.raw, &ev.Report, vmaddr)...)
	}
	checked := map[string]int{}
	for _, m := range modules {
		var mine []appFrame
		var addrs []uint64
		for _, f := range frames {
			if f.module == m {
				mine = append(mine, f)
				addrs = append(addrs, f.fileAddr)
			}
		}
		want := llvmSymbolize(t, crashProbeDWARF(t, m), addrs)
		for i, f := range mine {
			if len(want[i]) == 0 {
				t.Errorf("event %s: llvm-symbolizer-14 knows nothing at %s 0x%x (address 0x%x)", f.event, m, f.fileAddr, f.addr)
				continue
			}
			if !sameFrames(f.got, want[i]) {
				t.Errorf("event %s, %s 0x%x (address 0x%x):\n\tserver: %s\n\tllvm:   %v", f.event, m, f.fileAddr, f.addr, framesString(f.got), want[i])
			}
			checked[m]++
		}
	}
	t.Logf("checked %d frames against llvm-symbolizer-14: %v", len(frames), checked)
	// Every crash passes through the app's main and the framework.
	if checked["CrashProbeiOS"] < 21 || checked["CrashLibiOS"] < 21 {
		t.Errorf("checked %v frames, want at least 21 in each module", checked)
	}
}
