package itanium_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/demangle/itanium"
)

// FuzzDemangle checks the guarantees of the package comment: Demangle
// never panics, writes at most MaxOutput bytes and nothing when it
// declines, and gives the same answer from a reused Demangler as from a
// new one, whatever the Demangler read before. Append keeps what dst
// held. The seeds are the test table and a sample of package demangle's
// symbol lists.
func FuzzDemangle(f *testing.F) {
	for _, tt := range tests {
		f.Add(tt.name)
	}
	for _, name := range seedNames(f) {
		f.Add(name)
	}
	var reused itanium.Demangler
	f.Fuzz(func(t *testing.T, name string) {
		for _, style := range []itanium.Style{itanium.LLVM, itanium.Full, itanium.Short} {
			var fresh itanium.Demangler
			want, ok := fresh.Demangle(name, style)
			if ok && (want == "" || len(want) > itanium.MaxOutput) {
				t.Fatalf("Demangle(%q, %v) wrote %d bytes", name, style, len(want))
			}
			if !ok && want != "" {
				t.Fatalf("Demangle(%q, %v) declined but wrote %q", name, style, want)
			}
			got, ok2 := reused.Append([]byte("x"), name, style)
			if ok2 != ok || string(got) != "x"+want {
				t.Fatalf("Demangle(%q, %v) = %q, %v; a reused Demangler's Append wrote %q, %v", name, style, want, ok, got, ok2)
			}
		}
	})
}

// seedNames returns every 40th name of the symbol lists of package
// demangle.
func seedNames(tb testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "cxx-*.txt*"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no symbol lists: %v", err)
	}
	var names []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		var r io.Reader = bytes.NewReader(data)
		if strings.HasSuffix(file, ".gz") {
			if r, err = gzip.NewReader(r); err != nil {
				tb.Fatalf("%s: %v", file, err)
			}
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for i := 0; sc.Scan(); i++ {
			if i%40 == 0 {
				names = append(names, sc.Text())
			}
		}
		if err := sc.Err(); err != nil {
			tb.Fatalf("%s: %v", file, err)
		}
	}
	return names
}
