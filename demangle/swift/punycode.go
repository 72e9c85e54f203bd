package swift

import "unicode/utf8"

// Swift encodes non-ASCII identifiers with the Punycode of RFC 3492, changed
// in two ways (Mangling.rst, "Identifiers"): '_' is the delimiter instead of
// '-', and 'A' to 'J' stand for the digits 0 to 9.
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 128
	// Insertion is quadratic in the number of code points; real identifiers
	// are short, so longer input is refused rather than decoded slowly.
	maxPunycodeLen = 4096
)

func punyDigit(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return int(c - 'a')
	case c >= 'A' && c <= 'J':
		return int(c-'A') + 26
	}
	return -1
}

func punyAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((punyBase-punyTMin)*punyTMax)/2 {
		delta /= punyBase - punyTMin
		k += punyBase
	}
	return k + ((punyBase-punyTMin+1)*delta)/(delta+punySkew)
}

// decodePunycode decodes Swift's Punycode variant to UTF-8.
func decodePunycode(s string) (string, bool) {
	if len(s) > maxPunycodeLen {
		return "", false
	}
	const maxInt = int(^uint32(0) >> 1)
	var out []rune
	if d := lastIndexByte(s, '_'); d >= 0 {
		for i := 0; i < d; i++ {
			if s[i] >= 0x80 {
				return "", false
			}
			out = append(out, rune(s[i]))
		}
		s = s[d+1:]
	}
	n := punyInitialN
	bias := punyInitialBias
	i := 0
	for len(s) > 0 {
		oldi := i
		w := 1
		for k := punyBase; ; k += punyBase {
			if len(s) == 0 {
				return "", false
			}
			digit := punyDigit(s[0])
			s = s[1:]
			if digit < 0 {
				return "", false
			}
			if digit > (maxInt-i)/w {
				return "", false
			}
			i += digit * w
			t := k - bias
			if k <= bias {
				t = punyTMin
			} else if k >= bias+punyTMax {
				t = punyTMax
			}
			if digit < t {
				break
			}
			if w > maxInt/(punyBase-t) {
				return "", false
			}
			w *= punyBase - t
		}
		bias = punyAdapt(i-oldi, len(out)+1, oldi == 0)
		if i/(len(out)+1) > 0x10FFFF-n {
			return "", false
		}
		n += i / (len(out) + 1)
		i %= len(out) + 1
		if n < 0x80 || n > utf8.MaxRune || (n >= 0xD800 && n <= 0xDFFF) {
			return "", false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	return string(out), true
}

func lastIndexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}
