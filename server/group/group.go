// Package group fingerprints events so that events of the same problem
// form one issue. It is pure: a function of the processed (symbolicated,
// in-app marked) report. The algorithm is versioned; an issue records the
// version that made its fingerprint, and a change to the algorithm that
// moves events between issues must increment Version.
//
// Version 1:
//   - a client fingerprint is used as given, "{{ default }}" standing for
//     the default components below;
//   - crashes and dumps group on the kind, the exception type and the
//     cleaned function names of the in-app frames of the crashed thread
//     (the first thread when none crashed), up to 16;
//   - hangs group on the hung thread the same way, without exception;
//   - audits group on the audited kind and the call site: the in-app frames
//     of the entry with the highest count;
//   - with no in-app frame the system frames are used instead; with no
//     function names, module names plus module-relative addresses; with no
//     frames at all, the exception type and value.
package group

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/report"
)

// Version is the grouping algorithm's version.
const Version = 1

// maxFrames is how many frames of a stack take part in a fingerprint.
const maxFrames = 16

// Result is how an event groups.
type Result struct {
	Fingerprint string   // hex SHA-256 of the components
	Components  []string // what the fingerprint was made of, for display
	Title       string
	Culprit     string
	Version     int
}

// Group fingerprints a processed report.
func Group(r *report.Report) Result {
	frames := primaryFrames(r)
	def := defaultComponents(r, frames)
	comps := def
	if len(r.Fingerprint) > 0 {
		comps = nil
		for _, f := range r.Fingerprint {
			if f == "{{ default }}" || f == "{{default}}" {
				comps = append(comps, def...)
				continue
			}
			comps = append(comps, "client:"+f)
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "v%d\n", Version)
	for _, c := range comps {
		h.Write([]byte(c))
		h.Write([]byte{'\n'})
	}
	culprit := culpritOf(frames)
	return Result{
		Fingerprint: hex.EncodeToString(h.Sum(nil)),
		Components:  comps,
		Title:       titleOf(r, frames, culprit),
		Culprit:     culprit,
		Version:     Version,
	}
}

// primaryFrames returns the stack an event is about.
func primaryFrames(r *report.Report) []report.Frame {
	if r.Kind == report.KindAudit && r.Audit != nil && len(r.Audit.Entries) > 0 {
		best := r.Audit.Entries[0]
		for _, e := range r.Audit.Entries[1:] {
			if e.Count > best.Count {
				best = e
			}
		}
		return best.Frames
	}
	for _, t := range r.Threads {
		if t.Crashed {
			return t.Frames
		}
	}
	if r.Exception != nil && r.Exception.ThreadID != 0 {
		for _, t := range r.Threads {
			if t.ID == r.Exception.ThreadID {
				return t.Frames
			}
		}
	}
	if len(r.Threads) > 0 {
		return r.Threads[0].Frames
	}
	if r.Hang != nil && len(r.Hang.Samples) > 0 {
		best := r.Hang.Samples[0]
		for _, s := range r.Hang.Samples[1:] {
			if s.Weight > best.Weight {
				best = s
			}
		}
		return best.Frames
	}
	return nil
}

func defaultComponents(r *report.Report, frames []report.Frame) []string {
	comps := []string{"kind:" + string(r.Kind)}
	switch r.Kind {
	case report.KindAudit:
		if r.Audit != nil {
			var kinds []string
			for _, e := range r.Audit.Entries {
				kinds = append(kinds, e.Kind)
			}
			slices.Sort(kinds)
			comps = append(comps, "audit:"+strings.Join(slices.Compact(kinds), ","))
		}
	case report.KindCrash, report.KindDump:
		if r.Exception != nil {
			comps = append(comps, "type:"+r.Exception.Type)
		}
	}
	stack := stackComponents(frames)
	if len(stack) == 0 && r.Exception != nil {
		stack = []string{"value:" + CleanMessage(r.Exception.Value)}
	}
	return append(comps, stack...)
}

// stackComponents returns the frames that identify a stack: in-app
// function names, else any function names, else module names. Only the
// frames that take part are cleaned.
func stackComponents(frames []report.Frame) []string {
	pick := func(keep func(report.Frame) bool, comp func(report.Frame) string) []string {
		var out []string
		for _, f := range frames {
			if len(out) == maxFrames {
				break
			}
			if keep(f) {
				out = append(out, comp(f))
			}
		}
		return out
	}
	fn := func(f report.Frame) string { return "fn:" + CleanFunction(f.Function) }
	if s := pick(func(f report.Frame) bool { return f.InApp && f.Function != "" }, fn); len(s) > 0 {
		return s
	}
	if s := pick(func(f report.Frame) bool { return f.Function != "" }, fn); len(s) > 0 {
		return s
	}
	return pick(func(f report.Frame) bool { return f.Module != "" }, func(f report.Frame) string { return "module:" + f.Module })
}

var (
	goClosureRE = regexp.MustCompile(`\.(func|gowrap|deferwrap)\d+(\.\d+)*`)
	swiftClosRE = regexp.MustCompile(`closure #\d+`)
	hexRE       = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	rustHashRE  = regexp.MustCompile(`::h[0-9a-f]{16}$`)
	numbersRE   = regexp.MustCompile(`\b\d+\b`)
)

// CleanFunction reduces a function name to what stays the same between
// builds and instances: demangled without parameters, Go closure and
// lambda counters removed, generic shape arguments elided, addresses
// dropped.
func CleanFunction(name string) string {
	if v, ok := cleaned.Load(name); ok {
		return v.(string)
	}
	s := cleanFunction(name)
	// The same functions come back in event after event; the cache is
	// dropped whole when it grows, which bounds it without bookkeeping.
	if cleanedN.Add(1) > maxCleaned {
		cleaned.Clear()
		cleanedN.Store(0)
	}
	cleaned.Store(name, s)
	return s
}

const maxCleaned = 1 << 16

var (
	cleaned  sync.Map // name → cleaned name
	cleanedN atomic.Int64
)

func cleanFunction(name string) string {
	style := demangle.Short
	if demangle.SchemeOf(name) == demangle.Swift {
		// Swift's short form drops the module, which would merge
		// same-named functions of different modules.
		style = demangle.Full
	}
	s := demangle.Demangle(name, style)
	s = rustHashRE.ReplaceAllString(s, "")
	s = goClosureRE.ReplaceAllString(s, ".$1")
	s = elideLambdas(s)
	s = swiftClosRE.ReplaceAllString(s, "closure")
	if i := strings.Index(s, "[go.shape."); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j >= 0 {
			s = s[:i] + "[...]" + s[i+j+1:]
		}
	}
	s = strings.TrimSuffix(s, ".abi0")
	return hexRE.ReplaceAllString(s, "")
}

// elideLambdas replaces the C++ closure types the demanglers print,
// "{lambda(int const&)#2}" (GNU) and "'lambda1'(int const&)" (LLVM), by
// "{lambda}": their counters and parameter lists change between builds. A
// hand-written scan, as a regular expression with nested parentheses
// backtracks badly on long template names.
func elideLambdas(s string) string {
	if !strings.Contains(s, "lambda") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "lambda")
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		switch {
		case j > 0 && s[j-1] == '{' && j+6 < len(s) && s[j+6] == '(':
			// {lambda(...)#N}
			end := matchParen(s, j+6)
			if end > 0 && end+1 < len(s) && s[end+1] == '#' {
				k := end + 2
				for k < len(s) && s[k] >= '0' && s[k] <= '9' {
					k++
				}
				if k < len(s) && s[k] == '}' {
					b.WriteString(s[i : j-1])
					b.WriteString("{lambda}")
					i = k + 1
					continue
				}
			}
		case j > 0 && s[j-1] == '\'':
			// 'lambdaN'(...)
			k := j + 6
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			if k+1 < len(s) && s[k] == '\'' && s[k+1] == '(' {
				if end := matchParen(s, k+1); end > 0 {
					b.WriteString(s[i : j-1])
					b.WriteString("{lambda}")
					i = end + 1
					continue
				}
			}
		}
		b.WriteString(s[i : j+6])
		i = j + 6
	}
	return b.String()
}

// matchParen returns the index of the ')' closing the '(' at open, or -1.
func matchParen(s string, open int) int {
	depth := 0
	for k := open; k < len(s); k++ {
		switch s[k] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// CleanMessage removes what varies between occurrences of the same error
// from a message: addresses and numbers.
func CleanMessage(msg string) string {
	msg = hexRE.ReplaceAllString(msg, "<addr>")
	return numbersRE.ReplaceAllString(msg, "<n>")
}

// culpritOf names the innermost in-app frame (the innermost frame when
// none is in-app) as "function (file:line)".
func culpritOf(frames []report.Frame) string {
	pick := -1
	for i, f := range frames {
		if f.InApp && f.Function != "" {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, f := range frames {
			if f.Function != "" {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		if len(frames) > 0 && frames[0].Module != "" {
			return fmt.Sprintf("%s+%s", frames[0].Module, frames[0].Addr)
		}
		return ""
	}
	f := frames[pick]
	name := demangle.Demangle(f.Function, demangle.Short)
	if f.File != "" {
		file := f.File
		if i := strings.LastIndexByte(file, '/'); i >= 0 {
			file = file[i+1:]
		}
		return fmt.Sprintf("%s (%s:%d)", name, file, f.Line)
	}
	return name
}

func titleOf(r *report.Report, frames []report.Frame, culprit string) string {
	fn := culprit
	if i := strings.Index(fn, " ("); i >= 0 {
		fn = fn[:i]
	}
	if fn == "" {
		fn = "unknown code"
	}
	var t string
	switch r.Kind {
	case report.KindHang:
		t = "Hang in " + fn
		if r.Hang != nil && r.Hang.Loop != "" {
			t = fmt.Sprintf("Hang in %s (loop %s)", fn, r.Hang.Loop)
		} else if r.Hang != nil && r.Hang.Request != "" {
			t = fmt.Sprintf("Hang in %s (request %s)", fn, r.Hang.Request)
		}
	case report.KindAudit:
		kinds := "sensitive call"
		if r.Audit != nil && len(r.Audit.Entries) > 0 {
			kinds = r.Audit.Entries[0].Kind
		}
		t = fmt.Sprintf("Audit: %s from %s", kinds, fn)
	case report.KindDump:
		t = fmt.Sprintf("Dump: %d threads, top in %s", len(r.Threads), fn)
	default:
		switch {
		case r.Exception != nil && r.Exception.Value != "":
			v, _, _ := strings.Cut(r.Exception.Value, "\n")
			t = r.Exception.Type + ": " + v
		case r.Exception != nil:
			t = r.Exception.Type
		default:
			t = "Crash in " + fn
		}
	}
	if len(t) > 200 {
		t = strings.ToValidUTF8(t[:197], "") + "..."
	}
	return t
}
