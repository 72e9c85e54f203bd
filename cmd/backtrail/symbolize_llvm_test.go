package main

// The differential suite: for the project's own C, C++, Rust and Go fixture
// programs, compiled many ways by internal/fixture, every line-table row
// (and the byte after it, and every symbol start) in the executable
// sections is symbolized by `backtrail symbolize` and by llvm-symbolizer-14,
// and the outputs must be identical, block for block. Backtrail answers
// twice: from the debug file, and from a symcache built from it with
// `backtrail symcache build`. Differences that are llvm's limitations, not
// ours, are listed in knownDiffs with their reasons; anything else fails
// the test.

import (
	"bytes"
	"context"
	"debug/elf"
	"debug/macho"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/testenv"
)

// diffCase is one fixture and how to compare it.
type diffCase struct {
	spec fixture.Spec
	// twin, when set, is a build of the same program whose llvm-symbolizer
	// answers ours must equal, for files llvm-symbolizer 14 cannot read.
	twin *fixture.Spec
	// why explains twin.
	why string
	// noColumns compares without columns (the Go pclntab has none).
	noColumns bool
	// dsym symbolizes a Mach-O binary through its .dSYM bundle directory
	// instead of the binary.
	dsym bool
}

// splitTwin compares a clang build with split DWARF with llvm-symbolizer's
// answers for the same build without: llvm-symbolizer 14 leaves out the
// inlined calls whose DW_AT_ranges are in a split unit
// (llvm/llvm-project#62941, fixed in LLVM 17), which clang writes for
// inlined code in several pieces (calc.c's digit_step).
func splitTwin(lang string, dwarf int, fission string) diffCase {
	return diffCase{
		spec: fixture.Spec{Lang: lang, Compiler: "clang", Opt: 2, DWARF: dwarf, Fission: fission},
		twin: &fixture.Spec{Lang: lang, Compiler: "clang", Opt: 2, DWARF: dwarf},
		why:  "llvm-symbolizer 14 drops inlined calls with range lists in split units (llvm/llvm-project#62941)",
	}
}

func diffCases() []diffCase {
	var cs []diffCase
	for _, lang := range []string{"c", "cxx"} {
		for _, cc := range []string{"gcc", "clang"} {
			for _, opt := range []int{0, 2} {
				for _, dw := range []int{4, 5} {
					cs = append(cs, diffCase{spec: fixture.Spec{Lang: lang, Compiler: cc, Opt: opt, DWARF: dw}})
				}
			}
		}
		cs = append(cs,
			diffCase{spec: fixture.Spec{Lang: lang, Compiler: "clang", Opt: 2, DWARF: 5, Compress: "zlib"}},
			diffCase{spec: fixture.Spec{Lang: lang, Compiler: "gcc", Opt: 2, DWARF: 4, Compress: "zlib-gnu"}},
			diffCase{spec: fixture.Spec{Lang: lang, Compiler: "gcc", Opt: 2, DWARF: 5, Split: true}},
			diffCase{spec: fixture.Spec{Lang: lang, Compiler: "clang", Opt: 2, DWARF: 4, Split: true}},
			// Split DWARF: GNU's extension (DWARF 4) and DWARF 5's, in
			// .dwo files and in a .dwp package. -gsplit-dwarf changes no
			// code, so a split build can be compared with its twin.
			diffCase{spec: fixture.Spec{Lang: lang, Compiler: "gcc", Opt: 2, DWARF: 5, Fission: "dwo"}},
			diffCase{spec: fixture.Spec{Lang: lang, Compiler: "gcc", Opt: 2, DWARF: 4, Fission: "dwp"}},
			splitTwin(lang, 5, "dwo"), splitTwin(lang, 4, "dwo"), splitTwin(lang, 5, "dwp"),
			diffCase{
				spec: fixture.Spec{Lang: lang, Compiler: "gcc", Opt: 2, DWARF: 5, Compress: "zstd"},
				twin: &fixture.Spec{Lang: lang, Compiler: "gcc", Opt: 2, DWARF: 5},
				why:  "llvm-symbolizer 14 cannot decompress zstd sections; compare with the uncompressed twin",
			},
		)
	}
	for _, opt := range []int{0, 2} {
		for _, m := range []string{"legacy", "v0"} {
			cs = append(cs, diffCase{spec: fixture.Spec{Lang: "rust", Opt: opt, Mangling: m}})
		}
	}
	cs = append(cs,
		diffCase{spec: fixture.Spec{Lang: "go", Opt: 2}},
		diffCase{spec: fixture.Spec{Lang: "go", Opt: 0}},
		diffCase{
			spec:      fixture.Spec{Lang: "go", Opt: 2, Strip: true},
			twin:      &fixture.Spec{Lang: "go", Opt: 2},
			why:       "a stripped Go binary has no DWARF and no symbol table, so llvm-symbolizer knows nothing; we read the pclntab and must agree with llvm on the unstripped twin",
			noColumns: true,
		},
	)
	for _, lang := range []string{"macho-c", "macho-cxx"} {
		for _, arch := range []string{"arm64", "x86_64"} {
			cs = append(cs, diffCase{spec: fixture.Spec{Lang: lang, Compiler: "clang", Opt: 2, Arch: arch}})
		}
		cs = append(cs, diffCase{spec: fixture.Spec{Lang: lang, Compiler: "clang", Opt: 0, Arch: "arm64"}, dsym: true})
	}
	return cs
}

func TestSymbolizeMatchesLLVM(t *testing.T) {
	llvm := testenv.Tool(t, "llvm-symbolizer-14")
	testenv.Tool(t, "llvm-dwarfdump-14")
	total := 0
	for _, c := range diffCases() {
		name := fixture.Name(c.spec)
		if c.dsym {
			name += "-dsym"
		}
		t.Run(name, func(t *testing.T) {
			b := fixture.Build(t, c.spec)
			ref := b
			if c.twin != nil {
				ref = fixture.Build(t, *c.twin)
			}
			obj := b.Path
			if c.dsym {
				obj = b.Debug
			}
			total += matchLLVM(t, llvm, c, ref, obj, b.Commands)
			if c.why != "" {
				t.Logf("compared with %s: %s", fixture.Name(*c.twin), c.why)
			}
		})
	}
	t.Logf("%d addresses compared, from the debug files and from symcaches", total)
}

// TestSymbolizeThirdPartyMatchesLLVM runs the comparison on DWARF that no
// fixture of ours produced: the system C library's separate debug file as
// the distribution ships it (Debian's libc6-dbg: glibc built by gcc 12,
// DWARF 5 with compressed sections, hand-written assembly, IFUNC variants),
// found by build id under /usr/lib/debug as `backtrail dump` finds it; and
// the third-party debug files in testdata (getsentry/symbolic's Linux and
// macOS crash programs, CrashProbe's iOS dSYMs built by Apple's clang).
func TestSymbolizeThirdPartyMatchesLLVM(t *testing.T) {
	llvm := testenv.Tool(t, "llvm-symbolizer-14")
	testenv.Tool(t, "llvm-dwarfdump-14")
	files := map[string]string{
		"sentry-linux":       testenv.Testdata(t, "sentry-symbolic", "linux", "crash.debug"),
		"sentry-linux-zlib":  testenv.Testdata(t, "sentry-symbolic", "linux", "crash.debug-zlib"),
		"sentry-macos":       testenv.Testdata(t, "sentry-symbolic", "macos", "crash.dSYM", "Contents", "Resources", "DWARF", "crash"),
		"crashprobe-app":     testenv.Testdata(t, "crashprobe", "arm64-debug", "dSYMs", "arm64-CrashProbeiOS.app.dSYM", "Contents", "Resources", "DWARF", "CrashProbeiOS"),
		"crashprobe-library": testenv.Testdata(t, "crashprobe", "arm64-debug", "dSYMs", "arm64-CrashLibiOS.framework.dSYM", "Contents", "Resources", "DWARF", "CrashLibiOS"),
	}
	if libc := systemLibcDebug(t); libc != "" {
		files["system-libc"] = libc
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		t.Run(name, func(t *testing.T) {
			n := matchLLVM(t, llvm, diffCase{}, fixture.Binary{Path: files[name], DWARFPath: files[name]}, files[name], nil)
			t.Logf("%d addresses of %s compared", n, files[name])
		})
	}
}

// systemLibcDebug returns the separate debug file of the C library that
// gcc links against, found as backtrail dump and symcache build find it
// (debugfile.FindCompanion: by build id under /usr/lib/debug). Where there
// is none it returns "", having failed the test in CI and logged why
// elsewhere, like a missing tool (scripts/test-setup installs libc6-dbg).
func systemLibcDebug(t *testing.T) string {
	out, err := exec.Command(testenv.Tool(t, "gcc"), "-print-file-name=libc.so.6").Output()
	if err != nil {
		t.Fatalf("gcc -print-file-name=libc.so.6: %v", err)
	}
	libc := strings.TrimSpace(string(out))
	f, err := debugfile.Open(libc)
	if err != nil {
		t.Fatalf("the C library: %v", err)
	}
	defer f.Close()
	if debug := debugfile.FindCompanion(f.Path, f.Objects[0], nil); debug != "" {
		return debug
	}
	msg := fmt.Sprintf("no debug file for %s under %v; install the Debian package libc6-dbg", libc, debugfile.DefaultDebugDirs)
	if testenv.InCI() {
		t.Error(msg)
	} else {
		t.Log(msg)
	}
	return ""
}

// matchLLVM symbolizes every line-table row of ref (and the byte after
// it, and every symbol start) with llvm-symbolizer from ref and with
// backtrail from obj, directly and through a symcache built from it, and
// fails on any difference that knownDiff and demanglerDiffs do not explain.
// It returns the number of addresses compared; commands, if any, say how
// the files were built.
func matchLLVM(t *testing.T, llvm string, c diffCase, ref fixture.Binary, obj string, commands []string) int {
	t.Helper()
	addrs := lineAddresses(t, ref)
	if len(addrs) < 100 {
		t.Fatalf("only %d addresses in %s", len(addrs), ref.Path)
	}
	in := addressInput(addrs)
	want := blocks(runTool(t, llvm, in, "--obj="+ref.Path))
	// The same answers from the debug file (indexed lazily, unit by unit)
	// and from a symcache built from it.
	cache := filepath.Join(t.TempDir(), "obj.symcache")
	runBacktrail(t, "", "symcache", "build", "-o", cache, obj)
	for _, o := range []struct{ name, path string }{{"debug-file", obj}, {"symcache", cache}} {
		t.Run(o.name, func(t *testing.T) {
			got := blocks(runBacktrail(t, in, "symbolize", "--obj="+o.path))
			if len(got) != len(addrs) || len(want) != len(addrs) {
				t.Fatalf("%d addresses, %d llvm blocks, %d ours", len(addrs), len(want), len(got))
			}
			var differ []int
			for i := range addrs {
				w, g := want[i], got[i]
				if c.noColumns {
					w, g = dropColumns(w), dropColumns(g)
				}
				if w != g && knownDiff(c, w, g) == "" {
					differ = append(differ, i)
				}
			}
			demanglerOnly := demanglerDiffs(t, c, in, o.path, differ, want, got)
			bad := 0
			for _, i := range differ {
				if demanglerOnly[i] {
					continue
				}
				bad++
				if bad <= 10 {
					t.Errorf("%#x:\nllvm-symbolizer:\n%s\nbacktrail:\n%s", addrs[i], indent(want[i]), indent(got[i]))
				}
			}
			if bad > 0 && len(commands) > 0 {
				t.Errorf("%d of %d addresses differ\nbuilt with:\n%s", bad, len(addrs), strings.Join(commands, "\n"))
			} else if bad > 0 {
				t.Errorf("%d of %d addresses differ", bad, len(addrs))
			}
		})
	}
	return len(addrs)
}

// knownDiff returns why a difference between llvm-symbolizer's answer w and
// ours g is expected, or "".
func knownDiff(c diffCase, w, g string) string {
	if c.spec.Lang == "go" && c.spec.Strip {
		// llvm answered from the unstripped twin's DWARF, we from the
		// stripped binary's pclntab. The two name a few things differently:
		//   - Go's DWARF puts compiler-generated wrappers in a file
		//     "<autogenerated>" in directory "." of compilation directory
		//     ".", which llvm joins to "././<autogenerated>";
		//   - DWARF names assembly functions by their ABI0 linker symbol
		//     ("runtime.systemstack.abi0"), the pclntab by the function;
		//   - the pclntab spells the counter of function-local types with
		//     a middle dot ("untracedG·7"), DWARF with a period;
		//   - Go's DWARF starts each autogenerated function with a row of
		//     file index 0, invalid before DWARF 5, so llvm has no file
		//     there ("??:0"); the pclntab says "<autogenerated>:1".
		//   - the twin's symbol table has linker marker symbols such as
		//     runtime.etext (file "go.go" from Go's STT_FILE symbol) where
		//     no code is; the stripped binary has no symbol table.
		if g == "??\n??:0" && strings.HasSuffix(w, "\ngo.go:0") {
			return "linker marker symbol only in the unstripped twin's symbol table"
		}
		nw := goAutogenRE.ReplaceAllString(w, "<autogenerated>")
		nw = goABI0RE.ReplaceAllString(nw, "")
		wl, gl := strings.Split(nw, "\n"), strings.Split(strings.ReplaceAll(g, "·", "."), "\n")
		if len(wl) != len(gl) {
			return ""
		}
		for i := range wl {
			if wl[i] != gl[i] && !(wl[i] == "??:0" && gl[i] == "<autogenerated>:1") {
				return ""
			}
		}
		return "Go DWARF and pclntab spell autogenerated files, ABI0 symbols and local type counters differently"
	}
	return ""
}

var (
	goAutogenRE = regexp.MustCompile(`(?m)^(\./)+<autogenerated>`)
	goABI0RE    = regexp.MustCompile(`(?m)\.abi0$`)
)

// demanglerDiffs finds, among the differing blocks, those that differ only
// in function names that llvm-symbolizer-14 demangled with its own
// demangler's known bugs: the raw (mangled) names are the same, the file
// and line lines are identical, and llvm-cxxfilt-14 reproduces llvm's name.
// Our demangling of such names is checked against c++filt and
// llvm-cxxfilt-14 in package demangle, whose peer test lists each known
// llvm-cxxfilt-14 bug with its cause. The one our fixtures trigger:
// LLVM 14 resolves the template parameters of a function template
// instantiated with a lambda closure type (Itanium "Ul…E_", clang's "$_N")
// against the wrong template, printing e.g. std::sort's parameters as
// (Point, Point, lambda) instead of (iterator, iterator, comparator). Every
// name accepted here must contain such a closure type.
func demanglerDiffs(t *testing.T, c diffCase, in, obj string, differ []int, want, got []string) map[int]bool {
	ok := map[int]bool{}
	if len(differ) == 0 || c.noColumns {
		return ok
	}
	raw := blocks(runBacktrail(t, in, "symbolize", "--no-demangle", "--obj="+obj))
	names := map[string]bool{}
	for _, i := range differ {
		w, g, r := strings.Split(want[i], "\n"), strings.Split(got[i], "\n"), strings.Split(raw[i], "\n")
		if len(w) != len(g) || len(g) != len(r) {
			continue
		}
		for k := range w {
			if w[k] != g[k] && (k%2 == 1 || !strings.HasPrefix(r[k], "_Z")) {
				goto next
			}
		}
		for k := 0; k < len(w); k += 2 {
			if w[k] != g[k] {
				names[r[k]] = true
			}
		}
		ok[i] = true
	next:
	}
	var list []string
	for n := range names {
		list = append(list, n)
	}
	slices.Sort(list)
	if len(list) == 0 {
		return ok
	}
	llvm := strings.Split(strings.TrimSuffix(runTool(t, testenv.Tool(t, "llvm-cxxfilt-14"), strings.Join(list, "\n")+"\n"), "\n"), "\n")
	byRaw := map[string]string{}
	for k, n := range list {
		byRaw[n] = llvm[k]
	}
	for _, i := range differ {
		if !ok[i] {
			continue
		}
		w, r := strings.Split(want[i], "\n"), strings.Split(raw[i], "\n")
		for k := 0; k < len(w); k += 2 {
			if names[r[k]] && byRaw[r[k]] != w[k] {
				ok[i] = false
			}
		}
	}
	// The other difference: names that LLVM 14 cannot read at all, such as
	// those with GCC's spelling of argument packs before its ABI version 6
	// (I…E where now J…E), which c++filt reads and so do we.
	gnu := strings.Split(strings.TrimSuffix(runTool(t, testenv.Tool(t, "c++filt"), strings.Join(list, "\n")+"\n"), "\n"), "\n")
	lambdas, unread := 0, 0
	for k, n := range list {
		switch {
		case byRaw[n] == n && gnu[k] != n:
			unread++
		case strings.Contains(n, "Ul") || strings.Contains(n, "$_"):
			lambdas++
		default:
			t.Errorf("%s prints differently from llvm-symbolizer, neither a name LLVM 14 cannot read nor one with the lambda closure type that triggers llvm-cxxfilt-14's known bug", n)
		}
	}
	t.Logf("%d mangled names with lambda template arguments that llvm-cxxfilt-14 demangles wrongly, %d that LLVM 14 cannot read and c++filt can", lambdas, unread)
	return ok
}

var rowRE = regexp.MustCompile(`(?m)^0x([0-9a-f]{16}) `)

// lineAddresses returns every line-table row address of b that lies in an
// executable section, each row's next byte, and every symbol start, sorted
// and unique. Rows outside code (sequences the linker discarded and left at
// address 0) are not addresses any program runs.
func lineAddresses(t *testing.T, b fixture.Binary) []uint64 {
	out, err := exec.Command(testenv.Tool(t, "llvm-dwarfdump-14"), "--debug-line", b.DWARFPath).Output()
	if err != nil {
		t.Fatalf("llvm-dwarfdump-14 --debug-line %s: %v", b.DWARFPath, err)
	}
	code := codeRanges(t, b.Path)
	set := map[uint64]bool{}
	add := func(a uint64) {
		for _, r := range code {
			if a >= r[0] && a < r[1] {
				set[a] = true
				return
			}
		}
	}
	for _, m := range rowRE.FindAllSubmatch(out, -1) {
		a, _ := strconv.ParseUint(string(m[1]), 16, 64)
		add(a)
		add(a + 1)
	}
	for _, a := range symbolStarts(t, b.Path) {
		add(a)
	}
	addrs := make([]uint64, 0, len(set))
	for a := range set {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	return addrs
}

// codeRanges returns the executable sections of an ELF or thin Mach-O file.
func codeRanges(t *testing.T, path string) [][2]uint64 {
	var rs [][2]uint64
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_EXECINSTR != 0 {
				rs = append(rs, [2]uint64{s.Addr, s.Addr + s.Size})
			}
		}
		return rs
	}
	f, err := macho.Open(path)
	if err != nil {
		t.Fatalf("%s: neither ELF nor thin Mach-O: %v", path, err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Flags&0x80000000 != 0 { // S_ATTR_PURE_INSTRUCTIONS
			rs = append(rs, [2]uint64{s.Addr, s.Addr + s.Size})
		}
	}
	return rs
}

func symbolStarts(t *testing.T, path string) []uint64 {
	var as []uint64
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		syms, _ := f.Symbols()
		for _, s := range syms {
			if s.Value != 0 {
				as = append(as, s.Value)
			}
		}
		return as
	}
	if f, err := macho.Open(path); err == nil {
		defer f.Close()
		if f.Symtab != nil {
			for _, s := range f.Symtab.Syms {
				if s.Value != 0 {
					as = append(as, s.Value)
				}
			}
		}
	}
	return as
}

func addressInput(addrs []uint64) string {
	var sb strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&sb, "%#x\n", a)
	}
	return sb.String()
}

func runTool(t *testing.T, tool, stdin string, args ...string) string {
	cmd := exec.Command(tool, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// runBacktrail runs a backtrail command in-process and returns its output.
func runBacktrail(t *testing.T, stdin string, args ...string) string {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("backtrail %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// runCode runs the command line args and returns its exit code and
// output.
func runCode(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	code = run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// blocks splits symbolizer output into one block per address.
func blocks(s string) []string {
	s = strings.TrimSuffix(s, "\n\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n\n")
}

var colRE = regexp.MustCompile(`(?m):(\d+):\d+$`)

func dropColumns(b string) string { return colRE.ReplaceAllString(b, ":$1") }

func indent(s string) string { return "\t" + strings.ReplaceAll(s, "\n", "\n\t") }

func TestSymbolizeFatMatchesLLVM(t *testing.T) {
	llvm := testenv.Tool(t, "llvm-symbolizer-14")
	parts := []fixture.Binary{
		fixture.Build(t, fixture.Spec{Lang: "macho-cxx", Compiler: "clang", Opt: 2, Arch: "arm64"}),
		fixture.Build(t, fixture.Spec{Lang: "macho-cxx", Compiler: "clang", Opt: 2, Arch: "x86_64"}),
	}
	fat := fixture.FatBinary(t, parts...)
	for _, p := range parts {
		arch := p.Spec.Arch
		t.Run(arch, func(t *testing.T) {
			in := addressInput(lineAddresses(t, p))
			want := runTool(t, llvm, in, "--obj="+fat.Path, "--default-arch="+arch)
			cache := filepath.Join(t.TempDir(), arch+".symcache")
			runBacktrail(t, "", "symcache", "build", "--arch="+arch, "-o", cache, fat.Path)
			for _, obj := range []string{fat.Path, fat.Debug, cache} {
				got := runBacktrail(t, in, "symbolize", "--obj="+obj, "--arch="+arch)
				if got != want {
					t.Errorf("%s --arch=%s differs from llvm-symbolizer --default-arch=%s", obj, arch, arch)
				}
			}
		})
	}
}

// TestSymbolizeNoInlinesMatchesLLVM checks --no-inlines, which prints the
// outermost function with the innermost location.
func TestSymbolizeNoInlinesMatchesLLVM(t *testing.T) {
	llvm := testenv.Tool(t, "llvm-symbolizer-14")
	for _, s := range []fixture.Spec{
		{Lang: "c", Compiler: "gcc", Opt: 2},
		{Lang: "c", Compiler: "clang", Opt: 2, DWARF: 5},
		{Lang: "rust", Opt: 2, Mangling: "v0"},
	} {
		t.Run(fixture.Name(s), func(t *testing.T) {
			b := fixture.Build(t, s)
			in := addressInput(lineAddresses(t, b))
			want := runTool(t, llvm, in, "--obj="+b.Path, "--no-inlines")
			cache := filepath.Join(t.TempDir(), "obj.symcache")
			runBacktrail(t, "", "symcache", "build", "-o", cache, b.Path)
			for _, obj := range []string{b.Path, cache} {
				got := runBacktrail(t, in, "symbolize", "--obj="+obj, "--no-inlines")
				if got != want {
					w, g := blocks(want), blocks(got)
					for i := range min(len(w), len(g)) {
						if w[i] != g[i] {
							t.Fatalf("%s: first difference at block %d:\nllvm-symbolizer:\n%s\nbacktrail:\n%s", obj, i, indent(w[i]), indent(g[i]))
						}
					}
					t.Fatalf("%s: %d llvm blocks, %d ours", obj, len(w), len(g))
				}
			}
		})
	}
}

// TestSymbolizeSplitMissing symbolizes a binary built with -gsplit-dwarf
// whose split DWARF is gone as llvm-symbolizer does (line numbers from the
// skeletons, names from the symbol table, no inline frames), and warns on
// standard error, once per unit; with the package back beside the binary
// the frames and no warning return.
func TestSymbolizeSplitMissing(t *testing.T) {
	llvm := testenv.Tool(t, "llvm-symbolizer-14")
	b := fixture.Build(t, fixture.Spec{Lang: "cxx", Compiler: "clang", Opt: 2, DWARF: 5, Fission: "dwp"})
	lone := filepath.Join(t.TempDir(), filepath.Base(b.Path))
	data, err := os.ReadFile(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ref := fixture.Binary{Path: lone, DWARFPath: lone}
	matchLLVM(t, llvm, diffCase{}, ref, lone, nil)

	symbolizeAll := func() (frames int, stderr string) {
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(addressInput(lineAddresses(t, ref))), stdout: &out, stderr: &errb}
		if code := run(context.Background(), e, []string{"symbolize", "--obj", lone}); code != 0 {
			t.Fatalf("symbolize: exit %d: %s", code, errb.String())
		}
		return strings.Count(out.String(), "\n") / 2, errb.String()
	}
	without, warned := symbolizeAll()
	units := len(b.Sources) // every source of the C++ program but its header is a unit
	if n := strings.Count(warned, "backtrail: warning: split DWARF "); n == 0 || n > units || !strings.Contains(warned, "not found") {
		t.Errorf("%d warnings for at most %d units:\n%s", n, units, warned)
	}
	// --dwp names the package wherever it is.
	code, out, stderr := runCode("symbolize", "--obj", lone, "--dwp", b.Path+".dwp", fmt.Sprintf("%#x", lineAddresses(t, ref)[0]))
	if code != 0 || stderr != "" || out == "" {
		t.Errorf("symbolize --dwp: exit %d, warned %q", code, stderr)
	}
	packaged, err := os.ReadFile(b.Path + ".dwp")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lone+".dwp", packaged, 0o644); err != nil {
		t.Fatal(err)
	}
	with, warned := symbolizeAll()
	if warned != "" || with <= without {
		t.Errorf("with the package: %d frames against %d without, warnings %q", with, without, warned)
	}
}
