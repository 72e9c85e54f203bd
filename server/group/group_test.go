package group_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server/group"
)

// crash returns a crash report whose crashed thread has frames, innermost
// first.
func crash(typ, value string, frames ...report.Frame) *report.Report {
	return &report.Report{
		Version: report.Version, Kind: report.KindCrash, Platform: report.PlatformNative,
		Exception: &report.Exception{Type: typ, Value: value},
		Threads: []report.Thread{
			{ID: 1, Name: "main", Frames: []report.Frame{{Function: "main.idle", InApp: true}}},
			{ID: 2, Crashed: true, Frames: frames},
		},
	}
}

func fn(name, file string, line int, addr report.Addr) report.Frame {
	return report.Frame{Function: name, File: file, Line: line, Addr: addr, InApp: true}
}

func sys(name string) report.Frame { return report.Frame{Function: name, Module: "libc.so.6"} }

// edit copies a report and changes the copy.
func edit(r *report.Report, f func(*report.Report)) *report.Report {
	c := *r
	c.Threads = nil
	for _, t := range r.Threads {
		t.Frames = append([]report.Frame(nil), t.Frames...)
		c.Threads = append(c.Threads, t)
	}
	if r.Exception != nil {
		e := *r.Exception
		c.Exception = &e
	}
	c.Fingerprint = append([]string(nil), r.Fingerprint...)
	f(&c)
	return &c
}

func crashed(r *report.Report) []report.Frame { return r.Threads[1].Frames }

var base = crash("SIGSEGV", "invalid address 0x10",
	sys("memcpy"),
	fn("main.(*Store).Get.func1", "/src/store.go", 42, 0x4a1000),
	fn("main.(*Store).Get", "/src/store.go", 40, 0x4a2000),
	sys("runtime.goexit"),
	fn("main.main", "/src/main.go", 12, 0x4a3000),
)

// TestFingerprintStable lists changes that must not move an event to
// another issue.
func TestFingerprintStable(t *testing.T) {
	want := group.Group(base).Fingerprint
	tests := []struct {
		name   string
		change func(r *report.Report)
	}{
		{"addresses", func(r *report.Report) {
			for i := range crashed(r) {
				crashed(r)[i].Addr += 0x1000
			}
		}},
		{"line numbers", func(r *report.Report) { crashed(r)[1].Line, crashed(r)[2].Line = 43, 39 }},
		{"files", func(r *report.Report) { crashed(r)[1].File = "/home/ci/build/store.go" }},
		{"Go closure counter", func(r *report.Report) { crashed(r)[1].Function = "main.(*Store).Get.func7" }},
		{"nested Go closure counters", func(r *report.Report) { crashed(r)[1].Function = "main.(*Store).Get.func1.2" }},
		{"exception value", func(r *report.Report) { r.Exception.Value = "invalid address 0x20" }},
		{"system frames", func(r *report.Report) { crashed(r)[0].Function, crashed(r)[3].Function = "memmove", "runtime.main" }},
		{"other threads", func(r *report.Report) { r.Threads[0].Frames[0].Function = "main.other" }},
		{"release and tags", func(r *report.Report) { r.Release, r.Tags = "2.0", map[string]string{"k": "v"} }},
	}
	for _, tt := range tests {
		if got := group.Group(edit(base, tt.change)).Fingerprint; got != want {
			t.Errorf("%s: fingerprint changed", tt.name)
		}
	}
	// Only the first 16 in-app frames count.
	deep := edit(base, func(r *report.Report) {
		for range 20 {
			r.Threads[1].Frames = append(r.Threads[1].Frames, fn("main.deep", "/src/deep.go", 1, 0))
		}
	})
	deeper := edit(deep, func(r *report.Report) { crashed(r)[len(crashed(r))-1].Function = "main.deeper" })
	if group.Group(deep).Fingerprint != group.Group(deeper).Fingerprint {
		t.Errorf("a change in the 23rd in-app frame changed the fingerprint")
	}
}

// TestFingerprintStableNames checks that names differing only in what
// changes between builds group alike, and different names do not.
func TestFingerprintStableNames(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"main.handler.func1", "main.handler.func2", true},
		{"main.(*Server).handle.func2.3", "main.(*Server).handle.func1", true},
		{"main.main.gowrap1", "main.main.gowrap3", true},
		{"main.run.deferwrap1", "main.run.deferwrap2", true},
		{"_ZZ4mainENKUlvE_clEv", "_ZZ4mainENKUlvE0_clEv", true}, // main::{lambda()#1} and #2
		{"main.Map[go.shape.int,go.shape.string]", "main.Map[go.shape.float64,go.shape.string]", true},
		{"runtime.goexit.abi0", "runtime.goexit", true},
		{"_ZN3foo3barEi", "_ZN3foo3barEl", true},                                             // foo::bar(int) and foo::bar(long): parameters dropped
		{"_ZN7mycrate3foo17h0123456789abcdefE", "_ZN7mycrate3foo17hfedcba9876543210E", true}, // Rust hashes
		{"closure #1 in Foo.bar()", "closure #2 in Foo.bar()", true},
		{"main.handler", "main.handler2", false},
		{"main.handler.func1", "main.other.func1", false},
		{"_ZN3foo3barEi", "_ZN3foo3bazEi", false},
		{"foo::bar<int>", "foo::bar<long>", false},
	}
	for _, tt := range tests {
		ra := crash("E", "", fn(tt.a, "", 0, 0))
		rb := crash("E", "", fn(tt.b, "", 0, 0))
		if same := group.Group(ra).Fingerprint == group.Group(rb).Fingerprint; same != tt.same {
			t.Errorf("%q and %q: same fingerprint %v, want %v (cleaned %q, %q)", tt.a, tt.b, same, tt.same,
				group.CleanFunction(tt.a), group.CleanFunction(tt.b))
		}
	}
}

// TestFingerprintDiffers lists changes that make another issue.
func TestFingerprintDiffers(t *testing.T) {
	want := group.Group(base).Fingerprint
	tests := []struct {
		name   string
		change func(r *report.Report)
	}{
		{"another in-app function", func(r *report.Report) { crashed(r)[2].Function = "main.(*Store).Put" }},
		{"in-app frames swapped", func(r *report.Report) { crashed(r)[1], crashed(r)[2] = crashed(r)[2], crashed(r)[1] }},
		{"an in-app frame more", func(r *report.Report) {
			r.Threads[1].Frames = append(r.Threads[1].Frames, fn("main.init", "/src/main.go", 3, 0))
		}},
		{"exception type", func(r *report.Report) { r.Exception.Type = "SIGBUS" }},
		{"kind", func(r *report.Report) { r.Kind = report.KindDump }},
		{"another thread crashed", func(r *report.Report) { r.Threads[0].Crashed, r.Threads[1].Crashed = true, false }},
		{"client fingerprint", func(r *report.Report) { r.Fingerprint = []string{"db-down"} }},
		{"client fingerprint with default", func(r *report.Report) { r.Fingerprint = []string{"{{ default }}", "shard-7"} }},
	}
	seen := map[string]string{want: "base"}
	for _, tt := range tests {
		got := group.Group(edit(base, tt.change)).Fingerprint
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: same fingerprint as %s", tt.name, prev)
		}
		seen[got] = tt.name
	}
}

// TestClientFingerprint checks Sentry's fingerprint rules: given values
// replace the default, "{{ default }}" stands for it.
func TestClientFingerprint(t *testing.T) {
	def := group.Group(base)
	other := edit(base, func(r *report.Report) { crashed(r)[2].Function = "main.other" })
	tests := []struct {
		name   string
		a, b   *report.Report
		same   bool
		prefix []string // the components must begin with these
	}{
		{"{{ default }} alone is the default", edit(base, func(r *report.Report) { r.Fingerprint = []string{"{{ default }}"} }), base, true, nil},
		{"{{default}} too", edit(base, func(r *report.Report) { r.Fingerprint = []string{"{{default}}"} }), base, true, nil},
		{"given values ignore the stack",
			edit(base, func(r *report.Report) { r.Fingerprint = []string{"db", "timeout"} }),
			edit(other, func(r *report.Report) { r.Fingerprint = []string{"db", "timeout"} }), true, []string{"client:db", "client:timeout"}},
		{"{{ default }} keeps the stack",
			edit(base, func(r *report.Report) { r.Fingerprint = []string{"{{ default }}", "db"} }),
			edit(other, func(r *report.Report) { r.Fingerprint = []string{"{{ default }}", "db"} }), false, def.Components},
		{"order of given values", edit(base, func(r *report.Report) { r.Fingerprint = []string{"a", "b"} }),
			edit(base, func(r *report.Report) { r.Fingerprint = []string{"b", "a"} }), false, nil},
	}
	for _, tt := range tests {
		ga, gb := group.Group(tt.a), group.Group(tt.b)
		if (ga.Fingerprint == gb.Fingerprint) != tt.same {
			t.Errorf("%s: same %v, want %v\n\t%q\n\t%q", tt.name, ga.Fingerprint == gb.Fingerprint, tt.same, ga.Components, gb.Components)
		}
		if len(ga.Components) < len(tt.prefix) || strings.Join(ga.Components[:len(tt.prefix)], "\n") != strings.Join(tt.prefix, "\n") {
			t.Errorf("%s: components %q, want them to begin with %q", tt.name, ga.Components, tt.prefix)
		}
		if ga.Version != group.Version || len(ga.Fingerprint) != 64 {
			t.Errorf("%s: version %d, fingerprint %q", tt.name, ga.Version, ga.Fingerprint)
		}
	}
}

// TestFallbacks checks what a stack without in-app frames groups on.
func TestFallbacks(t *testing.T) {
	tests := []struct {
		name  string
		r     *report.Report
		comps []string
	}{
		{"in-app frames only", base, []string{"kind:crash", "type:SIGSEGV", "fn:main.(*Store).Get.func", "fn:main.(*Store).Get", "fn:main.main"}},
		{"system frames when none is in-app", crash("SIGABRT", "", sys("abort"), sys("raise"), report.Frame{Module: "libc.so.6", Addr: 0x10}),
			[]string{"kind:crash", "type:SIGABRT", "fn:abort", "fn:raise"}},
		{"modules when no frame has a function", crash("SIGILL", "", report.Frame{Module: "app", Addr: 0x1000}, report.Frame{Module: "libc.so.6", Addr: 0x2000}),
			[]string{"kind:crash", "type:SIGILL", "module:app", "module:libc.so.6"}},
		{"the exception's value without frames", crash("KeyError", "no key 42 at 0xc000012345"),
			[]string{"kind:crash", "type:KeyError", "value:no key <n> at <addr>"}},
		{"hang", &report.Report{Kind: report.KindHang, Hang: &report.Hang{Samples: []report.Sample{
			{Weight: 1, Frames: []report.Frame{fn("main.a", "", 0, 0)}},
			{Weight: 5, Frames: []report.Frame{fn("main.slow", "", 0, 0), fn("main.loop", "", 0, 0)}},
		}}}, []string{"kind:hang", "fn:main.slow", "fn:main.loop"}},
		{"audit", &report.Report{Kind: report.KindAudit, Audit: &report.Audit{Entries: []report.AuditEntry{
			{Kind: "exec", Count: 1, Frames: []report.Frame{fn("main.rare", "", 0, 0)}},
			{Kind: "open", Count: 9, Frames: []report.Frame{fn("main.hot", "", 0, 0)}},
		}}}, []string{"kind:audit", "audit:exec,open", "fn:main.hot"}},
	}
	for _, tt := range tests {
		got := group.Group(tt.r).Components
		if strings.Join(got, "\n") != strings.Join(tt.comps, "\n") {
			t.Errorf("%s: components %q, want %q", tt.name, got, tt.comps)
		}
	}
}

// TestTitleAndCulprit checks what an issue is called.
func TestTitleAndCulprit(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	tests := []struct {
		name           string
		r              *report.Report
		title, culprit string
	}{
		{"exception with value", base, "SIGSEGV: invalid address 0x10", "main.(*Store).Get.func1 (store.go:42)"},
		{"first line of the value", crash("panic", "boom\ngoroutine 1 [running]:", fn("main.f", "/a/b/f.go", 3, 0)), "panic: boom", "main.f (f.go:3)"},
		{"exception without value", crash("SIGABRT", "", fn("main.f", "", 0, 0)), "SIGABRT", "main.f"},
		{"demangled culprit", crash("SIGSEGV", "", fn("_ZN3foo3barEi", "/src/foo.cc", 7, 0)), "SIGSEGV", "foo::bar (foo.cc:7)"},
		{"no in-app frame", crash("SIGABRT", "", sys("abort"), sys("raise")), "SIGABRT", "abort"},
		{"no function", crash("SIGILL", "", report.Frame{Module: "app", Addr: 0x1f00}), "SIGILL", "app+0x1f00"},
		{"no exception", edit(base, func(r *report.Report) { r.Exception = nil }), "Crash in main.(*Store).Get.func1", "main.(*Store).Get.func1 (store.go:42)"},
		{"nothing at all", &report.Report{Kind: report.KindCrash}, "Crash in unknown code", ""},
		{"hang in a loop", &report.Report{Kind: report.KindHang, Hang: &report.Hang{Loop: "ui", Samples: []report.Sample{{Frames: []report.Frame{fn("main.slow", "/s.go", 9, 0)}}}}},
			"Hang in main.slow (loop ui)", "main.slow (s.go:9)"},
		{"hang of a request", &report.Report{Kind: report.KindHang, Hang: &report.Hang{Request: "GET /x", Samples: []report.Sample{{Frames: []report.Frame{fn("main.slow", "", 0, 0)}}}}},
			"Hang in main.slow (request GET /x)", "main.slow"},
		{"audit", &report.Report{Kind: report.KindAudit, Audit: &report.Audit{Entries: []report.AuditEntry{{Kind: "exec", Count: 2, Frames: []report.Frame{fn("main.run", "", 0, 0)}}}}},
			"Audit: exec from main.run", "main.run"},
		{"dump", &report.Report{Kind: report.KindDump, Threads: []report.Thread{{Frames: []report.Frame{fn("main.wait", "", 0, 0)}}, {}}},
			"Dump: 2 threads, top in main.wait", "main.wait"},
		{"long title", crash("E", long), "E: " + strings.Repeat("é", 97) + "...", ""},
	}
	for _, tt := range tests {
		g := group.Group(tt.r)
		if g.Title != tt.title || g.Culprit != tt.culprit {
			t.Errorf("%s:\n\ttitle %q, culprit %q\n\twant  %q, %q", tt.name, g.Title, g.Culprit, tt.title, tt.culprit)
		}
		if len(g.Title) > 200 {
			t.Errorf("%s: title of %d bytes", tt.name, len(g.Title))
		}
	}
}

func TestCleanFunctionKeepsSwiftModule(t *testing.T) {
	a := group.CleanFunction("$s4main3fooyyF")
	b := group.CleanFunction("$s5other3fooyyF")
	if a == b {
		t.Fatalf("Swift functions of different modules clean to the same %q", a)
	}
	if got := group.CleanFunction("foo::bar::h0123456789abcdef"); got != "foo::bar" {
		t.Errorf("demangled Rust name with hash cleans to %q", got)
	}
}

func TestElideLambdas(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"largest<int, main::{lambda(int const&, int const&)#2}>", "largest<int, main::{lambda}>"},
		{"f(std::function<void (int)>)::{lambda(int)#1}::operator()", "f(std::function<void (int)>)::{lambda}::operator()"},
		{"main::'lambda0'(Point const&, Point const&)", "main::{lambda}"},
		{"lambdaCalculus::run", "lambdaCalculus::run"},
		{"{lambda(unclosed", "{lambda(unclosed"},
	} {
		if got := group.CleanFunction(tt.in); got != tt.want {
			t.Errorf("CleanFunction(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// BenchmarkGroup fingerprints a 60-frame C++ stack with long template
// names, as symbolicated native crashes have.
func BenchmarkGroup(b *testing.B) {
	name := "void std::__adjust_heap<__gnu_cxx::__normal_iterator<Point*, std::vector<Point, std::allocator<Point> > >, long, Point, __gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(Point const&, Point const&)#1}> >(__gnu_cxx::__normal_iterator<Point*, std::vector<Point, std::allocator<Point> > >, long, long, Point, __gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(Point const&, Point const&)#1}>)"
	r := &report.Report{Kind: report.KindCrash, Exception: &report.Exception{Type: "SIGSEGV"}}
	var frames []report.Frame
	for i := range 60 {
		frames = append(frames, report.Frame{Function: fmt.Sprintf("%s%d", name, i%20), InApp: i%3 == 0, File: "a.cpp", Line: i})
	}
	r.Threads = []report.Thread{{Crashed: true, Frames: frames}}
	b.ReportAllocs()
	for b.Loop() {
		group.Group(r)
	}
}
