package rust

import (
	"strings"
	"unicode/utf8"
)

// Punycode (RFC 3492, https://www.rfc-editor.org/rfc/rfc3492) parameters.
// v0 identifiers use '_' where RFC 3492 uses '-' as the delimiter.
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 0x80
)

// decodePunycode decodes an identifier whose basic code points are ascii and
// whose encoded deltas are enc. It fails if enc is malformed, a value
// overflows, a code point is not a Unicode scalar value, or the result would
// have more than limit code points.
func decodePunycode(ascii, enc string, limit int) (string, bool) {
	if len(ascii) > limit {
		return "", false
	}
	out := make([]rune, 0, len(ascii)+len(enc))
	for i := 0; i < len(ascii); i++ {
		out = append(out, rune(ascii[i]))
	}
	const maxU = ^uint64(0)
	var (
		n     uint64 = punyInitialN
		i     uint64
		bias  uint64 = punyInitialBias
		first        = true
	)
	for pos := 0; pos < len(enc); {
		oldi, w := i, uint64(1)
		for k := uint64(punyBase); ; k += punyBase {
			if pos >= len(enc) {
				return "", false
			}
			c := enc[pos]
			pos++
			var digit uint64
			switch {
			case 'a' <= c && c <= 'z':
				digit = uint64(c - 'a')
			case '0' <= c && c <= '9':
				digit = uint64(c-'0') + 26
			default:
				return "", false
			}
			if digit > (maxU-i)/w {
				return "", false
			}
			i += digit * w
			t := k - bias
			switch {
			case k <= bias:
				t = punyTMin
			case k >= bias+punyTMax:
				t = punyTMax
			}
			if digit < t {
				break
			}
			if w > maxU/(punyBase-t) {
				return "", false
			}
			w *= punyBase - t
		}
		points := uint64(len(out)) + 1
		bias = punyAdapt(i-oldi, points, first)
		first = false
		if i/points > maxU-n {
			return "", false
		}
		n += i / points
		i %= points
		if n > utf8.MaxRune || !utf8.ValidRune(rune(n)) || len(out) >= limit {
			return "", false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	var b strings.Builder
	for _, r := range out {
		b.WriteRune(r)
	}
	return b.String(), true
}

// punyAdapt is RFC 3492's bias adaptation function.
func punyAdapt(delta, points uint64, first bool) uint64 {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / points
	k := uint64(0)
	for delta > ((punyBase-punyTMin)*punyTMax)/2 {
		delta /= punyBase - punyTMin
		k += punyBase
	}
	return k + (punyBase-punyTMin+1)*delta/(delta+punySkew)
}
