package debugfile

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// DebugID identifies the debug information of one object for one
// architecture, in the form Sentry and crash reports use: a UUID plus an
// appendix (age) that is 0 for ELF and Mach-O. Its String form is the
// hyphenated UUID, followed by "-" and the hexadecimal age when non-zero.
type DebugID struct {
	UUID [16]byte
	Age  uint32
}

// IsZero reports whether d is the zero DebugID (no identifier known).
func (d DebugID) IsZero() bool { return d == DebugID{} }

func (d DebugID) String() string {
	u := d.UUID
	s := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	if d.Age != 0 {
		s += "-" + strconv.FormatUint(uint64(d.Age), 16)
	}
	return s
}

// ParseDebugID parses a debug id with or without hyphens, in any case, with
// an optional appendix.
func ParseDebugID(s string) (DebugID, error) {
	var d DebugID
	raw := strings.ReplaceAll(s, "-", "")
	if len(raw) < 32 {
		return d, fmt.Errorf("debug id %q: too short", s)
	}
	b, err := hex.DecodeString(raw[:32])
	if err != nil {
		return d, fmt.Errorf("debug id %q: %w", s, err)
	}
	copy(d.UUID[:], b)
	if rest := raw[32:]; rest != "" {
		age, err := strconv.ParseUint(rest, 16, 32)
		if err != nil {
			return d, fmt.Errorf("debug id %q: bad appendix: %w", s, err)
		}
		d.Age = uint32(age)
	}
	return d, nil
}

// debugIDFromBuildID derives the debug id of an ELF file from its GNU
// build-id as Sentry and Breakpad do: the first 16 bytes (zero-padded) read
// as a GUID, whose first three fields are stored in the file's byte order
// and printed big-endian, so on little-endian files they are byte-swapped.
func debugIDFromBuildID(id []byte, bigEndian bool) DebugID {
	var d DebugID
	copy(d.UUID[:], id)
	if !bigEndian {
		swapGUID(&d.UUID)
	}
	return d
}

// debugIDFromText derives a debug id for an ELF file without a build-id
// from its code, as Sentry and Breakpad do: the first page of .text folded
// by XOR into 16 bytes, then read as a GUID.
func debugIDFromText(text []byte, bigEndian bool) DebugID {
	var d DebugID
	text = text[:min(len(text), 4096)]
	for i, b := range text {
		d.UUID[i%16] ^= b
	}
	if !bigEndian {
		swapGUID(&d.UUID)
	}
	return d
}

func swapGUID(u *[16]byte) {
	u[0], u[1], u[2], u[3] = u[3], u[2], u[1], u[0]
	u[4], u[5] = u[5], u[4]
	u[6], u[7] = u[7], u[6]
}
