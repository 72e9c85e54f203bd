package swift_test

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/demangle/swift"
)

// fixture is one "MANGLED ---> DEMANGLED" entry of the swift-demangle test
// vectors in testdata (see testdata/README.md for where they come from).
type fixture struct {
	line      int
	mangled   string
	want      string
	unchanged bool // swift-demangle leaves the name as it is
}

// readFixtures reads a manglings file. Only " ---> " entries count, as in
// upstream's test; " --> " and " -> " entries are skipped the same way.
// Classification markers that `swift-demangle -classify` puts in front of
// the output ({T:...}, {C}, {N}) are stripped: this package does not
// classify, and the marker is not part of the demangled name.
func readFixtures(t testing.TB, path string) []fixture {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixture
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		mangled, want, ok := strings.Cut(line, " ---> ")
		if !ok {
			// Upstream's manglings.txt has one entry whose expected text
			// runs onto a second line; like upstream's test, which reads
			// only lines with the separator, this ignores that line.
			continue
		}
		if strings.HasPrefix(want, "{") {
			if i := strings.Index(want, "} "); i >= 0 {
				want = want[i+2:]
			}
		}
		out = append(out, fixture{line: n, mangled: mangled, want: want, unchanged: mangled == want})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkFixtures demangles every entry, logs the differences, and returns
// the share of exact matches.
func checkFixtures(t *testing.T, path string, demangle func(string) (string, error)) float64 {
	fixtures := readFixtures(t, path)
	if len(fixtures) == 0 {
		t.Fatalf("%s: no entries", path)
	}
	match := 0
	for _, fx := range fixtures {
		got, err := demangle(fx.mangled)
		if fx.unchanged {
			if err == nil {
				t.Errorf("%s:%d: %s: demangled to %q, want an error (swift-demangle leaves it unchanged)",
					path, fx.line, fx.mangled, got)
				continue
			}
			match++
			continue
		}
		if err != nil {
			t.Logf("%s:%d: %s\n\twant %s\n\terr  %v", path, fx.line, fx.mangled, fx.want, err)
			continue
		}
		if got != fx.want {
			t.Logf("%s:%d: %s\n\twant %s\n\thave %s", path, fx.line, fx.mangled, fx.want, got)
			continue
		}
		match++
	}
	pct := 100 * float64(match) / float64(len(fixtures))
	t.Logf("%s: %d of %d exact (%.1f%%)", path, match, len(fixtures), pct)
	return pct
}

func TestManglings(t *testing.T) {
	if pct := checkFixtures(t, "testdata/manglings.txt", swift.Demangle); pct < 97 {
		t.Errorf("exact matches %.1f%%, want at least 97%%", pct)
	}
}

func TestSimplifiedManglings(t *testing.T) {
	if pct := checkFixtures(t, "testdata/simplified-manglings.txt", swift.DemangleSimplified); pct < 97 {
		t.Errorf("exact matches %.1f%%, want at least 97%%", pct)
	}
}

func TestIsMangled(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"$s4main3FooV3baryyF", true},
		{"_$s4main3FooV3baryyF", true},
		{"$S4main3FooV", true},
		{"_$S4main3FooV", true},
		{"$e4main3FooV", true},
		{"_$e4main3FooV", true},
		{"_T04main3FooV", true},
		{"_TtSi", true},
		{"_T", true},
		{"@__swiftmacro_4main", false},
		{"", false},
		{"$", false},
		{"_", false},
		{"_Z3foov", false},
		{"main", false},
		{"$x4main", false},
		{"_S$s3Set", false},
	}
	for _, tt := range tests {
		if got := swift.IsMangled(tt.name); got != tt.want {
			t.Errorf("IsMangled(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDemangle(t *testing.T) {
	tests := []struct {
		in, want, simplified string
	}{
		{"$s4main3FooV3baryyF", "main.Foo.bar() -> ()", "Foo.bar() -> ()"},
		{"_$s4main3FooV3baryyF", "main.Foo.bar() -> ()", "Foo.bar() -> ()"},
		{"$e4main3FooV3baryyF", "main.Foo.bar() -> ()", "Foo.bar() -> ()"},
		{"$s4main3fooyyYaKF", "main.foo() async throws -> ()", "foo() async throws -> ()"},
		{"$s4main3fooyySiYKF", "main.foo() throws(Swift.Int) -> ()", "foo() throws(Int) -> ()"},
		{"$s4main3fooyyYaFTQ0_", "(1) await resume partial function for main.foo() async -> ()", "foo() async -> ()"},
		{"$s4main3fooyyYaFTY1_", "(2) suspend resume partial function for main.foo() async -> ()", "foo() async -> ()"},
		{"$s4main3fooyyFTu", "async function pointer to main.foo() -> ()", "async function pointer to foo() -> ()"},
		{"$s4main3foo1xySi_tF", "main.foo(x: Swift.Int) -> ()", "foo(x : Int) -> ()"},
		{"$s4main3FooVACycfC", "main.Foo.init() -> main.Foo", "Foo.init() -> Foo"},
		{"$s4main3FooV1xSivg", "main.Foo.x.getter : Swift.Int", "Foo.x.getter"},
		{"$s4main3FooVMn", "nominal type descriptor for main.Foo", "nominal type descriptor for Foo"},
		{"$s4main3fooyyFyycfU_", "closure #1 () -> () in main.foo() -> ()", "(foo() -> ()).(closure #1)"},
		{"$s4main3foo3barySaySiG_tF", "main.foo(bar: [Swift.Int]) -> ()", "foo(bar : [Int]) -> ()"},
		{"$s4main3fooyyF.cold.1", `main.foo() -> () with unmangled suffix ".cold.1"`, "foo() -> ()"},
		{"$s4main3FooV3baryyFyyXEfU_TA.1",
			`partial apply forwarder for closure #1 () -> () in main.Foo.bar() -> () with unmangled suffix ".1"`,
			"partial apply for Foo.(bar() -> ()).(closure #1)"},
		{"$s4main0012vergenza_JFaVMn", "nominal type descriptor for main.vergüenza", "nominal type descriptor for vergüenza"},
		{"$sSo7NSArrayCMa", "type metadata accessor for __C.NSArray", "type metadata accessor for NSArray"},
		{"$sSiSgD", "Swift.Int?", "Int?"},
		{"$s21back_deploy_attribute0A12DeployedFuncyyFTwb",
			"back deployment thunk for back_deploy_attribute.backDeployedFunc() -> ()",
			"back deployment thunk for backDeployedFunc() -> ()"},
		{"$s4main1fyyyyScMYccF", "main.f(@Swift.MainActor () -> ()) -> ()", "f(@MainActor () -> ()) -> ()"},
		{"$s4main1fyyyyYbcF", "main.f(@Sendable () -> ()) -> ()", "f(@Sendable () -> ()) -> ()"},
		{"$s4main1fyySiyYaKcF", "main.f(() async throws -> Swift.Int) -> ()", "f(() async throws -> Int) -> ()"},
		{"$s4main3FooC3baryyFTo", "@objc main.Foo.bar() -> ()", "@objc Foo.bar() -> ()"},
		{"$s4main3FooC3baryyFyycfU_TA",
			"partial apply forwarder for closure #1 () -> () in main.Foo.bar() -> ()",
			"partial apply for Foo.(bar() -> ()).(closure #1)"},
		{"$s4main3Foo33_0123456789ABCDEF0123456789ABCDEFLLVMn",
			"nominal type descriptor for main.(Foo in _0123456789ABCDEF0123456789ABCDEF)",
			"nominal type descriptor for (Foo in _0123456789ABCDEF0123456789ABCDEF)"},
		{"$s4main3fooyySaySiGzF", "main.foo(inout [Swift.Int]) -> ()", "foo(inout [Int]) -> ()"},
		{"$s4main3fooyyxmlF", "main.foo<A>(A.Type) -> ()", "foo<A> (A.Type) -> ()"},
		{"$s4main1SVAA1PA2aDP3fooyyFTW",
			"protocol witness for main.P.foo() -> () in conformance main.S : main.P in main",
			"protocol witness for P.foo() -> () in conformance S"},
		{"$s4main1SVAA1PAAMc", "protocol conformance descriptor for main.S : main.P in main",
			"protocol conformance descriptor for S"},
		{"$s4main1PPAAE3fooyyF", "(extension in main):main.P.foo() -> ()", "P.foo() -> ()"},
		{"$sSTsE3mapySayqd__Gqd__7ElementQzKXEKlF",
			"(extension in Swift):Swift.Sequence.map<A>((A.Element) throws -> A1) throws -> [A1]",
			"Sequence.map<A> ((A.Element) throws -> A1) throws -> [A1]"},
		{"$s1t1fyyFSiAA3StrVcs7KeyPathCyADSiGcfu_SiADcfu0_33_556644b740b1b333fecb81e55a7cce98ADSiTf3npk_n",
			"function signature specialization <Arg[1] = [Constant Propagated KeyPath : " +
				"_556644b740b1b333fecb81e55a7cce98<t.Str,Swift.Int>]> of implicit closure #2 (t.Str) -> Swift.Int " +
				"in implicit closure #1 (Swift.KeyPath<t.Str, Swift.Int>) -> (t.Str) -> Swift.Int in t.f() -> ()",
			"specialized (f() -> ()).(implicit closure #1).(implicit closure #2)"},
		{"$s4main3FooCACycfC", "main.Foo.__allocating_init() -> main.Foo", "Foo.__allocating_init() -> Foo"},
	}
	for _, tt := range tests {
		got, err := swift.Demangle(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Demangle(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		got, err = swift.DemangleSimplified(tt.in)
		if err != nil || got != tt.simplified {
			t.Errorf("DemangleSimplified(%q) = %q, %v; want %q", tt.in, got, err, tt.simplified)
		}
	}
}

// TestTruncations feeds every prefix of every fixture symbol, plus a few
// byte-level mutations, through both entry points. It is the deterministic
// part of what FuzzDemangle explores: no panic, and no success without
// output.
func TestTruncations(t *testing.T) {
	for _, path := range []string{"testdata/manglings.txt", "testdata/simplified-manglings.txt"} {
		for _, fx := range readFixtures(t, path) {
			s := fx.mangled
			for i := 0; i <= len(s); i++ {
				for _, in := range []string{s[:i], s[:i] + s[min(i+1, len(s)):], s[:i] + "_" + s[i:]} {
					for _, f := range []func(string) (string, error){swift.Demangle, swift.DemangleSimplified} {
						if got, err := f(in); err == nil && got == "" {
							t.Errorf("%q: empty result without error", in)
						}
					}
				}
			}
		}
	}
}

// doublingDictionaries returns a mangled type of n nested dictionaries,
// each of whose key and value is the previous dictionary, by substitution:
// its printed form doubles with each level.
func doublingDictionaries(n int) string {
	s := "$sSDySiSiG"
	for i := 0; i < n; i++ {
		sub := "A" + string(rune('A'+i))
		s += "SDy" + sub + sub + "G"
	}
	return s + "D"
}

func TestDemangleErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", swift.ErrNotMangled},
		{"main", swift.ErrNotMangled},
		{"_Z3foov", swift.ErrNotMangled},
		{"$s", swift.ErrInvalid},
		{"$s4main", swift.ErrNotMangled},
		{"$s4mai", swift.ErrInvalid},
		{"$s4main3FooV\x01\x02\x03\x04yyF", swift.ErrInvalid},
		{"$sSi" + strings.Repeat("Sg", 2000), swift.ErrTooComplex},
		{"$s" + strings.Repeat("S2048i", 200), swift.ErrTooComplex},
		{"_TtT" + strings.Repeat("TSi", 1000), swift.ErrTooComplex},
		{doublingDictionaries(24), swift.ErrTooComplex},
	}
	for _, tt := range tests {
		got, err := swift.Demangle(tt.in)
		if tt.want == swift.ErrNotMangled && tt.in == "$s4main" {
			// A lone module name is a valid mangling of the module itself.
			if err != nil || got != "main" {
				t.Errorf("Demangle(%q) = %q, %v; want %q", tt.in, got, err, "main")
			}
			continue
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("Demangle(%q) = %q, %v; want error %v", tt.in, got, err, tt.want)
		}
	}
	var se *swift.SyntaxError
	if _, err := swift.Demangle("$s4mai"); !errors.As(err, &se) || se.Offset != 2 {
		t.Errorf("Demangle(%q) error = %#v, want *SyntaxError at offset 2", "$s4mai", err)
	}
}

// TestConcurrent demangles the fixtures from several goroutines at once
// and compares with a sequential run: the pooled parser state must not be
// shared between calls.
func TestConcurrent(t *testing.T) {
	var names []string
	for _, fx := range readFixtures(t, "testdata/manglings.txt") {
		names = append(names, fx.mangled)
	}
	want := make([]string, len(names))
	for i, n := range names {
		want[i], _ = swift.Demangle(n)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 20; r++ {
				for i, n := range names {
					if got, _ := swift.Demangle(n); got != want[i] {
						t.Errorf("concurrent Demangle(%q) = %q, want %q", n, got, want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestAllocs holds the promise of the package doc: a call allocates the
// returned string and nothing else once the pool is warm.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops entries at random under the race detector")
	}
	for _, name := range []string{"$s4main3FooV3baryyF", "_TFC3foo3bar3basfT3zimCS_3zim_T_", "$sSiSgD"} {
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := swift.Demangle(name); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 1 {
			t.Errorf("Demangle(%q): %v allocations, want 1", name, allocs)
		}
	}
}
