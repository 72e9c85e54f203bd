package process

import (
	"strings"

	"github.com/backtrail/backtrail/report"
)

// systemPrefixes are paths of operating system and toolchain code: frames
// in images loaded from them are not in-app.
var systemPrefixes = []string{
	"/usr/lib/", "/lib/", "/lib64/", "/usr/lib64/", "/usr/libexec/", "/System/", "/Library/Apple/",
	"/usr/local/go/src/", "/Developer/", "/Applications/Xcode", "/apex/", "/system/",
}

// systemNames are base names of system images wherever they are loaded from.
var systemNames = []string{
	"libsystem_", "libdyld", "libobjc", "libc.so", "libc-", "libm.so", "libpthread", "ld-linux", "ld64.so",
	"libstdc++", "libc++", "libgcc_s", "libdispatch", "CoreFoundation", "Foundation", "UIKitCore", "UIKit",
	"GraphicsServices", "dyld", "libswiftCore", "libunwind", "linux-vdso", "[vdso]",
}

// MarkInApp decides which frames are the application's own when the
// producer did not: a report with any frame marked in-app is trusted as
// marked (the Go SDK and Sentry SDKs mark frames). Otherwise a frame is
// in-app unless its image is a system image (by path or name) or, for
// frames without an image, its source file is in a toolchain's own tree.
func MarkInApp(r *report.Report) {
	if anyInApp(r) {
		return
	}
	mark := func(fs []report.Frame) {
		for i := range fs {
			fs[i].InApp = inApp(r, &fs[i])
		}
	}
	for i := range r.Threads {
		mark(r.Threads[i].Frames)
	}
	for i := range r.Trail {
		mark(r.Trail[i].Frames)
	}
	if r.Hang != nil {
		for i := range r.Hang.Samples {
			mark(r.Hang.Samples[i].Frames)
		}
	}
	if r.Snapshot != nil {
		for i := range r.Snapshot.Stacks {
			mark(r.Snapshot.Stacks[i].Frames)
		}
	}
}

func inApp(r *report.Report, f *report.Frame) bool {
	if m := moduleFor(r, *f); m != nil {
		return !isSystemImage(m.Path, moduleName(m))
	}
	if f.Module != "" {
		return !isSystemImage(f.Module, f.Module)
	}
	for _, p := range systemPrefixes {
		if strings.HasPrefix(f.File, p) {
			return false
		}
	}
	return f.Function != ""
}

func isSystemImage(path, name string) bool {
	for _, p := range systemPrefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	base := name
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	for _, n := range systemNames {
		if strings.HasPrefix(base, n) {
			return true
		}
	}
	return false
}

func anyInApp(r *report.Report) bool {
	has := func(fs []report.Frame) bool {
		for _, f := range fs {
			if f.InApp {
				return true
			}
		}
		return false
	}
	for _, t := range r.Threads {
		if has(t.Frames) {
			return true
		}
	}
	for _, h := range r.Trail {
		if has(h.Frames) {
			return true
		}
	}
	if r.Audit != nil {
		for _, e := range r.Audit.Entries {
			if has(e.Frames) {
				return true
			}
		}
	}
	return false
}
