package rust_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/demangle/rust"
)

// FuzzRustV0 checks, for names of either scheme in every style, that
// Demangle never panics, fails only with the documented errors, keeps to
// the output limit, is deterministic, and that Short is Full without the
// suffix. Its seeds are the test tables and testdata's lists.
func FuzzRustV0(f *testing.F) {
	for _, tt := range fullTests {
		f.Add(tt.name)
	}
	for _, tt := range llvmTests {
		f.Add(tt.name)
	}
	for _, file := range []string{"crafted.txt", "nightly.txt", "v0.txt.gz", "legacy.txt.gz", "generated.txt.gz"} {
		for i, name := range readList(f, file) {
			if i%20 == 0 || file == "crafted.txt" || file == "nightly.txt" {
				f.Add(name)
			}
		}
	}
	f.Add("_RINvC1a1f" + strings.Repeat("S", 600) + "hE")
	f.Fuzz(func(t *testing.T, name string) {
		const small = 64
		outs := make(map[rust.Style]string)
		for _, style := range []rust.Style{rust.Full, rust.LLVM, rust.Short} {
			out, err := rust.Demangle(name, rust.Options{Style: style})
			checkResult(t, name, style, rust.DefaultMaxLength, out, err)
			again, err2 := rust.Demangle(name, rust.Options{Style: style})
			if again != out || (err == nil) != (err2 == nil) {
				t.Fatalf("Demangle(%q, %v) gave %q, %v, then %q, %v", name, style, out, err, again, err2)
			}
			// With a small limit, the same name or ErrLimit.
			lim, err := rust.Demangle(name, rust.Options{Style: style, MaxLength: small})
			checkResult(t, name, style, small, lim, err)
			if again != "" && len(again) <= small && lim != again {
				t.Fatalf("Demangle(%q, %v) with MaxLength %d = %q, %v; want %q", name, style, small, lim, err, again)
			}
			if len(again) > small && !errors.Is(err, rust.ErrLimit) {
				t.Fatalf("Demangle(%q, %v) with MaxLength %d: %v, want ErrLimit", name, style, small, err)
			}
			if err2 == nil {
				outs[style] = out
			}
		}
		full, okFull := outs[rust.Full]
		short, okShort := outs[rust.Short]
		if okFull != okShort || !strings.HasPrefix(full, short) {
			t.Fatalf("Demangle(%q): Full %q (%v) but Short %q (%v)", name, full, okFull, short, okShort)
		}
	})
}

// checkResult checks one result of Demangle.
func checkResult(t *testing.T, name string, style rust.Style, max int, out string, err error) {
	t.Helper()
	if err != nil {
		if out != "" {
			t.Fatalf("Demangle(%q, %v) = %q with error %v", name, style, out, err)
		}
		var se *rust.SyntaxError
		switch {
		case errors.As(err, &se):
			if se.Offset < 0 || se.Offset > len(name) {
				t.Fatalf("Demangle(%q, %v): %v: offset outside the name", name, style, err)
			}
		case errors.Is(err, rust.ErrNotRust), errors.Is(err, rust.ErrLimit), errors.Is(err, rust.ErrUnsupported):
		default:
			t.Fatalf("Demangle(%q, %v): unexpected error %v", name, style, err)
		}
		return
	}
	if len(out) > max {
		t.Fatalf("Demangle(%q, %v) wrote %d bytes, more than %d", name, style, len(out), max)
	}
}
