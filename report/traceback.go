package report

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// Parsing the Go runtime's crash output: the "panic: ..." or "fatal error:
// ..." preamble, then one block per goroutine:
//
//	goroutine 7 [running, locked to thread]:
//	main.work(0x1, ...)
//		/src/main.go:12 +0x1d
//	main.helper(...)                       (an inlined frame: args elided)
//		/src/main.go:30
//	created by main.main in goroutine 1
//		/src/main.go:9 +0x25
//
// GOTRACEBACK=system adds "gp=… m=… mp=…" to the header and "fp=… sp=… pc=…"
// to file lines; Go 1.26's GODEBUG=tracebacklabels=1 adds "labels:{…}" to
// the header. The parser is line-based, keeps what it understands and skips
// the rest; it never fails.

// Bounds on what one traceback may yield.
const (
	tbMaxThreads = 4096
	tbMaxFrames  = 256
	tbMaxHops    = 32
)

// Traceback is what ParseTraceback recovers from Go's crash output.
type Traceback struct {
	Exception *Exception
	Threads   []Thread
	// Trail holds the ancestors of the crashed goroutine that
	// GODEBUG=tracebackancestors=N prints ("[originating from goroutine
	// N]:"), innermost first.
	Trail     []Hop
	Truncated bool // goroutines beyond the limit were dropped
}

// ParseTraceback parses Go's crash output or a goroutine dump (the text of
// runtime.Stack(buf, true) or of a panic). It keeps what it understands
// and skips the rest; it never fails and never panics, and its output is
// bounded (4096 goroutines of 256 frames).
func ParseTraceback(text []byte) Traceback {
	var tb Traceback
	lines := strings.Split(string(bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))), "\n")
	var msg []string
	var ex *Exception
	i := 0
	// Preamble: everything before the first goroutine header.
	for ; i < len(lines); i++ {
		l := lines[i]
		if _, ok := parseHeader(l); ok {
			break
		}
		switch {
		case strings.HasPrefix(l, "panic: "):
			ex = &Exception{Type: "panic", Mechanism: "panic"}
			msg = []string{strings.TrimPrefix(l, "panic: ")}
		case strings.HasPrefix(l, "fatal error: "):
			ex = &Exception{Type: "fatal error", Mechanism: "fatal"}
			msg = []string{strings.TrimPrefix(l, "fatal error: ")}
		case strings.HasPrefix(l, "fatal: "):
			ex = &Exception{Type: "fatal error", Mechanism: "fatal"}
			msg = []string{strings.TrimPrefix(l, "fatal: ")}
		case strings.HasPrefix(l, "[signal "):
			if ex == nil {
				ex = &Exception{Type: "signal"}
			}
			ex.Mechanism = "signal"
			msg = append(msg, l)
		case strings.HasPrefix(l, "\t") && ex != nil && len(msg) > 0:
			msg = append(msg, strings.TrimPrefix(l, "\t")) // continued panic value or nested panic
		}
	}
	if ex != nil {
		ex.Value = strings.Join(msg, "\n")
		ex.Type = panicType(ex.Type, msg[0])
	}
	tb.Exception = ex

	var th *Thread
	var hop *Hop // an ancestor block of the crashed goroutine
	for ; i < len(lines); i++ {
		l := lines[i]
		if rest, ok := strings.CutPrefix(l, "[originating from goroutine "); ok && strings.HasSuffix(rest, "]:") {
			// An ancestor of the goroutine above; only the crashed
			// goroutine's ancestors are kept, as its trail.
			hop = nil
			if th != nil && th.Crashed && len(tb.Trail) < tbMaxHops {
				tb.Trail = append(tb.Trail, Hop{Frames: []Frame{}})
				hop = &tb.Trail[len(tb.Trail)-1]
			}
			continue
		}
		if h, ok := parseHeader(l); ok {
			hop = nil
			if len(tb.Threads) == tbMaxThreads {
				tb.Truncated = true
				th = nil
				continue
			}
			if len(tb.Threads) == 0 {
				h.Crashed, h.Current = ex != nil, true
			}
			tb.Threads = append(tb.Threads, h)
			th = &tb.Threads[len(tb.Threads)-1]
			if ex != nil && h.Crashed {
				ex.ThreadID = h.ID
			}
			continue
		}
		if l == "" {
			th, hop = nil, nil // a blank line ends a goroutine's block
			continue
		}
		if th == nil {
			continue
		}
		if strings.HasPrefix(l, "...") { // "...additional frames elided...", "...N frames elided..."
			th.Truncated = true
			continue
		}
		if strings.HasPrefix(l, "\t") {
			continue // a file line without a function line before it
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "\t") {
			continue // every frame has a file line; this is something else
		}
		var f Frame
		created := false
		if rest, ok := strings.CutPrefix(l, "created by "); ok {
			fn, _, _ := strings.Cut(rest, " in goroutine ")
			f.Function, created = fn, true
		} else {
			f.Function, f.Inlined = splitCall(l)
		}
		i++
		parseFileLine(lines[i], &f)
		switch {
		case hop != nil && !created:
			if len(hop.Frames) < tbMaxFrames {
				hop.Frames = append(hop.Frames, f)
				if hop.Site == nil {
					site := f
					hop.Site = &site
				}
			} else {
				hop.Truncated = true
			}
		case hop != nil:
		case created:
			th.CreatedBy = &f
		case len(th.Frames) < tbMaxFrames:
			th.Frames = append(th.Frames, f)
		default:
			th.Truncated = true
		}
	}
	for k := range tb.Threads {
		if tb.Threads[k].Frames == nil {
			tb.Threads[k].Frames = []Frame{}
		}
	}
	if tb.Exception == nil && len(tb.Threads) > 0 {
		// The runtime prints "fatal error: msg" before it starts copying to
		// the crash output (Go 1.23-1.26: m.dying is set after the message),
		// so for fatal errors only the goroutines arrive. Name the error by
		// the function that raised it.
		th := &tb.Threads[0]
		th.Crashed = true
		ex := &Exception{Type: "fatal error", Mechanism: "fatal", ThreadID: th.ID, Value: "message not captured"}
		for k, f := range th.Frames {
			if isFatalFunc(f.Function) {
				ex.Value = "raised by " + f.Function
				if k+1 < len(th.Frames) {
					ex.Value += " in " + th.Frames[k+1].Function
				}
				break
			}
		}
		tb.Exception = ex
	}
	return tb
}

// isFatalFunc reports whether fn is one of the runtime's ways to die:
// runtime.throw, runtime.fatal and the per-package fatal helpers linked
// to it (internal/sync.fatal, internal/runtime/maps.fatal, ...).
func isFatalFunc(fn string) bool {
	switch fn {
	case "runtime.throw", "runtime.fatal", "runtime.fatalthrow", "runtime.fatalpanic":
		return true
	}
	return strings.HasSuffix(fn, ".fatal") && (strings.HasPrefix(fn, "internal/") || strings.HasPrefix(fn, "runtime") || strings.HasPrefix(fn, "sync"))
}

// panicType guesses the panic value's type from how the runtime printed it.
func panicType(kind, first string) string {
	if kind != "panic" {
		return kind
	}
	switch {
	case strings.HasPrefix(first, "runtime error: "):
		return "runtime.Error"
	case strings.HasPrefix(first, "("):
		// Values of other types print as "(main.T) 0xc000012345" or
		// "main.E(5)"; the first form names the type.
		if end := strings.Index(first, ") "); end > 1 {
			return first[1:end]
		}
	}
	return "panic"
}

// parseHeader parses "goroutine 7 [state, details]:".
func parseHeader(l string) (Thread, bool) {
	var th Thread
	rest, ok := strings.CutPrefix(l, "goroutine ")
	if !ok || !strings.HasSuffix(rest, "]:") {
		return th, false
	}
	idStr, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return th, false
	}
	id, err := strconv.ParseUint(idStr, 10, 64)
	if err != nil {
		return th, false
	}
	open := strings.IndexByte(rest, '[')
	if open < 0 {
		return th, false
	}
	th.ID = id
	inner := rest[open+1 : len(rest)-2]
	if j := strings.Index(inner, "labels:{"); j >= 0 {
		th.Labels = ParseLabels(inner[j+len("labels:{"):])
		inner = inner[:j]
	}
	state, _, _ := strings.Cut(inner, ",")
	th.State = strings.TrimSpace(state)
	return th, true
}

// ParseLabels parses pprof labels as the Go runtime prints them in
// tracebacks and goroutine profiles, after the opening brace:
// `"k": "v", "k2": "v2"}`. It returns nil when there are none.
func ParseLabels(s string) map[string]string {
	m := map[string]string{}
	for {
		s = strings.TrimLeft(s, " ,")
		k, rest, ok := cutQuoted(s)
		if !ok {
			break
		}
		rest = strings.TrimPrefix(strings.TrimLeft(rest, " "), ":")
		v, rest, ok := cutQuoted(strings.TrimLeft(rest, " "))
		if !ok {
			break
		}
		m[k] = v
		s = rest
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// cutQuoted unquotes the Go string literal at the start of s.
func cutQuoted(s string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, false
	}
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			v, err := strconv.Unquote(s[:j+1])
			return v, s[j+1:], err == nil
		}
	}
	return "", s, false
}

// splitCall turns "main.(*T).M(0x1, {0x2, 0x3})" into "main.(*T).M", and
// reports inlined frames, which the runtime prints with "(...)".
func splitCall(l string) (fn string, inlined bool) {
	if !strings.HasSuffix(l, ")") {
		return l, false
	}
	depth := 0
	for j := len(l) - 1; j >= 0; j-- {
		switch l[j] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				if j == 0 {
					return l, false
				}
				return l[:j], l[j:] == "(...)"
			}
		}
	}
	return l, false
}

// parseFileLine parses "\t/src/main.go:12 +0x1d fp=0x… sp=0x… pc=0x4a1b2c".
func parseFileLine(l string, f *Frame) {
	l = strings.TrimPrefix(l, "\t")
	loc, extra, _ := strings.Cut(l, " ")
	if c := strings.LastIndexByte(loc, ':'); c > 0 {
		if n, err := strconv.Atoi(loc[c+1:]); err == nil {
			f.File, f.Line = loc[:c], n
		} else {
			f.File = loc
		}
	} else {
		f.File = loc
	}
	for _, field := range strings.Fields(extra) {
		if v, ok := strings.CutPrefix(field, "pc="); ok {
			var a Addr
			if a.UnmarshalText([]byte(v)) == nil {
				f.Addr = a
			}
		}
	}
}

// IsGoTraceback reports whether data looks like Go crash output or a
// goroutine dump: a goroutine header line ("goroutine 1 [running]:") near
// the start, after an optional panic or fatal error preamble.
func IsGoTraceback(data []byte) bool {
	head := data[:min(len(data), 16<<10)]
	for len(head) > 0 {
		line, rest, _ := bytes.Cut(head, []byte("\n"))
		if _, ok := parseHeader(strings.TrimRight(string(line), "\r")); ok {
			return true
		}
		head = rest
	}
	return false
}

// ErrNoTraceback is returned by ParseGoTraceback for text that holds no
// goroutine.
var ErrNoTraceback = errors.New("report: no Go goroutine traceback in text")

// ParseGoTraceback builds a crash report from Go panic or goroutine-dump
// text, as servers receive it: kind crash, platform go, the goroutines as
// threads (the panicking one crashed), the panic as exception and the
// crashed goroutine's ancestors as trail. The event id, timestamp and
// in-app marks are left to the caller.
func ParseGoTraceback(text []byte) (*Report, error) {
	tb := ParseTraceback(text)
	if len(tb.Threads) == 0 {
		return nil, ErrNoTraceback
	}
	r := &Report{
		Version:   Version,
		Kind:      KindCrash,
		Platform:  PlatformGo,
		Runtime:   Runtime{Name: "go"},
		Exception: tb.Exception,
		Threads:   tb.Threads,
		Trail:     tb.Trail,
	}
	if tb.Truncated {
		r.Truncated = &Truncated{Threads: true}
	}
	return r, nil
}
