package dump

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/backtrail/backtrail/report"
)

// Report converts the dump into a report of kind dump (docs/report-format.md
// §2), ready for the server: modules with their ids and load addresses,
// and per thread its registers and its frames, symbolized, with inlined
// frames before the frame they were inlined into. Frames of the main
// executable are marked in_app.
func (d *Process) Report() *report.Report {
	r := &report.Report{
		Version:   report.Version,
		Kind:      report.KindDump,
		EventID:   report.NewEventID(),
		Timestamp: d.Time.UTC(),
		Platform:  report.PlatformNative,
		SDK:       report.SDK{Name: "backtrail-dump"},
		OS:        report.OS{Name: "linux", Version: kernelRelease()},
		Arch:      goArch(d.Arch),
		Tags:      map[string]string{"process": d.Name, "pid": strconv.Itoa(d.PID)},
	}
	if host, err := os.Hostname(); err == nil {
		r.ServerName = host
	}
	exe := ""
	for _, m := range d.Modules {
		r.Modules = append(r.Modules, report.Module{
			Type: "elf", Name: m.Name, Path: m.Path, DebugID: m.DebugID, CodeID: m.CodeID,
			ImageAddr: report.Addr(m.Bias + m.ImageVMAddr), ImageSize: m.ImageSize,
			ImageVMAddr: report.Addr(m.ImageVMAddr), Arch: m.Arch,
		})
		if m.Path == d.Exe {
			exe = m.Name
		}
	}
	for _, t := range d.Threads {
		rt := report.Thread{ID: uint64(t.TID), Name: t.Name, State: t.State, Truncated: t.Truncated, Frames: []report.Frame{}}
		if len(t.Registers) > 0 {
			rt.Registers = make(map[string]report.Addr, len(t.Registers))
			for k, v := range t.Registers {
				rt.Registers[k] = report.Addr(v)
			}
		}
		for _, f := range t.Frames {
			rt.Frames = append(rt.Frames, report.Frame{
				Addr: report.Addr(f.PC), Module: f.Module, Function: f.Function, File: f.File, Line: f.Line,
				Inlined: f.Inlined, InApp: exe != "" && f.Module == exe,
			})
		}
		r.Threads = append(r.Threads, rt)
	}
	return r
}

func goArch(a string) string {
	switch a {
	case "x86_64":
		return "amd64"
	case "":
		return runtime.GOARCH
	}
	return a
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
