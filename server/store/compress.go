package store

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
)

// Payloads and processed reports are stored compressed in S2's block
// format (github.com/klauspost/compress/s2): a processed report of the
// load benchmark (30 KB of JSON) compresses in 10 µs to 5.2 KB, where
// zstd at its fastest level without entropy coding took 41 µs for 4.6 KB,
// and decompresses in half the time.
//
// Rows written before that hold zstd frames. They are told apart by
// zstd's magic number: an S2 block starts with its decoded length as a
// uvarint, and 0x28, the magic's first byte, would be a length of 40
// followed by the tag 0xB5, a copy, which cannot begin a block (there is
// nothing to copy from yet).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxStored bounds the decoded size of a stored value, like the zstd
// decoder's memory limit.
const maxStored = 256 << 20

// scratch holds encoding buffers: s2.Encode needs room for the worst case
// (a little more than the input), far more than the result.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// compress returns b compressed, in a slice of its own size.
func compress(b []byte) []byte {
	sp := scratch.Get().(*[]byte)
	out := s2.Encode(*sp, b)
	c := bytes.Clone(out)
	*sp = out[:0]
	scratch.Put(sp)
	return c
}

// decompress decodes a stored value of either format.
func (db *DB) decompress(b []byte) ([]byte, error) {
	if bytes.HasPrefix(b, zstdMagic) {
		return db.dec.DecodeAll(b, nil)
	}
	n, err := s2.DecodedLen(b)
	if err != nil {
		return nil, err
	}
	if n > maxStored {
		return nil, fmt.Errorf("decoded size %d above %d", n, maxStored)
	}
	return s2.Decode(nil, b)
}
