package apple

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/backtrail/backtrail/report"
)

// Sentinel errors, for errors.Is. Every error the parsers return wraps one
// of them.
var (
	// ErrInvalid means the data is not a well-formed report of the format
	// asked for: broken JSON, a frame or image line that does not parse, an
	// image index out of range, or a report with neither an exception nor
	// a thread.
	ErrInvalid = errors.New("apple: invalid report")
	// ErrUnsupported means the data is well formed but of a kind this
	// package does not turn into a report, such as an .ips file of a
	// bug_type it does not read or a MetricKit metrics payload.
	ErrUnsupported = errors.New("apple: unsupported report")
)

// Limits on what one report holds. Parsers keep the first entries up to
// each limit, drop the rest and, except for registers, say so:
// Thread.Truncated (outer frames left out), Report.Truncated.Threads and
// .Modules, and the tag "apple.samples_truncated" for Hang.Samples.
const (
	MaxThreads      = 4096    // threads per report
	MaxFrames       = 2048    // frames per thread or sample
	MaxDepth        = 512     // levels of MetricKit subFrames followed from a root
	MaxModules      = 8192    // binary images per report
	MaxSamples      = 4096    // Hang.Samples per report
	MaxSampleFrames = 1 << 16 // frames in all Hang.Samples of a report
	MaxRegisters    = 256     // registers per thread
)

const (
	maxTag   = 4096 // bytes per tag value and exception value
	sniffLen = 4096 // bytes Sniff looks at
)

// Format is an Apple report format.
type Format int

// The formats Sniff tells apart.
const (
	FormatUnknown   Format = iota
	FormatIPS              // JSON .ips: a one-line JSON header, then the body
	FormatCrash            // legacy text .crash report
	FormatMetricKit        // MXDiagnosticPayload or MXCallStackTree JSON
)

// String returns the format's name: "unknown", "ips", "crash" or
// "metrickit".
func (f Format) String() string {
	switch f {
	case FormatIPS:
		return "ips"
	case FormatCrash:
		return "crash"
	case FormatMetricKit:
		return "metrickit"
	}
	return "unknown"
}

var bom = []byte("\xef\xbb\xbf")

// metricKitKeys are JSON keys only MetricKit documents have.
var metricKitKeys = [][]byte{
	[]byte(`"callStacks"`),
	[]byte(`"callStackRootFrames"`),
	[]byte(`"callStackTree"`),
	[]byte(`"callStackPerThread"`),
	[]byte(`"crashDiagnostics"`),
	[]byte(`"hangDiagnostics"`),
	[]byte(`"cpuExceptionDiagnostics"`),
	[]byte(`"diskWriteExceptionDiagnostics"`),
	[]byte(`"appLaunchDiagnostics"`),
	[]byte(`"diagnosticMetaData"`),
}

// Sniff reports which Apple format data holds: FormatIPS (JSON .ips: one
// header line of JSON, then a body), FormatCrash (legacy text .crash),
// FormatMetricKit (MXDiagnosticPayload or MXCallStackTree JSON), or
// FormatUnknown. It is cheap: it reads at most the first 4096 bytes. JSON whose first line names a
// "bug_type" is .ips; other JSON is MetricKit when the prefix holds a key
// only MetricKit writes (callStacks, callStackTree, crashDiagnostics and so
// on). Text is a crash report when a line starts with a field or heading
// only crash reports have (Incident Identifier:, Exception Type:, Crashed
// Thread:, Binary Images:, "Thread 0:", "Thread 0 Crashed:"), or with
// Process: together with Path:, Identifier: or Code Type:.
func Sniff(data []byte) Format {
	p := data
	if len(p) > sniffLen {
		p = p[:sniffLen]
	}
	p = bytes.TrimPrefix(p, bom)
	p = bytes.TrimLeft(p, " \t\r\n")
	if len(p) == 0 {
		return FormatUnknown
	}
	if p[0] == '{' || p[0] == '[' {
		line, _, _ := bytes.Cut(p, []byte{'\n'})
		if p[0] == '{' && bytes.Contains(line, []byte(`"bug_type"`)) {
			return FormatIPS
		}
		if hasMetricKitKey(p) {
			return FormatMetricKit
		}
		return FormatUnknown
	}
	if looksLikeCrash(p) {
		return FormatCrash
	}
	return FormatUnknown
}

// hasMetricKitKey reports whether p holds one of metricKitKeys. It runs
// on every JSON report the server receives, so it visits each quote once
// instead of searching p for each key.
func hasMetricKitKey(p []byte) bool {
	for {
		i := bytes.IndexByte(p, '"')
		if i < 0 || i+1 >= len(p) {
			return false
		}
		p = p[i:]
		switch p[1] {
		case 'a', 'c', 'd', 'h':
			for _, k := range metricKitKeys {
				if bytes.HasPrefix(p, k) {
					return true
				}
			}
		}
		p = p[1:]
	}
}

func looksLikeCrash(p []byte) bool {
	process, other := false, false
	for len(p) > 0 {
		var line []byte
		line, p, _ = bytes.Cut(p, []byte{'\n'})
		s := string(bytes.TrimRight(line, "\r"))
		switch {
		case strings.HasPrefix(s, "Incident Identifier:"),
			strings.HasPrefix(s, "Exception Type:"),
			strings.HasPrefix(s, "Crashed Thread:"),
			strings.HasPrefix(s, "Triggered by Thread:"),
			strings.HasPrefix(s, "Binary Images:"):
			return true
		case strings.HasPrefix(s, "Thread "):
			rest := s[len("Thread "):]
			n := countDigits(rest)
			if n > 0 {
				rest = rest[n:]
				if strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " Crashed") || strings.HasPrefix(rest, " name:") {
					return true
				}
			}
		case strings.HasPrefix(s, "Process:"):
			process = true
		case strings.HasPrefix(s, "Path:"), strings.HasPrefix(s, "Identifier:"), strings.HasPrefix(s, "Code Type:"):
			other = true
		}
	}
	return process && other
}

// newReport returns a report with the fields every parser sets.
func newReport(kind report.Kind, sdk, sdkVersion string) *report.Report {
	return &report.Report{
		Version:  report.Version,
		Kind:     kind,
		Platform: report.PlatformNative,
		SDK:      report.SDK{Name: sdk, Version: sdkVersion},
	}
}

// parseUUID returns u as 32 lower-case hex digits. It accepts the
// hyphenated 8-4-4-4-12 form and 32 bare hex digits, in either case.
func parseUUID(u string) (string, bool) {
	u = strings.TrimSpace(u)
	if len(u) == 36 {
		if u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-' {
			return "", false
		}
		u = u[:8] + u[9:13] + u[14:18] + u[19:23] + u[24:]
	}
	if len(u) != 32 {
		return "", false
	}
	for i := 0; i < len(u); i++ {
		if !isHex(u[i]) {
			return "", false
		}
	}
	return strings.ToLower(u), true
}

// setUUID sets m's DebugID (hyphenated) and CodeID (bare) from a UUID.
func setUUID(m *report.Module, h string) {
	m.CodeID = h
	m.DebugID = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

const nilUUID = "00000000000000000000000000000000"

// eventID returns the report's incident identifier as an event id, or, when
// there is none, the first 16 bytes of the SHA-256 of content marked as a
// version 8 (custom) UUID, so that the same upload always gets the same id.
func eventID(incident string, content ...[]byte) string {
	if h, ok := parseUUID(incident); ok && h != nilUUID {
		return h
	}
	sum := sha256.New()
	for _, c := range content {
		var n [8]byte
		for i := range n {
			n[i] = byte(uint64(len(c)) >> (8 * i))
		}
		sum.Write(n[:])
		sum.Write(c)
	}
	b := sum.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b)
}

// parseTime reads the time stamps Apple writes ("2020-11-11 14:47:34.600
// -0800", with or without fraction and zone) and RFC 3339. It returns the
// time in UTC, or the zero time for anything else, including years that
// the report format cannot hold.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05 MST", "2006-01-02 15:04:05", time.RFC3339} {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		t = t.UTC()
		if t.Year() < 1 || t.Year() > 9999 {
			return time.Time{}
		}
		return t
	}
	return time.Time{}
}

// goArch maps Apple's CPU type spellings ("X86-64", "ARM-64", "arm64e",
// "x86_64h") to GOARCH. Unknown names are returned in lower case.
func goArch(s string) string {
	k := strings.ToLower(strings.TrimSpace(s))
	k = strings.NewReplacer("-", "", "_", "", " ", "").Replace(k)
	switch k {
	case "":
		return ""
	case "x8664", "x8664h", "amd64":
		return "amd64"
	case "arm64", "arm64e", "aarch64":
		return "arm64"
	case "x86", "i386", "i486", "i586", "i686", "386":
		return "386"
	case "arm", "armv6", "armv7", "armv7s", "armv7k", "armv7f":
		return "arm"
	case "ppc", "powerpc":
		return "ppc"
	case "ppc64":
		return "ppc64"
	}
	return strings.ToLower(strings.TrimSpace(s))
}

// parseOS splits "iPhone OS 13.3.1 (17D50)", "macOS 11.3" or "Mac OS X
// 10.8.5 (12F45)" into a GOOS-style name ("ios", "darwin", or the lower-case
// name without spaces for tvOS, watchOS, visionOS and others), the version
// and the build.
func parseOS(s string) (name, version, build string) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndexByte(s, '('); i >= 0 {
			build = strings.TrimSpace(strings.TrimPrefix(s[i+1:len(s)-1], "Build "))
			s = strings.TrimSpace(s[:i])
		}
	}
	if i := strings.LastIndexByte(s, ' '); i >= 0 && i+1 < len(s) && isDigit(s[i+1]) {
		version = s[i+1:]
		s = strings.TrimSpace(s[:i])
	} else if s != "" && isDigit(s[0]) {
		version, s = s, ""
	}
	k := strings.ToLower(strings.ReplaceAll(s, " ", ""))
	switch k {
	case "macos", "macosx", "osx", "version":
		name = "darwin"
	case "iphoneos", "ios", "ipados":
		name = "ios"
	case "xros":
		name = "visionos"
	default:
		name = k
	}
	return name, version, build
}

// release formats an application version as "bundle@short+build", leaving
// out what is missing.
func release(bundle, short, build string) string {
	v := short
	if build != "" && build != short {
		if v == "" {
			v = build
		} else {
			v += "+" + build
		}
	}
	if v == "" {
		return ""
	}
	if bundle != "" {
		return bundle + "@" + v
	}
	return v
}

// setTag sets a tag if v is not empty, cutting v to maxTag bytes.
func setTag(r *report.Report, k, v string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	if len(v) > maxTag {
		v = strings.ToValidUTF8(v[:maxTag], "")
	}
	if r.Tags == nil {
		r.Tags = make(map[string]string)
	}
	r.Tags[k] = v
}

// newException builds the exception of §7 from Apple's fields: typ is the
// Mach exception (EXC_BAD_ACCESS) or empty, signal the BSD signal
// (SIGSEGV), detail the subtype or codes and message any further text.
// It returns nil when typ and signal are both empty.
func newException(typ, signal, detail, message string) *report.Exception {
	typ, signal = strings.TrimSpace(typ), strings.TrimSpace(signal)
	detail, message = strings.TrimSpace(detail), strings.TrimSpace(message)
	if typ == "" && signal == "" {
		return nil
	}
	e := &report.Exception{Type: typ, Mechanism: "mach"}
	if typ == "" || typ == signal {
		e.Type, e.Mechanism, signal = signal, "signal", ""
	}
	var v []string
	if signal != "" {
		v = append(v, signal)
	}
	if detail != "" {
		v = append(v, detail)
	}
	e.Value = strings.Join(v, ": ")
	if message != "" {
		if e.Value != "" {
			e.Value += "; "
		}
		e.Value += message
	}
	if len(e.Value) > maxTag {
		e.Value = strings.ToValidUTF8(e.Value[:maxTag], "")
	}
	return e
}

// crashedThread returns the first crashed thread, or nil.
func crashedThread(r *report.Report) *report.Thread {
	for i := range r.Threads {
		if r.Threads[i].Crashed {
			return &r.Threads[i]
		}
	}
	return nil
}

// addFrame appends f to t unless t holds MaxFrames frames already, in which
// case it marks t truncated.
func addFrame(t *report.Thread, f report.Frame) {
	nameUnknown(&f)
	if len(t.Frames) >= MaxFrames {
		t.Truncated = true
		return
	}
	t.Frames = append(t.Frames, f)
}

// unknownFrame is the function name given to a frame that has neither an
// address nor a symbol: "???", as Apple's reports print an unknown name.
const unknownFrame = "???"

// nameUnknown names f unknownFrame when it has neither an address nor a
// function: report validation rejects such a frame, and with it the report.
func nameUnknown(f *report.Frame) {
	if f.Addr == 0 && f.Function == "" {
		f.Function = unknownFrame
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func countDigits(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// parseHex reads "0x" followed by 1 to 16 hex digits.
func parseHex(s string) (uint64, bool) {
	if len(s) < 3 || len(s) > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:], 16, 64)
	return v, err == nil
}

// clampInt converts v to a non-negative int no larger than math.MaxInt32.
func clampInt(v uint64) int {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}

// satAdd adds without wrapping.
func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}

// baseName returns the last element of a slash-separated path.
func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// trimBOM drops a UTF-8 byte order mark.
func trimBOM(data []byte) []byte { return bytes.TrimPrefix(data, bom) }

// validUTF8 replaces invalid UTF-8 so that every string in a report
// survives JSON encoding unchanged.
func validUTF8(data []byte) []byte {
	if utf8.Valid(data) {
		return data
	}
	return bytes.ToValidUTF8(data, []byte("\uFFFD"))
}

// jsonError describes a JSON decoding error with the line it happened on.
// data is the text decoded and first the number of its first line.
func jsonError(what string, err error, data []byte, first int) error {
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(data))
	}
	if off >= 0 && off <= int64(len(data)) {
		line := first + bytes.Count(data[:off], []byte{'\n'})
		return fmt.Errorf("%w: %s: line %d: %v", ErrInvalid, what, line, err)
	}
	return fmt.Errorf("%w: %s: %v", ErrInvalid, what, err)
}

// num is a JSON number read leniently: an integer, or a string of decimal or
// 0x-prefixed hex digits. Fractions are cut, negative values become 0 and
// values too large for 64 bits become the largest uint64; null is 0.
type num uint64

// UnmarshalJSON implements json.Unmarshaler.
func (n *num) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) > 0 && s[0] == '"' {
		var q string
		if err := json.Unmarshal(b, &q); err != nil {
			return err
		}
		q = strings.TrimSpace(q)
		if v, ok := parseHex(q); ok {
			*n = num(v)
			return nil
		}
		s = q
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		*n = num(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%.40q is not a number", b)
	}
	switch {
	case f != f || f <= 0: // NaN cannot come from JSON, but be safe
		*n = 0
	case f >= math.MaxUint64:
		*n = math.MaxUint64
	default:
		*n = num(f)
	}
	return nil
}

// text is a JSON string that tolerates numbers, booleans and null, which
// some producers write for versions and identifiers.
type text string

// UnmarshalJSON implements json.Unmarshaler.
func (t *text) UnmarshalJSON(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	switch c := b[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
	case c == 'n':
		*t = ""
	case c == 't' || c == 'f' || c == '-' || isDigit(c):
		*t = text(b)
	default:
		return fmt.Errorf("%.40q is not a string", b)
	}
	return nil
}
