package rust_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/demangle/rust"
)

// fullTests are written from RFC 2603, rustc's documentation of both
// schemes and rustc-demangle's alternate form, for lack of a peer tool that
// prints it on this machine.
var fullTests = []struct {
	name, want string
}{
	// Paths.
	{"_RNvCsfFGsYgJP8xf_7mycrate3foo", "mycrate::foo"},
	{"_RNvNtCs1234_7mycrate3bar3baz", "mycrate::bar::baz"},
	{"_RNCNvCs1234_7mycrate4main0", "mycrate::main::{closure#0}"},
	{"_RNCNvCs1234_7mycrate4mains_0", "mycrate::main::{closure#1}"},
	{"_RNCNvCs1234_7mycrate4mains0_3foo", "mycrate::main::{closure:foo#2}"},
	{"_RNSNvCs1234_7mycrate4main6vtable", "mycrate::main::{shim:vtable#0}"},
	{"_RNXNvCs1234_7mycrate4main3foo", "mycrate::main::{X:foo#0}"},
	{"_RNvNvCs1234_7mycrate4main0", "mycrate::main"},
	{"_RINvCs1234_7mycrate3fooxE", "mycrate::foo::<i64>"},
	{"_RNvMCs1234_7mycrateINtB2_3FoohE3bar", "<mycrate::Foo<u8>>::bar"},
	{"_RNvXCs1234_7mycrateINtB2_3FoohENtB2_5Trait3bar", "<mycrate::Foo<u8> as mycrate::Trait>::bar"},
	{"_RNvYhNtCs1234_7mycrate5Trait3bar", "<u8 as mycrate::Trait>::bar"},
	{"_RINvC3foo3barNtB2_3BazE", "foo::bar::<foo::Baz>"},
	{"_RINvC3foo3barNtB0_3BazE", "foo::bar::<foo::bar::Baz>"},
	{"_RNvC3foo3barC3baz", "foo::bar"},
	{"_RNvC1au7gdr_8da", "a::gdr¢"},
	{"_RNvC1au7caf_dma", "a::café"},
	{"_RNvC1au3a_Z", "a::punycode{a-Z}"},
	// Types.
	{"_RINvC1a1fabcdefhijlmnostuvxyzpE", "a::f::<i8, bool, char, f64, str, f32, u8, isize, usize, i32, u32, i128, u128, i16, u16, (), ..., i64, u64, !, _>"},
	{"_RINvC1a1fAhj3_ShThtEThETEE", "a::f::<[u8; 3], [u8], (u8, u16), (u8,), ()>"},
	{"_RINvC1a1fRhQhRL_hPhOhE", "a::f::<&u8, &mut u8, &u8, *const u8, *mut u8>"},
	{"_RINvC1a1fFUKCPhEmFG_RL0_hEuFK6systemEuFK8C_unwindEuE",
		`a::f::<unsafe extern "C" fn(*const u8) -> u32, for<'a> fn(&'a u8), extern "system" fn(), extern "C-unwind" fn()>`},
	{"_RINvC1a1fFG0_RL0_hRL1_tEuFG_FG_RL1_hRL0_tEuEuE",
		"a::f::<for<'a, 'b> fn(&'b u8, &'a u16), for<'a> fn(for<'b> fn(&'a u8, &'b u16))>"},
	{"_RINvC1a1fFvEuFhvEzE", "a::f::<fn(...), fn(u8, ...) -> !>"},
	{"_RINvC1a1fDNtC4core3FooEL_DNtC4core3FooNtC4core4SendEL_E", "a::f::<dyn core::Foo, dyn core::Foo + core::Send>"},
	{"_RINvC1a1fDINtC4core2FnThEEp6OutputtEL_E", "a::f::<dyn core::Fn<(u8,), Output = u16>>"},
	{"_RINvC1a1fDNtC4core3Foop4ItemhEL_E", "a::f::<dyn core::Foo<Item = u8>>"},
	{"_RINvC1a1fDG_INtC4core2FnTRL0_hEEp6OutputRL0_hEL_E", "a::f::<dyn for<'a> core::Fn<(&'a u8,), Output = &'a u8>>"},
	{"_RINvC1a1fL_E", "a::f::<'_>"},
	// Consts.
	{"_RINvC1a1fKj7_Kan5_Kb1_Kb0_Kc78_KpE", "a::f::<7, -5, true, false, 'x', _>"},
	{"_RINvC1a1fKj10000000000000000_Kj007_Kj_E", "a::f::<0x10000000000000000, 7, 0>"},
	{"_RINvC1a1fKc27_Kc22_Kca_Kc0_Kc5c_Kcf1_Kc7f_Kc300_E", `a::f::<'\'', '"', '\n', '\0', '\\', 'ñ', '\u{7f}', '\u{300}'>`},
	{"_RINvC1a1fKRe616263_KRe220a27_KRe_E", `a::f::<"abc", "\"\n'", "">`},
	{"_RINvC1a1fKe616263_E", `a::f::<{*"abc"}>`},
	{"_RINvC1a1fKRm7_KQm7_KAh1_h2_EKTh1_EKTEE", "a::f::<{&7}, {&mut 7}, {[1, 2]}, {(1,)}, {()}>"},
	{"_RINvC1a1fKARe6162_EE", `a::f::<{["ab"]}>`},
	{"_RINvC1a1fKVNtC1a1SUKVNtC1a1STh1_EKVNtC1a1SS1xh1_1yb0_EE", "a::f::<{a::S}, {a::S(1)}, {a::S { x: 1, y: false }}>"},
	{"_RINvC1a1fAhpE", "a::f::<[u8; _]>"},
	// Prefixes and suffixes.
	{"__RNvC3foo3bar", "foo::bar"},
	{"RNvC3foo3bar", "foo::bar"},
	{"_RNvC3foo3bar.llvm.123ABC", "foo::bar"},
	{"_RNvC3foo3bar.llvm.abc", "foo::bar.llvm.abc"},
	{"_RNvC3foo3bar.cold", "foo::bar.cold"},
	{"_RNvC3foo3barC3baz.isra.0", "foo::bar.isra.0"},
	// Legacy.
	{"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
	{"_ZN4core3fmt5write17h0123456789abcdefE.llvm.123", "core::fmt::write"},
	{"_ZN4core3fmt5write17h0123456789abcdefE.cold", "core::fmt::write.cold"},
	{"__ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
	{"ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
	{"_ZN61_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..fmt..Debug$GT$3fmt17h1234567890abcdefE",
		"<alloc::vec::Vec<T> as core::fmt::Debug>::fmt"},
	{"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h0123456789abcdefE",
		"core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>"},
	{"_ZN12$RF$$BP$$SP$4a.b.17h0123456789abcdefE", "&*@::a.b."},
	{"_ZN9$XX$.rest17h0123456789abcdefE", "$XX$.rest"},
	{"_ZN3foo3bar4h12aE", "foo::bar"}, // any "h<hex>" last element is a hash
	{"_ZN3foo3barE", "foo::bar"},
}

// TestDecimalZero checks names that github.com/ianlancetaylor/demangle gets
// wrong: a <decimal-number> "0", an empty identifier, followed by another
// number, which it reads as one number. Both come from Rust's standard
// library.
func TestDecimalZero(t *testing.T) {
	for _, tt := range []struct {
		name, want string
	}{
		{"_RNCNCNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal00s_0B9_",
			"std::rt::lang_start_internal::{closure#0}::{closure#0}::{closure#1}"},
		{"_RNCINvNtNtCsjrHSEGnQ3l9_3std6thread7current17with_current_nameNCNCNvNtB8_9panicking12default_hook00uE0B8_",
			"std::thread::current::with_current_name::<std::panicking::default_hook::{closure#0}::{closure#0}, ()>::{closure#0}"},
	} {
		for _, style := range []rust.Style{rust.Full, rust.LLVM, rust.Short} {
			got, err := rust.Demangle(tt.name, rust.Options{Style: style})
			if err != nil || got != tt.want {
				t.Errorf("Demangle(%q, %v) = %q, %v\nwant %q", tt.name, style, got, err, tt.want)
			}
		}
	}
}

func TestFull(t *testing.T) {
	for _, tt := range fullTests {
		got, err := rust.Demangle(tt.name, rust.Options{})
		if err != nil || got != tt.want {
			t.Errorf("Demangle(%q, Full) = %q, %v\nwant %q", tt.name, got, err, tt.want)
		}
	}
}

// TestLifetimeNames checks the names of bound lifetimes past 'z: rustc-demangle
// writes '_26, LLVM 14 'z1.
func TestLifetimeNames(t *testing.T) {
	// A binder of 27 lifetimes ("Gp_": base-62 p is 25, plus one, plus
	// one), of which the function uses the innermost.
	name := "_RIC1aFGp_RL0_hEuRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhRhE"
	var names []string
	for i := range 26 {
		names = append(names, fmt.Sprintf("'%c", 'a'+i))
	}
	rest := strings.Repeat(", &u8", 27)
	for _, tt := range []struct {
		style rust.Style
		last  string
	}{{rust.Full, "'_26"}, {rust.LLVM, "'z1"}} {
		want := "a::<for<" + strings.Join(append(names, tt.last), ", ") + "> fn(&" + tt.last + " u8)" + rest + ">"
		got, err := rust.Demangle(name, rust.Options{Style: tt.style})
		if err != nil || got != want {
			t.Errorf("Demangle(%q, %v) = %q, %v\nwant %q", name, tt.style, got, err, want)
		}
	}
}

// llvmTests show where the LLVM style differs from the Full style; the
// peer test checks thousands more against llvm-cxxfilt-14.
var llvmTests = []struct {
	name, want string
}{
	{"_RNvCsfFGsYgJP8xf_7mycrate3foo", "mycrate::foo"},
	{"_RINvC1a1fKc27_Kc22_Kca_Kc0_Kc5c_Kcf1_Kc7f_Kc300_E", `a::f::<'\'', '"', '\n', '\u{0}', '\\', '\u{f1}', '\u{7f}', '\u{300}'>`},
	{"_RINvC1a1fKj007_E", "_RINvC1a1fKj007_E"},
	{"_RNvC3foo3bar.llvm.123ABC", "foo::bar (.llvm.123ABC)"},
	{"_RNvC3foo3bar.cold", "foo::bar (.cold)"},
	{"_RNvC3foo3barC3baz.isra.0", "foo::bar (.isra.0)"},
	{"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write::h0123456789abcdef"},
	{"_ZN4core3fmt5write17h0123456789abcdefE.llvm.123", "core::fmt::write::h0123456789abcdef (.llvm.123)"},
	{"_ZN61_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..fmt..Debug$GT$3fmt17h1234567890abcdefE",
		"_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..fmt..Debug$GT$::fmt::h1234567890abcdef"},
	{"_ZN10_GLOBAL__N3barE", "(anonymous namespace)::bar"},
}

func TestLLVM(t *testing.T) {
	for _, tt := range llvmTests {
		got, err := rust.Demangle(tt.name, rust.Options{Style: rust.LLVM})
		if err != nil {
			got = tt.name
		}
		if got != tt.want {
			t.Errorf("Demangle(%q, LLVM) = %q, %v\nwant %q", tt.name, got, err, tt.want)
		}
	}
}

func TestShort(t *testing.T) {
	for _, tt := range []struct {
		name, want string
	}{
		{"_RNvC3foo3bar.cold", "foo::bar"},
		{"_RNvC3foo3bar.llvm.123", "foo::bar"},
		{"_ZN4core3fmt5write17h0123456789abcdefE.cold", "core::fmt::write"},
		{"_RINvC1a1fKRe616263_E", `a::f::<"abc">`},
	} {
		got, err := rust.Demangle(tt.name, rust.Options{Style: rust.Short})
		if err != nil || got != tt.want {
			t.Errorf("Demangle(%q, Short) = %q, %v\nwant %q", tt.name, got, err, tt.want)
		}
	}
}

func TestErrors(t *testing.T) {
	var syntax *rust.SyntaxError
	for _, tt := range []struct {
		name   string
		style  rust.Style
		max    int
		target any // an error for errors.Is or a pointer for errors.As
		offset int // for a *SyntaxError
	}{
		{"main", rust.Full, 0, rust.ErrNotRust, 0},
		{"_Z3foov", rust.LLVM, 0, rust.ErrNotRust, 0},
		{"__RNvC3foo3bar", rust.LLVM, 0, rust.ErrNotRust, 0},
		{"_R", rust.Full, 0, &syntax, 2},
		{"_R", rust.LLVM, 0, &syntax, 2},
		{"_R0NvC3foo3bar", rust.Full, 0, &syntax, 2},
		{"_R0NvC3foo3bar", rust.LLVM, 0, &syntax, 2},
		{"_RNvC3foo3bar$x", rust.Full, 0, &syntax, 13},
		{"_RNvC3foo3bar$x", rust.LLVM, 0, &syntax, 13},
		{"_RNvC3foo3b\xc3\xa9r", rust.Full, 0, &syntax, 11},
		{"_RNvC3foo9bar", rust.Full, 0, &syntax, 9},
		{"_RNvC3fooZ3bar", rust.Full, 0, &syntax, 9},
		{"_RINvC3foo3barNtB4_3BazE", rust.LLVM, 0, &syntax, 7},
		{"_RINvC3foo3barKc110000_E", rust.Full, 0, &syntax, 16},
		{"_RINvC1a1fKRe616263_E", rust.LLVM, 0, rust.ErrUnsupported, 0},
		{"_RNvCsfFGsYgJP8xf_7mycrate3foo", rust.Full, 5, rust.ErrLimit, 0},
		{"_RINvC1a1f" + strings.Repeat("S", 600) + "hE", rust.Full, 0, rust.ErrLimit, 0},
		{"_RINvC1a1f" + strings.Repeat("S", 600) + "hE", rust.LLVM, 0, rust.ErrLimit, 0},
		{"_ZN3foo", rust.Full, 0, &syntax, 7},
		{"_ZN3foo3barEv", rust.LLVM, 0, &syntax, 12},
		{"_ZN03foo3barE", rust.LLVM, 0, &syntax, 3},
	} {
		out, err := rust.Demangle(tt.name, rust.Options{Style: tt.style, MaxLength: tt.max})
		switch target := tt.target.(type) {
		case error:
			if !errors.Is(err, target) {
				t.Errorf("Demangle(%.40q, %v) = %q, %v; want %v", tt.name, tt.style, out, err, target)
			}
		case **rust.SyntaxError:
			if !errors.As(err, target) {
				t.Errorf("Demangle(%.40q, %v) = %q, %v; want a *SyntaxError", tt.name, tt.style, out, err)
			} else if (*target).Offset != tt.offset {
				t.Errorf("Demangle(%.40q, %v): %v; want offset %d", tt.name, tt.style, err, tt.offset)
			}
		}
	}
	if _, err := rust.Demangle("_RNvC3foo3bar", rust.Options{Style: 9}); err == nil {
		t.Errorf("Demangle with style 9 succeeded")
	}
}
