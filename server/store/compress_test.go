package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestDecompress: values compressed now (S2) and values stored before
// (zstd frames) both decode to what was stored, whatever their size.
func TestDecompress(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "backtrail.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithNoEntropyCompression(true))
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 5000)
	rand.Read(random)
	inputs := map[string][]byte{
		"empty":  {},
		"short":  []byte("{}"),
		"40 B":   bytes.Repeat([]byte("x"), 40), // the length zstd's magic would give
		"json":   bytes.Repeat([]byte(`{"function":"main","file":"main.cpp","line":94},`), 600),
		"random": random,
		"magic":  append([]byte{0x28, 0xb5, 0x2f, 0xfd}, random[:36]...),
	}
	for name, in := range inputs {
		for _, c := range []struct {
			format string
			stored []byte
		}{
			{"s2", compress(in)},
			{"zstd", old.EncodeAll(in, nil)},
		} {
			out, err := db.decompress(c.stored)
			if err != nil || !bytes.Equal(out, in) {
				t.Errorf("%s, stored as %s (%d bytes): decompress = %d bytes, %v; want the %d bytes stored", name, c.format, len(c.stored), len(out), err, len(in))
			}
		}
	}
	if _, err := db.decompress([]byte{0x28, 0xb5, 0x2f}); err == nil {
		t.Errorf("decompress of a truncated value: no error")
	}
}
