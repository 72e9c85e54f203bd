package debugfile_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/internal/testenv"
)

const splitSource = `
static inline int inner(int v) { return v * 3 + 1; }
__attribute__((noinline)) int outer(int v) { return inner(v) ^ 5; }
int main(int argc, char **argv) { (void)argv; return outer(argc); }
`

// buildSplit compiles splitSource with -gsplit-dwarf in dir/build, with a
// relative object name, so that the skeleton names prog.dwo relative to its
// compilation directory. It returns the executable.
func buildSplit(t *testing.T, dir string, dwarfVersion string, source string) string {
	t.Helper()
	cc := testenv.Tool(t, "clang-14")
	build := filepath.Join(dir, "build")
	if err := os.MkdirAll(build, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "prog.c"), []byte(source), 0o666); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = build
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run(cc, "-c", "-g", "-gdwarf-"+dwarfVersion, "-gsplit-dwarf", "-O2", "-o", "prog.o", "prog.c")
	run(cc, "--ld-path="+testenv.Tool(t, "ld.lld-14"), "-o", "prog", "prog.o")
	return filepath.Join(build, "prog")
}

// readSplit reads the program's only compilation unit the way the
// symbolizer does, following split DWARF when follow is set.
func readSplit(t *testing.T, exe string, follow bool) dwarf.UnitInfo {
	t.Helper()
	return readSplitWith(t, exe, follow, "")
}

// readSplitWith is readSplit with the package dwp named.
func readSplitWith(t *testing.T, exe string, follow bool, dwp string) dwarf.UnitInfo {
	t.Helper()
	f, err := debugfile.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if follow {
		f.FollowSplitDWARF(exe, dwp)
	}
	d, err := f.Objects[0].DWARF()
	if err != nil {
		t.Fatal(err)
	}
	units := d.Units()
	if len(units) != 1 {
		t.Fatalf("%d units, want the skeleton alone", len(units))
	}
	var ui dwarf.UnitInfo
	if err := d.ReadUnit(&units[0], &ui); err != nil {
		t.Fatal(err)
	}
	if len(ui.Ranges) == 0 {
		t.Errorf("the skeleton's address ranges are lost")
	}
	return ui
}

// inlinedNames returns the names of the unit's inlined subroutines.
func inlinedNames(ui *dwarf.UnitInfo) []string {
	var out []string
	for i, s := range ui.Subroutines {
		if s.Inlined {
			n, _ := ui.SubroutineName(i)
			out = append(out, string(n))
		}
	}
	return out
}

func checkSplit(t *testing.T, ui dwarf.UnitInfo, want bool) {
	t.Helper()
	got := inlinedNames(&ui)
	if want && (!ui.Split || len(got) != 1 || got[0] != "inner") {
		t.Errorf("split unit read: %v, inlined %q; want the split unit, with inner inlined", ui.Split, got)
	}
	if !want && (ui.Split || len(ui.Subroutines) != 0) {
		t.Errorf("split unit read: %v, %d subroutines; want the skeleton alone", ui.Split, len(ui.Subroutines))
	}
}

// TestFollowSplitDWARF finds split units where llvm-symbolizer and gdb find
// them, and leaves a skeleton alone, with its ranges, when its split unit
// is missing, of another build, or not to be followed.
func TestFollowSplitDWARF(t *testing.T) {
	for _, v := range []string{"4", "5"} {
		t.Run("dwarf"+v, func(t *testing.T) {
			dir := t.TempDir()
			exe := buildSplit(t, dir, v, splitSource)
			dwo := filepath.Join(filepath.Dir(exe), "prog.dwo")

			t.Run("compilation-directory", func(t *testing.T) {
				ui := readSplit(t, exe, true)
				checkSplit(t, ui, true)
				if !strings.Contains(string(ui.Producer), "clang") || ui.Language == 0 {
					t.Errorf("producer %q, language %v: want the split unit's", ui.Producer, ui.Language)
				}
			})
			t.Run("not-followed", func(t *testing.T) {
				checkSplit(t, readSplit(t, exe, false), false)
			})
			t.Run("moved-beside-binary", func(t *testing.T) {
				moved := filepath.Join(dir, "moved")
				if err := os.Rename(filepath.Dir(exe), moved); err != nil {
					t.Fatal(err)
				}
				defer os.Rename(moved, filepath.Dir(exe))
				checkSplit(t, readSplit(t, filepath.Join(moved, "prog"), true), true)
			})
			t.Run("bad-package-ignored", func(t *testing.T) {
				// A .dwp that is no package does not hide the .dwo.
				if err := os.WriteFile(exe+".dwp", []byte("\x7fELF garbage"), 0o666); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(exe + ".dwp")
				checkSplit(t, readSplit(t, exe, true), true)
			})
			t.Run("package", func(t *testing.T) {
				cmd := exec.Command(testenv.Tool(t, "llvm-dwp-14"), "-e", exe, "-o", exe+".dwp")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("llvm-dwp: %v\n%s", err, out)
				}
				defer os.Remove(exe + ".dwp")
				hidden := dwo + ".hidden"
				if err := os.Rename(dwo, hidden); err != nil {
					t.Fatal(err)
				}
				defer os.Rename(hidden, dwo)
				checkSplit(t, readSplit(t, exe, true), true)
				// Named, from anywhere; and a name replaces the default.
				named := filepath.Join(dir, "elsewhere.dwp")
				if err := os.Rename(exe+".dwp", named); err != nil {
					t.Fatal(err)
				}
				checkSplit(t, readSplitWith(t, exe, true, named), true)
				checkSplit(t, readSplit(t, exe, true), false)
				if err := os.Rename(named, exe+".dwp"); err != nil {
					t.Fatal(err)
				}
				checkSplit(t, readSplitWith(t, exe, true, named), false)
			})
			t.Run("missing", func(t *testing.T) {
				hidden := dwo + ".hidden"
				if err := os.Rename(dwo, hidden); err != nil {
					t.Fatal(err)
				}
				defer os.Rename(hidden, dwo)
				checkSplit(t, readSplit(t, exe, true), false)
			})
			t.Run("junk-dwo", func(t *testing.T) {
				// Not a split file at all: the skeleton stands alone and
				// the error names the file.
				saved, err := os.ReadFile(dwo)
				if err != nil {
					t.Fatal(err)
				}
				defer os.WriteFile(dwo, saved, 0o666)
				if err := os.WriteFile(dwo, []byte("\x7fELF not really"), 0o666); err != nil {
					t.Fatal(err)
				}
				f, err := debugfile.Open(exe)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				f.FollowSplitDWARF(exe, "")
				d, err := f.Objects[0].DWARF()
				if err != nil {
					t.Fatal(err)
				}
				var ui dwarf.UnitInfo
				if err := d.ReadUnit(&d.Units()[0], &ui); err != nil {
					t.Fatal(err)
				}
				checkSplit(t, ui, false)
				if errs := f.SplitDWARFErrors(); len(errs) != 1 || !strings.Contains(errs[0].Error(), dwo) {
					t.Errorf("split errors %v, want one naming %s", errs, dwo)
				}
			})
			t.Run("other-build", func(t *testing.T) {
				// A .dwo rebuilt from changed source has another id (a
				// hash of its entries): its units describe other code,
				// and are not read.
				other := buildSplit(t, t.TempDir(), v, strings.ReplaceAll(splitSource, "inner(", "inner2("))
				saved, err := os.ReadFile(dwo)
				if err != nil {
					t.Fatal(err)
				}
				defer os.WriteFile(dwo, saved, 0o666)
				b, err := os.ReadFile(filepath.Join(filepath.Dir(other), "prog.dwo"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(dwo, b, 0o666); err != nil {
					t.Fatal(err)
				}
				checkSplit(t, readSplit(t, exe, true), false)
			})
		})
	}
}
