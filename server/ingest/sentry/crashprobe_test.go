package sentry_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server/ingest/sentry"
)

// crashProbeFiles returns the CrashProbe events: real Sentry events that
// sentry-swift 1.4.4 sent for the 21 crashes of the CrashProbe iOS app on an
// arm64 iPhone (testdata/crashprobe; see testdata/PROVENANCE.md).
func crashProbeFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "testdata", "crashprobe", "arm64-debug", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 21 {
		t.Fatalf("found %d CrashProbe events, want 21", len(files))
	}
	return files
}

// TestCrashProbe converts every CrashProbe event and checks the report
// against the JSON read independently: threads, the crashed thread's frames
// (the exception's stack, reversed), addresses, modules.
func TestCrashProbe(t *testing.T) {
	for _, file := range crashProbeFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sentry.Event(data)
			if err != nil {
				t.Fatalf("Event: %v", err)
			}
			checkReport(t, r)

			var raw struct {
				EventID   string `json:"event_id"`
				Exception struct {
					Values []struct {
						Type       string `json:"type"`
						Stacktrace struct {
							Frames []map[string]string `json:"frames"`
						} `json:"stacktrace"`
					} `json:"values"`
				} `json:"exception"`
				Threads struct {
					Values []struct {
						UUID uint64 `json:"uuid"`
						Name string `json:"name"`
					} `json:"values"`
				} `json:"threads"`
				DebugMeta struct {
					Images []map[string]any `json:"images"`
				} `json:"debug_meta"`
			}
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			if r.EventID != strings.ToLower(raw.EventID) {
				t.Errorf("event id %s, want %s in lower case", r.EventID, raw.EventID)
			}
			if r.Platform != report.PlatformNative || r.Arch != "arm64" || r.OS.Name != "ios" || r.SDK.Name != "sentry-swift" {
				t.Errorf("platform %q, arch %q, OS %+v, SDK %+v", r.Platform, r.Arch, r.OS, r.SDK)
			}
			if len(r.Modules) != len(raw.DebugMeta.Images) {
				t.Fatalf("%d modules, want %d", len(r.Modules), len(raw.DebugMeta.Images))
			}
			for i, im := range raw.DebugMeta.Images {
				m := r.Modules[i]
				path := im["name"].(string)
				if m.Type != "macho" || m.Path != path || m.Name != filepath.Base(path) || m.Arch != "arm64" ||
					m.DebugID != strings.ToLower(im["uuid"].(string)) || m.ImageAddr.String() != im["image_addr"] ||
					m.ImageSize != uint64(im["image_size"].(float64)) {
					t.Fatalf("module %d = %+v, from %v", i, m, im)
				}
			}
			if len(r.Threads) != len(raw.Threads.Values) {
				t.Fatalf("%d threads, want %d", len(r.Threads), len(raw.Threads.Values))
			}
			for i, th := range raw.Threads.Values {
				if r.Threads[i].ID != th.UUID || r.Threads[i].Name != th.Name {
					t.Errorf("thread %d = %d %q, want %d %q", i, r.Threads[i].ID, r.Threads[i].Name, th.UUID, th.Name)
				}
			}

			ex := raw.Exception.Values[len(raw.Exception.Values)-1]
			if r.Exception == nil || r.Exception.Type != ex.Type || r.Exception.Handled || r.Exception.Mechanism != "signal" || r.Exception.ThreadID != 0 {
				t.Fatalf("exception = %+v, want type %s, mechanism signal, unhandled, thread 0", r.Exception, ex.Type)
			}
			th := crashed(t, r)
			if th.ID != 0 {
				t.Errorf("crashed thread %d, want 0", th.ID)
			}
			in := ex.Stacktrace.Frames
			if len(th.Frames) != len(in) {
				t.Fatalf("crashed thread has %d frames, want %d", len(th.Frames), len(in))
			}
			for i, f := range th.Frames {
				src := in[len(in)-1-i] // Sentry's are outermost first
				want := src["function"]
				if want == "<redacted>" {
					want = ""
				}
				if f.Addr.String() != src["instruction_addr"] || f.Function != want || f.Module != filepath.Base(src["package"]) {
					t.Errorf("frame %d = %+v, from %v", i, f, src)
				}
			}
		})
	}
}

// TestCrashProbeValues checks concrete values of one CrashProbe event,
// "Dereference a NULL pointer", read from its JSON by hand.
func TestCrashProbeValues(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "crashprobe", "arm64-debug", "Dereference a NULL pointer.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sentry.Event(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2017, 1, 26, 9, 55, 14, 0, time.UTC); !r.Timestamp.Equal(want) {
		t.Errorf("timestamp %v, want %v (no zone in the JSON: UTC)", r.Timestamp, want)
	}
	if r.EventID != "8b0dea0512524440adc0f215b4b246c1" {
		t.Errorf("event id %s", r.EventID)
	}
	if r.OS != (report.OS{Name: "ios", Version: "10.2"}) || r.SDK != (report.SDK{Name: "sentry-swift", Version: "1.4.4"}) {
		t.Errorf("OS %+v, SDK %+v", r.OS, r.SDK)
	}
	wantTags := map[string]string{"level": "fatal", "device": "iPhone9,4", "os.name": "iOS"}
	for k, v := range wantTags {
		if r.Tags[k] != v {
			t.Errorf("tag %s = %q, want %q (tags %v)", k, r.Tags[k], v, r.Tags)
		}
	}
	if ex := r.Exception; ex.Type != "EXC_BAD_ACCESS" || !strings.HasPrefix(ex.Value, "Attempted to dereference null pointer.") {
		t.Errorf("exception %+v", ex)
	}
	wantMod := report.Module{
		Type: "macho", Name: "CrashLibiOS",
		Path:    "/private/var/containers/Bundle/Application/859E6782-D23C-4B40-96D3-6C49619406E2/CrashProbeiOS.app/Frameworks/CrashLibiOS.framework/CrashLibiOS",
		DebugID: "5db9dd67-7626-3675-8c6a-606e8c7518f7", ImageAddr: 0x214000, ImageSize: 1196032, Arch: "arm64",
	}
	if len(r.Modules) != 328 || r.Modules[1] != wantMod {
		t.Errorf("%d modules; modules[1] = %+v, want %+v", len(r.Modules), r.Modules[1], wantMod)
	}
	th := r.Threads[0]
	if !th.Crashed || len(th.Frames) != 23 {
		t.Fatalf("thread 0: crashed %v, %d frames", th.Crashed, len(th.Frames))
	}
	for i, want := range []report.Frame{
		{Addr: 0x21c628, Module: "CrashLibiOS", Function: "-[CRLCrashNULL crash]"},
		{Addr: 0x1054e4, Module: "CrashProbeiOS", Function: "-[CRLDetailViewController doCrash]"},
		{Addr: 0x8755fd30, Module: "UIKit"}, // "<redacted>": to be symbolized
		{Addr: 0x8755fcb0, Module: "UIKit"},
	} {
		if th.Frames[i] != want {
			t.Errorf("frame %d = %+v, want %+v", i, th.Frames[i], want)
		}
	}
	if last := th.Frames[22]; last.Addr != 0x805315b8 || last.Module != "libdyld.dylib" {
		t.Errorf("outermost frame %+v, want libdyld.dylib 0x805315b8", last)
	}
	for reg, want := range map[string]report.Addr{"pc": 0x21c628, "lr": 0x1054e4, "sp": 0x6fd01010, "fp": 0x6fd01040} {
		if th.Registers[reg] != want {
			t.Errorf("register %s = %v, want %v", reg, th.Registers[reg], want)
		}
	}
	if n := len(th.Registers); n != 35 {
		t.Errorf("%d registers, want 35", n)
	}
	fetch := r.Threads[4]
	if fetch.Name != "com.apple.uikit.eventfetch-thread" || fetch.Crashed ||
		fetch.Frames[0] != (report.Frame{Addr: 0x80625188, Module: "libsystem_kernel.dylib", Function: "mach_msg_trap"}) {
		t.Errorf("thread 4 = %q crashed %v, frame 0 %+v", fetch.Name, fetch.Crashed, fetch.Frames[0])
	}
	// The address of the innermost frame lies in the module of its package.
	if got := r.Modules[1].ImageAddr + report.Addr(r.Modules[1].ImageSize); th.Frames[0].Addr >= got || th.Frames[0].Addr < r.Modules[1].ImageAddr {
		t.Errorf("frame 0 at %v is outside CrashLibiOS [%v, %v)", th.Frames[0].Addr, r.Modules[1].ImageAddr, got)
	}
}
