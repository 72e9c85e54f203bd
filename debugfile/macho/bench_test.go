package macho_test

import (
	"testing"

	"github.com/backtrail/backtrail/debugfile/macho"
)

func BenchmarkNewFile(b *testing.B) {
	data := readFile(b, testdataPath("crash.dsym"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := macho.NewFile(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSymbols(b *testing.B) {
	f, err := macho.NewFile(readFile(b, testdataPath("crash")))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Symbols(); err != nil {
			b.Fatal(err)
		}
	}
}
