package itanium_test

import (
	"testing"

	"github.com/backtrail/backtrail/demangle/itanium"
)

// tests shows each style on representative names. The LLVM and Full
// outputs are what llvm-cxxfilt-14 and GNU c++filt (binutils 2.40) print;
// package demangle's TestItaniumFastPath compares all three styles with
// its complete demangler over thousands of names.
var tests = []struct {
	name              string
	llvm, full, short string // "" where the style declines
}{
	{"_Z3foov", "foo()", "foo()", "foo"},
	{"_Z3fooi.constprop.0", "foo(int) (.constprop.0)", "foo(int) [clone .constprop.0]", "foo"},
	{"_Z3foov.isra.0.cold", "foo() (.isra.0.cold)", "foo() [clone .isra.0] [clone .cold]", "foo"},
	{"_Z3foov.part.0.constprop.1", "foo() (.part.0.constprop.1)", "foo() [clone .part.0] [clone .constprop.1]", "foo"},
	{"_Z3foov.Foo", "foo() (.Foo)", "", ""},
	{"__Z3fooi", "", "", "foo"},
	{"___Z3fooi_block_invoke_2", "invocation function for block in foo(int)", "invocation function for block in foo(int)", "invocation function for block in foo(int)"},
	{"_ZGVZ4mainE1x", "guard variable for main::x", "guard variable for main::x", "guard variable for main::x"},
	{"_ZZ4mainENKUlvE0_clEv", "main::'lambda0'()::operator()() const", "main::{lambda()#2}::operator()() const", "main::{lambda()#2}::operator()"},
	{"_ZZN1A1fEvENUt_1gEv", "A::f()::'unnamed'::g()", "A::f()::{unnamed type#1}::g()", "A::f()::{unnamed type#1}::g"},
	{"_ZZ1fIiEvvE1x", "void f<int>()::x", "f<int>()::x", "f<int>()::x"},
	{"_Z3fooIiEvT_", "void foo<int>(int)", "void foo<int>(int)", "foo<int>"},
	{"_ZNSt8ios_base7failureB5cxx11C1EPKc", "std::ios_base::failure[abi:cxx11]::(char const*)", "std::ios_base::failure[abi:cxx11]::failure(char const*)", "std::ios_base::failure[abi:cxx11]::failure"},
	{"_ZN1DIiECI11BIiEEi", "D<int>::D(int)", "D<int>::B(int)", "D<int>::B"},
	{"_ZNK3FoocvPKcEv", "Foo::operator char const*() const", "Foo::operator char const*() const", "Foo::operator char const*"},
	{"_ZN1AcvT_IiEEv", "A::operator int<int>()", "A::operator int<int>()", "A::operator int<int>"},
	{"_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
		"std::basic_ostream<char, std::char_traits<char> >& std::operator<<<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
		"std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
		"std::operator<< <std::char_traits<char> >"},
	{"_Z1fI1AIiEJEEvv", "void f<A<int> >()", "void f<A<int>>()", "f<A<int> >"},
	{"_Z1fIiEvPFvvEPFiT_E", "void f<int>(void (*)(), int (*)(int))", "void f<int>(void (*)(), int (*)(int))", "f<int>"},
	{"_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()", "(anonymous namespace)::foo()", "(anonymous namespace)::foo"},
	{"_ZNSsC1Ev", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string()",
		"std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string()",
		"std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string"},
	{"_ZNSs4swapERSs", "std::string::swap(std::string&)",
		"std::basic_string<char, std::char_traits<char>, std::allocator<char> >::swap(std::basic_string<char, std::char_traits<char>, std::allocator<char> >&)",
		"std::string::swap"},
	{"_ZTVN10__cxxabiv117__class_type_infoE", "vtable for __cxxabiv1::__class_type_info", "vtable for __cxxabiv1::__class_type_info", "vtable for __cxxabiv1::__class_type_info"},
	{"_ZThn8_N3FooD1Ev", "non-virtual thunk to Foo::~Foo()", "non-virtual thunk to Foo::~Foo()", "non-virtual thunk to Foo::~Foo()"},
	{"_ZTWN1A1xE", "thread-local wrapper routine for A::x", "TLS wrapper function for A::x", "TLS wrapper function for A::x"},
	{"_Z1fILb1ELc97ELin5EEvv", "void f<true, (char)97, -5>()", "void f<true, (char)97, -5>()", "f<true, (char)97, -5>"},
	{"_Z1fIJidEEvDpRKT_", "void f<int, double>(int const&, double const&)", "void f<int, double>(int const&, double const&)", "f<int, double>"},
	{"_Z1fRA2_iPFvvEM1AFivEDn", "f(int (&) [2], void (*)(), int (A::*)(), std::nullptr_t)", "f(int (&) [2], void (*)(), int (A::*)(), decltype(nullptr))", "f"},
	// Declined: expressions, vector types, malformed names.
	{"_ZN1A1fIiEEDTplfp_fp0_ET_S2_", "", "", ""},
	{"_Z1fDv4_f", "", "", ""},
	{"_Z3fooX", "", "", ""},
	{"_Z10foo", "", "", ""},
	{"_Z1fv@plt", "", "", ""},
}

func TestDemangle(t *testing.T) {
	var d itanium.Demangler
	for _, tt := range tests {
		for _, s := range []struct {
			style itanium.Style
			want  string
		}{{itanium.LLVM, tt.llvm}, {itanium.Full, tt.full}, {itanium.Short, tt.short}} {
			got, ok := d.Demangle(tt.name, s.style)
			if !ok {
				got = ""
			}
			if got != s.want {
				t.Errorf("Demangle(%q, %v):\n have %q\n want %q", tt.name, s.style, got, s.want)
			}
		}
	}
}

// TestNoAllocs checks that a reused Demangler appending to a buffer with
// room does not allocate.
func TestNoAllocs(t *testing.T) {
	var d itanium.Demangler
	buf := make([]byte, 0, 4096)
	const name = "_ZNSt8_Rb_treeINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4pairIKS5_iESt10_Select1stIS8_ESt4lessIS5_ESaIS8_EE8_M_eraseEPSt13_Rb_tree_nodeIS8_E"
	if _, ok := d.Append(buf, name, itanium.LLVM); !ok {
		t.Fatalf("Append(%q) declined", name)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, style := range []itanium.Style{itanium.LLVM, itanium.Full, itanium.Short} {
			d.Append(buf[:0], name, style)
		}
	})
	if allocs != 0 {
		t.Errorf("Append allocates %v times", allocs)
	}
}
