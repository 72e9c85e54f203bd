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
// function names, else any function names, else module-relative
// addresses.
func stackComponents(frames []report.Frame) []string {
	var inApp, all, addrs []string
	for _, f := range frames {
		if f.Function != "" {
			name := "fn:" + CleanFunction(f.Function)
			all = append(all, name)
			if f.InApp {
				inApp = append(inApp, name)
			}
		} else if f.Module != "" {
			addrs = append(addrs, "module:"+f.Module)
		}
	}
	for _, s := range [][]string{inApp, all, addrs} {
		if len(s) > 0 {
			return s[:min(len(s), maxFrames)]
		}
	}
	return nil
}

var (
	goClosureRE = regexp.MustCompile(`\.(func|gowrap|deferwrap)\d+(\.\d+)*`)
	lambdaRE    = regexp.MustCompile(`\{lambda\(([^()]|\([^()]*\))*\)#\d+\}|'lambda\d*'\([^)]*\)`)
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
	style := demangle.Short
	if demangle.SchemeOf(name) == demangle.Swift {
		// Swift's short form drops the module, which would merge
		// same-named functions of different modules.
		style = demangle.Full
	}
	s := demangle.Demangle(name, style)
	s = rustHashRE.ReplaceAllString(s, "")
	s = goClosureRE.ReplaceAllString(s, ".$1")
	s = lambdaRE.ReplaceAllString(s, "{lambda}")
	s = swiftClosRE.ReplaceAllString(s, "closure")
	if i := strings.Index(s, "[go.shape."); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j >= 0 {
			s = s[:i] + "[...]" + s[i+j+1:]
		}
	}
	s = strings.TrimSuffix(s, ".abi0")
	return hexRE.ReplaceAllString(s, "")
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
