package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/testenv"
)

// TestDemangleMatchesCxxfilt feeds the same text to `backtrail demangle`
// and GNU c++filt: names alone, names inside stack-trace text, and words
// that are not names.
func TestDemangleMatchesCxxfilt(t *testing.T) {
	cxxfilt := testenv.Tool(t, "c++filt")
	input := strings.Join([]string{
		"_ZN9backtrail7fixture5stats7largestIiEET_St6vectorIS3_SaIS3_EE",
		"#3 0x401136 in _ZNSt6vectorIiSaIiEE9push_backERKi (a.out+0x1136)",
		"_Z3fooi.constprop.0 and _ZN4core3fmt5write17h0123456789abcdefE",
		"not_a_name main 0x1234 _Z",
		"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv",
		"",
	}, "\n")
	cmd := exec.Command(cxxfilt)
	cmd.Stdin = strings.NewReader(input)
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := runBacktrail(t, input, "demangle")
	// c++filt demangles legacy Rust names as C++ (with the hash); ours is
	// rustc-demangle's form. Compare the C++ lines.
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	if len(wl) != len(gl) {
		t.Fatalf("c++filt wrote %d lines, backtrail %d:\n%s\n---\n%s", len(wl), len(gl), want, got)
	}
	for i := range wl {
		if strings.Contains(wl[i], "core::fmt::write") {
			if !strings.Contains(gl[i], "core::fmt::write") || strings.Contains(gl[i], "h0123456789abcdef") {
				t.Errorf("line %d: Rust name as %q", i, gl[i])
			}
			continue
		}
		if wl[i] != gl[i] {
			t.Errorf("line %d:\nc++filt:   %q\nbacktrail: %q", i, wl[i], gl[i])
		}
	}
}

func TestDemangleArgs(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"demangle", "_Z3fooi"}, "foo(int)\n"},
		{[]string{"demangle", "-p", "_Z3fooi"}, "foo\n"},
		{[]string{"demangle", "-_", "__Z3fooi"}, "foo(int)\n"},
		{[]string{"demangle", "--style=llvm", "_Z3fooi.constprop.0"}, "foo(int) (.constprop.0)\n"},
		{[]string{"demangle", "$s4main3FooV3baryyF"}, "main.Foo.bar() -> ()\n"},
		{[]string{"demangle", "_RNvCs1234_7mycrate3foo"}, "mycrate::foo\n"},
		{[]string{"demangle", "plain"}, "plain\n"},
		{[]string{"demangle", "--json", "_Z3fooi"}, `{"demangled":"foo(int)","name":"_Z3fooi","scheme":"itanium"}` + "\n"},
	} {
		if got := runBacktrail(t, "", tt.args...); got != tt.want {
			t.Errorf("backtrail %v = %q, want %q", tt.args, got, tt.want)
		}
	}
}
