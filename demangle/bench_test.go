package demangle_test

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/internal/testenv"
)

// BenchmarkDemangle measures Demangle per scheme and style over real names:
// one op is one name, cycling through samples of the symbol lists
// (Itanium-long: all C++ names longer than 250 bytes). For C++
// it also measures the complete demangler alone (".../fallback", which was
// Demangle before the fast path of package itanium) and, for the peer
// figure, llvm-cxxfilt-14 and c++filt over the same names (".../peer=…",
// where an op is also one name and cpu-ns/op the tool's own CPU time, its
// start-up excluded). cpu-ns/op is the CPU time of the whole process per
// op, the figure to quote on a shared machine.
func BenchmarkDemangle(b *testing.B) {
	checkDemangleTests(b)
	every := func(names []string, n int) []string {
		var out []string
		for i := 0; i < len(names); i += n {
			out = append(out, names[i])
		}
		return out
	}
	var cxx []string
	for _, l := range cxxLists {
		cxx = append(cxx, readList(b, l.file)...)
	}
	rustList := func(file string) []string {
		return readList(b, filepath.Join("..", "rust", "testdata", file))
	}
	var long []string
	for _, n := range cxx {
		if len(n) > 250 {
			long = append(long, n)
		}
	}
	for _, s := range []struct {
		set    string
		scheme demangle.Scheme
		names  []string
	}{
		{"Itanium", demangle.Itanium, every(cxx, 13)},
		// The template-heavy names: all those longer than 250 bytes.
		{"Itanium-long", demangle.Itanium, long},
		{"RustV0", demangle.RustV0, rustList("v0.txt.gz")},
		{"RustLegacy", demangle.RustLegacy, rustList("legacy.txt.gz")},
		{"Swift", demangle.Swift, []string{"$s4main3FooV3baryyF", "_$s10Foundation4DataV15_RepresentationOWOy"}},
		{"None", demangle.None, []string{"main", "__libc_start_main", "_start", "memcpy@plt"}},
	} {
		for _, n := range s.names {
			if got := demangle.SchemeOf(n); got != s.scheme {
				b.Fatalf("SchemeOf(%q) = %v, want %v", n, got, s.scheme)
			}
		}
		for _, style := range []demangle.Style{demangle.Full, demangle.LLVM, demangle.Short} {
			name := s.set + "/" + style.String()
			b.Run(name, func(b *testing.B) {
				benchNames(b, s.names, func(n string) { demangle.Demangle(n, style) })
			})
			if s.scheme != demangle.Itanium {
				continue
			}
			b.Run(name+"/fallback", func(b *testing.B) {
				benchNames(b, s.names, func(n string) { demangle.SlowItanium(n, style) })
			})
			for _, p := range peers {
				if p.style == style {
					b.Run(name+"/peer="+p.tool, func(b *testing.B) { benchPeer(b, p.tool, s.names) })
				}
			}
		}
	}
}

// benchNames calls f on the names in turn, one name an op.
func benchNames(b *testing.B, names []string, f func(string)) {
	b.ReportAllocs()
	i := 0
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		f(names[i%len(names)])
		i++
	}
	if cpu := testenv.CPUTime(); cpu > cpu0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(i), "cpu-ns/op")
	}
}

// benchPeer feeds the names in turn to a filter tool, one name an op,
// and reports the tool's own CPU time per name, that of its start-up (a
// run over no input) subtracted; ns/op is the rate at which it drains
// them.
func benchPeer(b *testing.B, tool string, names []string) {
	path := testenv.Tool(b, tool)
	start := func() (*exec.Cmd, io.WriteCloser) {
		cmd := exec.Command(path)
		cmd.Stdout = io.Discard
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
		return cmd, in
	}
	wait := func(cmd *exec.Cmd, in io.WriteCloser) time.Duration {
		in.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	idle := wait(start())
	cmd, in := start()
	w := bufio.NewWriterSize(in, 64<<10)
	i := 0
	t0 := time.Now()
	for b.Loop() {
		w.WriteString(names[i%len(names)])
		w.WriteByte('\n')
		i++
	}
	if err := w.Flush(); err != nil {
		b.Fatalf("%s: %v", tool, err)
	}
	cpu := wait(cmd, in) - idle
	b.ReportMetric(float64(time.Since(t0).Nanoseconds())/float64(i), "ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(i), "cpu-ns/op")
}
