package demangle

import (
	"regexp"
	"strconv"
	"strings"

	cxx "github.com/ianlancetaylor/demangle"
)

// The C++ demangler (at the version go.mod pins) has a bug in unresolved
// names of the form
//
//	sr <unresolved-qualifier-level>+ E <base-unresolved-name>
//
// which GCC and Clang emit for expressions such as is_signed<T>::value in
// SFINAE return types (std::enable_if<…>). For a qualifier level with
// template arguments, "9is_signedIT_E", it adds the bare source name
// "is_signed" to the substitution table before the arguments, which neither
// the Itanium ABI nor GNU c++filt nor LLVM does. Every later substitution
// reference then resolves one entry too early, and the demangled parameter
// types come out wrong: std::swap<Point>(std::__is_tuple_like&, …).
//
// renumberSubstitutions works around the bug by rewriting the name so that
// its references point where the demangler's table has the entries: each
// reference S<n>_ that was written after such a qualifier, and whose index
// is not below the table's size at the qualifier without the extra entries,
// is moved up by one per extra entry. To stay exact it does not parse the
// name itself but asks the demangler: a probe name with a substitution
// index out of range makes it report the table's size at the probe, and so
// both finds the sizes and tells references from identifier bytes.

// outOfRange matches the demangler's error for a substitution index out of
// range, which reports the index and the table's size.
var outOfRange = regexp.MustCompile(`substitution index out of range \((\d+) >= (\d+)\) at \d+$`)

// probeSeq is the seq-id of a probe reference, "S" probeSeq "_", whose
// index (36^4) no real name reaches.
const probeSeq = "ZZZZ"

var probeIndex = func() int {
	n, _ := strconv.ParseInt(probeSeq, 36, 64)
	return int(n) + 1
}()

// probeSize parses name and reports the size of the substitution table at
// the probe reference in it, or false if the demangler did not reach the
// probe.
func probeSize(name string) (int, bool) {
	_, err := cxx.ToAST(name)
	if err == nil {
		return 0, false
	}
	m := outOfRange.FindStringSubmatch(err.Error())
	if m == nil || m[1] != strconv.Itoa(probeIndex) {
		return 0, false
	}
	n, err := strconv.Atoi(m[2])
	return n, err == nil
}

// srQualifiers returns the offsets in name of the template argument lists
// that follow a source name at the start of "sr" qualifier levels: the
// places where the demangler adds an extra substitution. It reads the
// levels up to the first with template arguments; some offsets may be
// inside identifiers, which the probes weed out.
func srQualifiers(name string) []int {
	var at []int
	for i := 0; ; {
		j := strings.Index(name[i:], "sr")
		if j < 0 {
			return at
		}
		i += j + len("sr")
		for k := i; k < len(name) && '0' <= name[k] && name[k] <= '9'; {
			n := 0
			for k < len(name) && '0' <= name[k] && name[k] <= '9' {
				n = n*10 + int(name[k]-'0')
				k++
				if n > len(name) {
					break
				}
			}
			if n > len(name)-k {
				break
			}
			k += n
			if k < len(name) && name[k] == 'I' {
				at = append(at, k)
				break
			}
		}
	}
}

// seqRef is a substitution reference S<seq-id>_ in a mangled name.
type seqRef struct {
	off, end int // offsets of the 'S' and after the '_'
	index    int // 0 for S_, seq-id+1 for S<seq-id>_
}

// seqRefsAfter returns the tokens that look like substitution references
// after offset from.
func seqRefsAfter(name string, from int) []seqRef {
	var refs []seqRef
	for p := from; p < len(name); p++ {
		if name[p] != 'S' {
			continue
		}
		q := p + 1
		for q < len(name) && ('0' <= name[q] && name[q] <= '9' || 'A' <= name[q] && name[q] <= 'Z') {
			q++
		}
		if q >= len(name) || name[q] != '_' || q-p > 8 {
			continue
		}
		index := 0
		if q > p+1 {
			n, err := strconv.ParseInt(name[p+1:q], 36, 64)
			if err != nil {
				continue
			}
			index = int(n) + 1
		}
		refs = append(refs, seqRef{p, q + 1, index})
	}
	return refs
}

// Each probe parses the whole name again. maxProbeBytes bounds the bytes
// that all the probes of one name parse, so that a long hostile name cannot
// multiply the cost of demangling: a name of 500 bytes, longer than most
// with the bug, may have 64 probes.
const maxProbeBytes = 32 << 10

// renumberSubstitutions returns name with its substitution references
// renumbered for the demangler's bug described above, or name itself if
// the bug does not apply or the name needs too many probes.
func renumberSubstitutions(name string) string {
	quals := srQualifiers(name)
	probes := maxProbeBytes / (len(name) + 1)
	if len(quals) == 0 || len(quals) > probes {
		return name
	}
	// For each real qualifier, the table's size before the extra entry,
	// counted as the peers count.
	type extra struct{ off, size int }
	var extras []extra
	for _, off := range quals {
		probe := name[:off+1] + "S" + probeSeq + "_" + name[off+1:]
		n, ok := probeSize(probe)
		if !ok {
			continue
		}
		// The probe's table holds this qualifier's extra entry and the
		// earlier ones.
		extras = append(extras, extra{off, n - 1 - len(extras)})
	}
	if len(extras) == 0 {
		return name
	}
	refs := seqRefsAfter(name, extras[0].off)
	if len(quals)+len(refs) > probes {
		return name
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		probe := name[:r.off] + "S" + probeSeq + "_" + name[r.end:]
		if _, ok := probeSize(probe); !ok {
			continue // not a reference the demangler reads
		}
		shift := 0
		for _, e := range extras {
			if e.off < r.off && e.size <= r.index {
				shift++
			}
		}
		if shift == 0 {
			continue
		}
		b.WriteString(name[last:r.off])
		b.WriteString(seqID(r.index + shift))
		last = r.end
	}
	if last == 0 {
		return name
	}
	b.WriteString(name[last:])
	return b.String()
}

// seqID writes the substitution reference for a table index.
func seqID(index int) string {
	if index == 0 {
		return "S_"
	}
	return "S" + strings.ToUpper(strconv.FormatInt(int64(index-1), 36)) + "_"
}
