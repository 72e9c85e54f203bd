package swift_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/demangle/swift"
)

// FuzzDemangle checks the guarantees of the package doc on arbitrary input:
// no panic, bounded output, deterministic results (the arena and the pool
// must not leak state from one call into the next), errors that match the
// documented sentinels, and agreement between IsMangled and the errors.
func FuzzDemangle(f *testing.F) {
	for _, path := range []string{"testdata/manglings.txt", "testdata/simplified-manglings.txt"} {
		for _, fx := range readFixtures(f, path) {
			f.Add(fx.mangled)
		}
	}
	for _, s := range []string{
		"$s4main3FooV3baryyF", "$s4main3fooyyYaKFTQ0_", "$s4main1fyyxYKs5ErrorRzlF",
		"$s4main0012vergenza_JFaVMn", "$s4main3fooyyF.cold.1",
		"$e4main3FooV3baryyF", "_$sSiSgD",
		"$sSi" + strings.Repeat("Sg", 300), "$s" + strings.Repeat("S2048i", 4) + "t",
		"$s4main" + strings.Repeat("3FooV", 50) + "yxGD", "_TtT" + strings.Repeat("TSi", 200),
		"$s4main3FooV3baryyFTf4nnd_n", "$s4main3FooV3baryyF08$s4main3FooV3baryyFTf4pf_n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := swift.Demangle(name)
		again, err2 := swift.Demangle(name)
		if got != again || (err == nil) != (err2 == nil) {
			t.Fatalf("Demangle(%q) not deterministic: %q, %v then %q, %v", name, got, err, again, err2)
		}
		simple, serr := swift.DemangleSimplified(name)
		if !swift.IsMangled(name) {
			if !errors.Is(err, swift.ErrNotMangled) || !errors.Is(serr, swift.ErrNotMangled) {
				t.Fatalf("Demangle(%q) = %q, %v; want ErrNotMangled", name, got, err)
			}
			return
		}
		for _, e := range []error{err, serr} {
			if e != nil && !errors.Is(e, swift.ErrInvalid) && !errors.Is(e, swift.ErrTooComplex) {
				t.Fatalf("Demangle(%q): error %v matches no sentinel", name, e)
			}
		}
		if err == nil {
			if got == "" || len(got) > 1<<16+1<<10 {
				t.Fatalf("Demangle(%q) = %d bytes", name, len(got))
			}
			if strings.ContainsRune(name, 0) {
				t.Fatalf("Demangle(%q) accepted a NUL byte", name)
			}
		}
		if serr == nil && (simple == "" && err == nil && got != "") {
			t.Fatalf("DemangleSimplified(%q) = empty, Demangle = %q", name, got)
		}
	})
}
