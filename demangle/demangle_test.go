package demangle_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/demangle"
)

func TestSchemeOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		want demangle.Scheme
	}{
		{"", demangle.None},
		{"main", demangle.None},
		{"_Z", demangle.Itanium},
		{"_Z3foov", demangle.Itanium},
		{"__Z3foov", demangle.Itanium},
		{"___Z3foov_block_invoke", demangle.Itanium},
		{"____Z3foov_block_invoke", demangle.None},
		{"_ZN3foo3barEv", demangle.Itanium},
		{"_ZN4core3fmt5write17h0123456789abcdefE", demangle.RustLegacy},
		{"_ZN4core3fmt5write17h0123456789abcdefE.llvm.123", demangle.RustLegacy},
		{"__ZN4core3fmt5write17h0123456789abcdefE", demangle.RustLegacy},
		// The hash must be the last element, of 16 lower-case hex digits.
		{"_ZN4core3fmt5write17h0123456789ABCDEFE", demangle.Itanium},
		{"_ZN4core3fmt5write16h0123456789abcdeE", demangle.Itanium},
		{"_ZN4core17h0123456789abcdef5writeE", demangle.Itanium},
		{"_ZN4core3fmt5write17h0123456789abcdefEv", demangle.Itanium},
		{"_ZN4core3fmt5write17h0123456789abcdef", demangle.Itanium},
		{"_ZN99core17h0123456789abcdefE", demangle.Itanium},
		{"_RNvCs1234_7mycrate3foo", demangle.RustV0},
		{"_R0NvC3foo3bar", demangle.RustV0},
		{"__RNvC3foo3bar", demangle.RustV0},
		{"_R", demangle.None},
		{"_Rfoo", demangle.None},
		{"_RTC_Initialize", demangle.RustV0},
		{"$s4main3FooV3baryyF", demangle.Swift},
		{"_$s4main3FooV3baryyF", demangle.Swift},
		{"$S4main3FooV3baryyF", demangle.Swift},
		{"_$S4main3FooV3baryyF", demangle.Swift},
		{"$e4main3fooyyF", demangle.Swift},
		{"_T0Sb", demangle.Swift},
		{"@__swiftmacro_4main3foo", demangle.Swift},
		{"$x", demangle.None},
		{"_GLOBAL__sub_I_a.cc", demangle.None},
		{"?foo@@YAXXZ", demangle.None},
	} {
		if got := demangle.SchemeOf(tt.name); got != tt.want {
			t.Errorf("SchemeOf(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// demangleTests shows each style on representative names. The Full and
// LLVM outputs are what c++filt (binutils 2.40), llvm-cxxfilt-14 and, for
// Rust in the Full style, rustc-demangle print, except where a comment says
// otherwise.
var demangleTests = []struct {
	name              string
	full, llvm, short string
}{
	{"_Z3foov", "foo()", "foo()", "foo"},
	{"_ZNSt6vectorIiSaIiEE9push_backERKi",
		"std::vector<int, std::allocator<int> >::push_back(int const&)",
		"std::vector<int, std::allocator<int> >::push_back(int const&)",
		"std::vector<int, std::allocator<int> >::push_back"},
	{"_Z3fooIiEvT_", "void foo<int>(int)", "void foo<int>(int)", "foo<int>"},
	{"_ZNSs4swapERSs",
		"std::basic_string<char, std::char_traits<char>, std::allocator<char> >::swap(std::basic_string<char, std::char_traits<char>, std::allocator<char> >&)",
		"std::string::swap(std::string&)",
		"std::string::swap"},
	{"_ZZ4mainENKUlvE_clEv",
		"main::{lambda()#1}::operator()() const",
		"main::'lambda'()::operator()() const",
		"main::{lambda()#1}::operator()"},
	{"_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()", "(anonymous namespace)::foo()", "(anonymous namespace)::foo"},
	{"_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
		"std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
		"std::basic_ostream<char, std::char_traits<char> >& std::operator<<<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
		"std::operator<< <std::char_traits<char> >"},
	// Clones.
	{"_Z3fooi.constprop.0", "foo(int) [clone .constprop.0]", "foo(int) (.constprop.0)", "foo"},
	{"_Z3foov.isra.0.cold", "foo() [clone .isra.0] [clone .cold]", "foo() (.isra.0.cold)", "foo"},
	{"_Z3foov.Foo", "_Z3foov.Foo", "foo() (.Foo)", "_Z3foov.Foo"},
	// An ABI tag; LLVM 14 prints the tagged class's constructors without
	// a name.
	{"_ZNSt8ios_base7failureB5cxx11C1EPKc",
		"std::ios_base::failure[abi:cxx11]::failure(char const*)",
		"std::ios_base::failure[abi:cxx11]::(char const*)",
		"std::ios_base::failure[abi:cxx11]::failure"},
	// An inheriting constructor: c++filt names the base class, LLVM 14
	// the derived one.
	{"_ZN1DIiECI11BIiEEi", "D<int>::B(int)", "D<int>::D(int)", "D<int>::B"},
	// LLVM 14 cannot read a conversion to std::string.
	{"_ZNK3FoocvNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEv",
		"Foo::operator std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >() const",
		"_ZNK3FoocvNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEv",
		"Foo::operator std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"},
	// An empty pack ends the template arguments: c++filt's ">>".
	{"_ZN4llvm11PassManagerINS_8FunctionENS_15AnalysisManagerIS1_JEEEJEE3runERS1_RS3_",
		"llvm::PassManager<llvm::Function, llvm::AnalysisManager<llvm::Function>>::run(llvm::Function&, llvm::AnalysisManager<llvm::Function>&)",
		"llvm::PassManager<llvm::Function, llvm::AnalysisManager<llvm::Function> >::run(llvm::Function&, llvm::AnalysisManager<llvm::Function>&)",
		"llvm::PassManager<llvm::Function, llvm::AnalysisManager<llvm::Function> >::run"},
	// Specials.
	{"_ZGVZ4mainE1x", "guard variable for main::x", "guard variable for main::x", "guard variable for main::x"},
	{"_ZTISt9exception", "typeinfo for std::exception", "typeinfo for std::exception", "typeinfo for std::exception"},
	{"_ZThn8_N3FooD1Ev", "non-virtual thunk to Foo::~Foo()", "non-virtual thunk to Foo::~Foo()", "non-virtual thunk to Foo::~Foo()"},
	// LLVM 14 does not know transaction clones.
	{"_ZGTtNKSt11logic_error4whatEv",
		"transaction clone for std::logic_error::what() const",
		"_ZGTtNKSt11logic_error4whatEv",
		"transaction clone for std::logic_error::what() const"},
	// Mach-O: only Short takes the extra underscore off; the peers leave
	// "__Z" alone. Block invocations (c++filt leaves them alone).
	{"__Z3fooi", "__Z3fooi", "__Z3fooi", "foo"},
	{"___Z3fooi_block_invoke", "invocation function for block in foo(int)", "invocation function for block in foo(int)", "invocation function for block in foo(int)"},
	// Rust, v0.
	{"_RNvCs1234_7mycrate3foo", "mycrate::foo", "mycrate::foo", "mycrate::foo"},
	{"_RNvCs1234_7mycrate3foo.cold", "mycrate::foo.cold", "mycrate::foo (.cold)", "mycrate::foo"},
	{"_RNvCs1234_7mycrate3foo.llvm.1A2B", "mycrate::foo", "mycrate::foo (.llvm.1A2B)", "mycrate::foo"},
	{"__RNvCs1234_7mycrate3foo", "mycrate::foo", "__RNvCs1234_7mycrate3foo", "mycrate::foo"},
	{"_RINvCs1234_7mycrate3fooKc27_E", `mycrate::foo::<'\''>`, `mycrate::foo::<'\''>`, `mycrate::foo::<'\''>`},
	{"_RINvNtCs8yaCA83vi27_4core3ptr13drop_in_placeINtNtCs1_5alloc3vec3VechEEB4_",
		"core::ptr::drop_in_place::<alloc::vec::Vec<u8>>",
		"core::ptr::drop_in_place::<alloc::vec::Vec<u8>>",
		"core::ptr::drop_in_place::<alloc::vec::Vec<u8>>"},
	// Rust, legacy: LLVM 14 reads it as C++.
	{"_ZN4core3fmt5write17h0123456789abcdefE.llvm.123",
		"core::fmt::write",
		"core::fmt::write::h0123456789abcdef (.llvm.123)",
		"core::fmt::write"},
	{"_ZN61_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..fmt..Debug$GT$3fmt17h1234567890abcdefE",
		"<alloc::vec::Vec<T> as core::fmt::Debug>::fmt",
		"_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..fmt..Debug$GT$::fmt::h1234567890abcdef",
		"<alloc::vec::Vec<T> as core::fmt::Debug>::fmt"},
	{"__ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write", "__ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
	// Swift: package swift's output; llvm-symbolizer-14 leaves Swift alone.
	{"$s4main3FooV3baryyF", "main.Foo.bar() -> ()", "$s4main3FooV3baryyF", "Foo.bar() -> ()"},
	{"$s9", "$s9", "$s9", "$s9"},
	// Not mangled, or malformed.
	{"main", "main", "main", "main"},
	{"", "", "", ""},
	{"_Z", "_Z", "_Z", "_Z"},
	{"_Z3fooX", "_Z3fooX", "_Z3fooX", "_Z3fooX"},
	{"_RNvC3foo", "_RNvC3foo", "_RNvC3foo", "_RNvC3foo"},
	{"_ZN4core3fmt5write17h0123456789abcdefE$", "_ZN4core3fmt5write17h0123456789abcdefE$", "_ZN4core3fmt5write17h0123456789abcdefE$", "_ZN4core3fmt5write17h0123456789abcdefE$"},
}

func TestDemangle(t *testing.T) {
	checkDemangleTests(t)
}

// checkDemangleTests checks demangleTests; the benchmarks call it too.
func checkDemangleTests(tb testing.TB) {
	tb.Helper()
	for _, tt := range demangleTests {
		for _, c := range []struct {
			style demangle.Style
			want  string
		}{{demangle.Full, tt.full}, {demangle.LLVM, tt.llvm}, {demangle.Short, tt.short}} {
			if got := demangle.Demangle(tt.name, c.style); got != c.want {
				tb.Errorf("Demangle(%q, %v):\n have %q\n want %q", tt.name, c.style, got, c.want)
			}
		}
	}
}

func TestDemangleUnknownStyle(t *testing.T) {
	if got := demangle.Demangle("_Z3foov", demangle.Style(7)); got != "_Z3foov" {
		t.Errorf("Demangle with style 7 = %q, want the name unchanged", got)
	}
	if s := demangle.Style(7).String(); s != "Style(7)" {
		t.Errorf("Style(7).String() = %q", s)
	}
	if s := demangle.Scheme(9).String(); s != "Scheme(9)" {
		t.Errorf("Scheme(9).String() = %q", s)
	}
}

// TestUnresolvedNameSubstitutions checks the workaround for the C++
// demangler's extra substitution in "sr" unresolved names (srfix.go): all
// three names were printed with wrong parameter types before it.
func TestUnresolvedNameSubstitutions(t *testing.T) {
	for _, tt := range []struct {
		name string
		want string // Full; the LLVM style differs only in spacing here
	}{
		{"_ZN4llvm10checkedAddIiEENSt9enable_ifIXsr3std9is_signedIT_EE5valueENS_8OptionalIS2_EEE4typeES2_S2_",
			"std::enable_if<std::is_signed<int>::value, llvm::Optional<int> >::type llvm::checkedAdd<int>(int, int)"},
		{"_ZN4llvm4yaml7yamlizeIA16_cEENSt9enable_ifIXsr16has_ScalarTraitsIT_EE5valueEvE4typeERNS0_2IOERS4_bRNS0_12EmptyContextE",
			"std::enable_if<has_ScalarTraits<char [16]>::value, void>::type llvm::yaml::yamlize<char [16]>(llvm::yaml::IO&, char (&) [16], bool, llvm::yaml::EmptyContext&)"},
		// Two qualifiers with template arguments.
		{"_Z1fIiEvN1AIXsr1BIT_EE1xEXsr1CIS1_EE1yEEES1_",
			"void f<int>(A<B<int>::x, C<int>::y>, int)"},
	} {
		if got := demangle.Demangle(tt.name, demangle.Full); got != tt.want {
			t.Errorf("Demangle(%q, Full):\n have %q\n want %q", tt.name, got, tt.want)
		}
	}
}

func TestLimits(t *testing.T) {
	// An Itanium name longer than 4 KiB is not demangled, however simple.
	long := "_Z" + strings.Repeat("P", 5000) + "i"
	for _, style := range []demangle.Style{demangle.Full, demangle.LLVM, demangle.Short} {
		if got := demangle.Demangle(long, style); got != long {
			t.Errorf("Demangle(%d-byte name, %v) demangled it", len(long), style)
		}
	}
	short := "_Z1f" + strings.Repeat("P", 500) + "i"
	if got := demangle.Demangle(short, demangle.Full); !strings.HasPrefix(got, "f(int*") {
		t.Errorf("Demangle(%d-byte name, Full) = %.40q…", len(short), got)
	}
	// Rust back-references that double the output at each step stop at
	// the output limit: 2^60 tuples would not fit in memory.
	exploding := explodingV0(60)
	for _, style := range []demangle.Style{demangle.Full, demangle.LLVM, demangle.Short} {
		if got := demangle.Demangle(exploding, style); got != exploding {
			t.Errorf("Demangle(%q, %v) = %.40q…, want the name unchanged", exploding, style, got)
		}
	}
}

// explodingV0 returns a v0 name of n nested tuples, each of two
// back-references to the one before: short, but its demangled form would
// have about 2^n elements.
func explodingV0(n int) string {
	sym := "INvC1a1f"
	prev := len(sym)
	sym += "ThhE"
	for range n {
		ref := "B" + base62(prev) + "_"
		p := len(sym)
		sym += "T" + ref + ref + "E"
		prev = p
	}
	return "_R" + sym + "E"
}

// base62 writes a back-reference's position as v0 does: position 0 is
// the empty string, position p the base-62 digits of p-1.
func base62(p int) string {
	if p == 0 {
		return ""
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	p--
	s := ""
	for {
		s = string(digits[p%62]) + s
		p /= 62
		if p == 0 {
			return s
		}
	}
}

// TestConcurrent runs Demangle from several goroutines over the same names:
// under the race detector, it checks that the adjustments made to the C++
// demangler's trees touch no node shared between calls.
func TestConcurrent(t *testing.T) {
	var names []string
	for _, tt := range demangleTests {
		names = append(names, tt.name)
	}
	names = append(names, readList(t, "cxx-crafted.txt")...)
	names = append(names, readList(t, "cxx-libstdc++.txt.gz")[:1500]...)
	styles := []demangle.Style{demangle.Full, demangle.LLVM, demangle.Short}
	want := make(map[string]string)
	for _, n := range names {
		for _, s := range styles {
			want[s.String()+n] = demangle.Demangle(n, s)
		}
	}
	errs := make(chan string, 4)
	for g := range 4 {
		go func() {
			bad := ""
			for i := range names {
				n := names[(i+g*len(names)/4)%len(names)]
				for _, s := range styles {
					if got := demangle.Demangle(n, s); got != want[s.String()+n] && bad == "" {
						bad = fmt.Sprintf("Demangle(%q, %v) = %q concurrently, %q alone", n, s, got, want[s.String()+n])
					}
				}
			}
			errs <- bad
		}()
	}
	for range 4 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
