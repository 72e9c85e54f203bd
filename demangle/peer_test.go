package demangle_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/internal/testenv"
)

var update = flag.Bool("update", false, "regenerate the symbol lists in testdata from this machine's libraries and compilers")

// The C++ differential test compares Demangle with the peer tools over the
// mangled names in these lists (see testdata/README.md). With -update the
// lists are made again: the exported C++ symbols of three Debian 12
// libraries (all of libstdc++'s, an evenly spaced sample of LLVM's and
// Clang's), and the C++ symbols of testdata/symbols.cc compiled by g++ and
// clang++-14 at -O0 and -O2. cxx-crafted.txt is written by hand.
var cxxLists = []struct {
	file string
	make func(t *testing.T) []string
}{
	{"cxx-libstdc++.txt.gz", func(t *testing.T) []string {
		return librarySymbols(t, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 0)
	}},
	{"cxx-libLLVM-14.txt.gz", func(t *testing.T) []string {
		return librarySymbols(t, "/usr/lib/llvm-14/lib/libLLVM-14.so.1", 4000)
	}},
	{"cxx-libclang-cpp-14.txt.gz", func(t *testing.T) []string {
		return librarySymbols(t, "/usr/lib/llvm-14/lib/libclang-cpp.so.14", 3000)
	}},
	{"cxx-symbols.txt.gz", programSymbols},
	{"cxx-crafted.txt", nil},
}

// A knownDiff is a kind of name that Demangle knowingly writes differently
// from a peer tool, with the reason and a representative name.
type knownDiff struct {
	style demangle.Style
	what  string
	why   string
	// match reports whether a difference is of this kind.
	match func(name, peer, ours string) bool
	// max is how many names of the lists differ in this way; more fail
	// the test.
	max int
	// An example, with what the peer and Demangle print.
	name, peer, ours string
}

var knownDiffs = []knownDiff{
	{
		style: demangle.LLVM,
		what:  "llvm14-lambda-template-params",
		why: "LLVM 14 resolves the template parameters in a function's parameters against the function template " +
			"whose lambda is among the template arguments, not against the function itself (fixed in later LLVMs); " +
			"where such a lambda is the template argument of another function template, it also counts one substitution " +
			"more than the compilers do, as c++filt does (see localNameSubsWhy)",
		match: func(name, peer, ours string) bool {
			return strings.Contains(name, "EUl") && strings.Contains(peer, "'lambda'")
		},
		max:  6,
		name: "_ZSt25__unguarded_linear_insertIPN4llvm3cfg6UpdateIPNS0_10BasicBlockEEEN9__gnu_cxx5__ops14_Val_comp_iterIZNS1_15LegalizeUpdatesIS4_EEvNS0_8ArrayRefINS2_IT_EEEERNS0_15SmallVectorImplISD_EEbbEUlRKS5_SJ_E_EEEvSC_T0_",
		peer: "void std::__unguarded_linear_insert<llvm::cfg::Update<llvm::BasicBlock*>*, __gnu_cxx::__ops::_Val_comp_iter<void llvm::cfg::LegalizeUpdates<llvm::BasicBlock*>(llvm::ArrayRef<llvm::cfg::Update<llvm::BasicBlock*> >, llvm::SmallVectorImpl<llvm::cfg::Update<llvm::BasicBlock*> >&, bool, bool)::'lambda'(llvm::cfg::Update<llvm::BasicBlock*> const&, llvm::cfg::Update<llvm::BasicBlock*> const&)> >" +
			"(llvm::BasicBlock*, __gnu_cxx::__ops::_Val_comp_iter<void llvm::cfg::LegalizeUpdates<llvm::BasicBlock*>(llvm::ArrayRef<llvm::cfg::Update<llvm::BasicBlock*> >, llvm::SmallVectorImpl<llvm::cfg::Update<llvm::BasicBlock*> >&, bool, bool)::'lambda'(llvm::cfg::Update<llvm::BasicBlock*> const&, llvm::cfg::Update<llvm::BasicBlock*> const&)>)",
		ours: "void std::__unguarded_linear_insert<llvm::cfg::Update<llvm::BasicBlock*>*, __gnu_cxx::__ops::_Val_comp_iter<void llvm::cfg::LegalizeUpdates<llvm::BasicBlock*>(llvm::ArrayRef<llvm::cfg::Update<llvm::BasicBlock*> >, llvm::SmallVectorImpl<llvm::cfg::Update<llvm::BasicBlock*> >&, bool, bool)::'lambda'(llvm::cfg::Update<llvm::BasicBlock*> const&, llvm::cfg::Update<llvm::BasicBlock*> const&)> >" +
			"(llvm::cfg::Update<llvm::BasicBlock*>*, __gnu_cxx::__ops::_Val_comp_iter<void llvm::cfg::LegalizeUpdates<llvm::BasicBlock*>(llvm::ArrayRef<llvm::cfg::Update<llvm::BasicBlock*> >, llvm::SmallVectorImpl<llvm::cfg::Update<llvm::BasicBlock*> >&, bool, bool)::'lambda'(llvm::cfg::Update<llvm::BasicBlock*> const&, llvm::cfg::Update<llvm::BasicBlock*> const&)>)",
	},
	{
		style: demangle.LLVM,
		what:  "llvm14-const-const",
		why:   "LLVM 14 does not merge the const of a substituted template argument with another: \"LoopInfo const const&\"",
		match: func(name, peer, ours string) bool { return strings.Contains(peer, "const const") },
		max:   1,
		name:  "_ZN4llvm22containsIrreducibleCFGIPKNS_10BasicBlockEKNS_25ReversePostOrderTraversalIPKNS_8FunctionENS_11GraphTraitsIS7_EEEEKNS_8LoopInfoENS8_IS3_EEEEbRT0_RKT1_",
		peer:  "bool llvm::containsIrreducibleCFG<llvm::BasicBlock const*, llvm::ReversePostOrderTraversal<llvm::Function const*, llvm::GraphTraits<llvm::Function const*> > const, llvm::LoopInfo const, llvm::GraphTraits<llvm::BasicBlock const*> >(llvm::ReversePostOrderTraversal<llvm::Function const*, llvm::GraphTraits<llvm::Function const*> > const&, llvm::LoopInfo const const&)",
		ours:  "bool llvm::containsIrreducibleCFG<llvm::BasicBlock const*, llvm::ReversePostOrderTraversal<llvm::Function const*, llvm::GraphTraits<llvm::Function const*> > const, llvm::LoopInfo const, llvm::GraphTraits<llvm::BasicBlock const*> >(llvm::ReversePostOrderTraversal<llvm::Function const*, llvm::GraphTraits<llvm::Function const*> > const&, llvm::LoopInfo const&)",
	},
	{
		style: demangle.LLVM,
		what:  "llvm14-greater-parens",
		why: "LLVM 14 puts a '>' expression in a second pair of parentheses even where it cannot be taken for the end " +
			"of template arguments; the C++ demangler's LLVM style does only inside template arguments",
		match: func(name, peer, ours string) bool {
			return strings.Contains(peer, ") > (") && strings.Contains(peer, "((")
		},
		max:  1,
		name: "_Z1fIiEvPFDTgtfp_fp_EiE",
		peer: "void f<int>(decltype(((fp) > (fp))) (*)(int))",
		ours: "void f<int>(decltype((fp) > (fp)) (*)(int))",
	},
	{
		style: demangle.LLVM,
		what:  "llvm14-old-gcc-pack",
		why: "LLVM 14 cannot read an argument pack spelled as GCC did before its ABI version 6, I…E where now J…E " +
			"(old objects such as getsentry/symbolic's crash.debug have them); c++filt reads it, and so does Demangle",
		match: func(name, peer, ours string) bool { return peer == name && strings.Contains(name, "II") },
		max:   1,
		name:  "_ZNSt6vectorIN15google_breakpad10ElfSegmentENS0_16PageStdAllocatorIS1_EEE19_M_emplace_back_auxIIRKS1_EEEvDpOT_",
		peer:  "_ZNSt6vectorIN15google_breakpad10ElfSegmentENS0_16PageStdAllocatorIS1_EEE19_M_emplace_back_auxIIRKS1_EEEvDpOT_",
		ours:  "void std::vector<google_breakpad::ElfSegment, google_breakpad::PageStdAllocator<google_breakpad::ElfSegment> >::_M_emplace_back_aux<google_breakpad::ElfSegment const&>(google_breakpad::ElfSegment const&)",
	},
	{
		style: demangle.LLVM,
		what:  "tool-words",
		why: "llvm-cxxfilt splits its input into words at characters that no symbol contains ('@', '-') and " +
			"demangles each; Demangle reads its argument as one name, as llvm-symbolizer does",
		match: isToolWords,
		max:   3,
		name:  "_Z3foov@plt",
		peer:  "foo()@plt",
		ours:  "_Z3foov@plt",
	},
	{
		style: demangle.Full,
		what:  "tool-words",
		why:   "c++filt finds the names in its input text, ending a name at '@' or '-'; Demangle reads its argument as one name",
		match: isToolWords,
		max:   3,
		name:  "_Z3foov@plt",
		peer:  "foo()@plt",
		ours:  "_Z3foov@plt",
	},
	{
		style: demangle.Full,
		what:  "old-gcc-global-ctor",
		why: "c++filt demangles the _GLOBAL__I_<name> functions of GCC before 4.7; SchemeOf does not treat them as " +
			"mangled names (GCC now emits _GLOBAL__sub_I_<file>, which is not mangled)",
		match: func(name, peer, ours string) bool { return strings.HasPrefix(name, "_GLOBAL_") && ours == name },
		max:   1,
		name:  "_GLOBAL__I__Z3foov",
		peer:  "global constructors keyed to foo()",
		ours:  "_GLOBAL__I__Z3foov",
	},
	{
		style: demangle.Full,
		what:  "block-invocation",
		why: "c++filt does not know Clang's block invocation functions; Demangle writes them as LLVM does, " +
			"since a name that can be read is better shown read",
		match: func(name, peer, ours string) bool { return strings.HasPrefix(name, "___Z") && peer == name },
		max:   3,
		name:  "___Z3fooi_block_invoke",
		peer:  "___Z3fooi_block_invoke",
		ours:  "invocation function for block in foo(int)",
	},
	{
		style: demangle.Full,
		what:  "empty-pack-parameter",
		why: "c++filt keeps the separator of an empty pack expansion among function parameters, \"(Opcode, , " +
			"SourceInfo const&)\"; the C++ demangler does not, and its output cannot tell where one was",
		match: func(name, peer, ours string) bool { return strings.Contains(peer, ", , ") },
		max:   1,
		name:  "_ZN5clang6interp15ByteCodeEmitter6emitOpIJEEEbNS0_6OpcodeEDpRKT_RKNS0_10SourceInfoE",
		peer:  "bool clang::interp::ByteCodeEmitter::emitOp<>(clang::interp::Opcode, , clang::interp::SourceInfo const&)",
		ours:  "bool clang::interp::ByteCodeEmitter::emitOp<>(clang::interp::Opcode, clang::interp::SourceInfo const&)",
	},
	{
		style: demangle.Full,
		what:  "peers-local-name-template-arg-substitutions",
		why:   localNameSubsWhy,
		match: isLocalNameTemplateArg,
		max:   4,
		name:  localNameSubsName,
		peer:  "S::S<call<void (&)(int), int>(O&, void (&)(int), int&&)::{lambda()#1}>(void (&)(int))",
		ours:  "S::S<call<void (&)(int), int>(O&, void (&)(int), int&&)::{lambda()#1}>(call<void (&)(int), int>(O&, void (&)(int), int&&)::{lambda()#1}&)",
	},
}

// The known difference of both styles in the substitutions of local names:
// one where the peers are wrong.
const (
	localNameSubsWhy = "c++filt and LLVM 14 (which agree) count one substitution candidate more than GCC and Clang " +
		"do in a function template whose template argument is a local name (a lambda of another function template), " +
		"so a later reference resolves to the wrong entry. g++ 12 and clang++ 14 both mangle " +
		"`template <class F> S::S(F&)` with F the lambda of `call<T, A...>(O&, T&&, A&&...)` with the parameter " +
		"RS6_, and S6_ is the closure type, as Demangle writes it; the peers write void (&)(int). Found in 3 of the " +
		"180,004 C++ symbols of this machine's libraries (libstdc++'s std::call_once internals, instantiated in ICU)"
	localNameSubsName = "_ZN1SC2IZ4callIRFviEJiEEvR1OOT_DpOT0_EUlvE_EERS6_"
)

// isLocalNameTemplateArg reports whether name has a local name among
// template arguments.
func isLocalNameTemplateArg(name, peer, ours string) bool {
	return strings.Contains(name, "IZ")
}

// isToolWords reports whether name holds a character at which the peer
// tools end a name.
func isToolWords(name, peer, ours string) bool {
	return strings.ContainsAny(name, "@-")
}

// peers are the tools the C++ test compares each style with.
var peers = []struct {
	style demangle.Style
	tool  string
}{
	{demangle.LLVM, "llvm-cxxfilt-14"},
	{demangle.Full, "c++filt"},
}

func TestCxxPeers(t *testing.T) {
	if *update {
		for _, l := range cxxLists {
			if l.make != nil {
				writeList(t, l.file, l.make(t))
			}
		}
	}
	var names []string
	for _, l := range cxxLists {
		names = append(names, readList(t, l.file)...)
	}
	for _, p := range peers {
		t.Run(p.tool, func(t *testing.T) {
			want := runPeer(t, testenv.Tool(t, p.tool), names)
			counts := make(map[string]int)
			match, unknown := 0, 0
			for i, name := range names {
				got := demangle.Demangle(name, p.style)
				if got == want[i] {
					match++
					continue
				}
				d := classify(p.style, name, want[i], got)
				if d == nil {
					unknown++
					if unknown <= 20 {
						t.Errorf("Demangle(%q, %v):\n have %q\n want %q (%s)", name, p.style, got, want[i], p.tool)
					}
					continue
				}
				counts[d.what]++
			}
			if unknown > 20 {
				t.Errorf("%d more unknown differences", unknown-20)
			}
			t.Logf("%v style: %d of %d names as %s prints them (%.3f%%)",
				p.style, match, len(names), p.tool, 100*float64(match)/float64(len(names)))
			for _, d := range knownDiffs {
				if d.style != p.style {
					continue
				}
				t.Logf("  known difference %s: %d names", d.what, counts[d.what])
				if counts[d.what] > d.max {
					t.Errorf("known difference %s: %d names, expected at most %d", d.what, counts[d.what], d.max)
				}
			}
		})
	}
}

// classify returns the known difference that a difference is, or nil.
func classify(style demangle.Style, name, peer, ours string) *knownDiff {
	for i := range knownDiffs {
		d := &knownDiffs[i]
		if d.style == style && d.match(name, peer, ours) {
			return d
		}
	}
	return nil
}

// TestKnownDifferences checks the example of each known difference: what
// Demangle prints and, when the tool is at hand, what the peer prints.
func TestKnownDifferences(t *testing.T) {
	for _, d := range knownDiffs {
		t.Run(d.style.String()+"/"+d.what, func(t *testing.T) {
			if got := demangle.Demangle(d.name, d.style); got != d.ours {
				t.Errorf("Demangle(%q, %v):\n have %q\n want %q", d.name, d.style, got, d.ours)
			}
			if !d.match(d.name, d.peer, d.ours) {
				t.Errorf("the example does not match its own kind")
			}
			tool := ""
			for _, p := range peers {
				if p.style == d.style {
					tool = p.tool
				}
			}
			if !testenv.HasTool(tool) && !testenv.InCI() {
				return
			}
			if got := runPeer(t, testenv.Tool(t, tool), []string{d.name})[0]; got != d.peer {
				t.Errorf("%s %q:\n have %q\n want %q", tool, d.name, got, d.peer)
			}
		})
	}
}

// runPeer passes names through a filter tool, one a line, and returns its
// output lines.
func runPeer(t testing.TB, tool string, names []string) []string {
	t.Helper()
	cmd := exec.Command(tool)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		t.Fatalf("%s printed %d lines for %d names", tool, len(lines), len(names))
	}
	return lines
}

// readList reads a list of names from testdata, gunzipping a .gz file.
func readList(t testing.TB, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(file, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		r = zr
	}
	var names []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(names) == 0 {
		t.Fatalf("%s: no names", file)
	}
	return names
}

// writeList writes a list of names to testdata, gzipped if the name ends in
// .gz. The gzip header holds no name or time, so that the same names make
// the same file.
func writeList(t *testing.T, file string, names []string) {
	t.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if strings.HasSuffix(file, ".gz") {
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w = zw
	}
	for _, n := range names {
		fmt.Fprintln(w, n)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join("testdata", file), buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d names to testdata/%s", len(names), file)
}

// librarySymbols returns the defined dynamic C++ symbols of a shared
// library, without version suffixes, sorted; if n > 0, only n of them,
// evenly spaced.
func librarySymbols(t *testing.T, lib string, n int) []string {
	names := symbols(t, lib, true, "_Z")
	if n > 0 && len(names) > n {
		sample := make([]string, n)
		for i := range sample {
			sample[i] = names[i*len(names)/n]
		}
		names = sample
	}
	return names
}

// programSymbols compiles testdata/symbols.cc with g++ and clang++-14 at
// -O0 and -O2 and returns the C++ symbols the four programs define.
func programSymbols(t *testing.T) []string {
	dir := t.TempDir()
	seen := make(map[string]bool)
	var names []string
	for _, cc := range []string{"g++", "clang++-14"} {
		tool := testenv.Tool(t, cc)
		for _, opt := range []string{"-O0", "-O2"} {
			exe := filepath.Join(dir, cc+opt)
			cmd := exec.Command(tool, "-std=c++20", opt, "-o", exe, filepath.Join("testdata", "symbols.cc"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
			for _, n := range symbols(t, exe, false, "_Z") {
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// symbols lists the defined symbols of a file with llvm-nm-14 (its dynamic
// symbols if dynamic is set) whose names start with prefix, without
// version suffixes, sorted and without duplicates.
func symbols(t *testing.T, file string, dynamic bool, prefix string) []string {
	nm := testenv.Tool(t, "llvm-nm-14")
	args := []string{"--defined-only"}
	if dynamic {
		args = append(args, "-D")
	}
	cmd := exec.Command(nm, append(args, file)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	seen := make(map[string]bool)
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name := f[len(f)-1]
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		if strings.HasPrefix(name, prefix) && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
