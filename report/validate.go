package report

import "fmt"

// ValidationError names the first field of a report that breaks a rule of
// docs/report-format.md, and the rule.
type ValidationError struct {
	Field string // JSON path, e.g. "threads[2].frames[0]"
	Msg   string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("report: invalid %s: %s", e.Field, e.Msg)
}

// Validate checks the rules of §2 that JSON types cannot express: a known
// version, kind and platform, a well-formed event id, a timestamp, the
// section each kind requires, and frames that say something. It returns the
// first violation as a *ValidationError. Validate is linear in the size of
// the report and does not allocate unless it fails.
func (r *Report) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ValidationError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if err := CheckVersion(r.Version); err != nil {
		return bad("version", "%v", err)
	}
	switch r.Kind {
	case KindCrash, KindHang, KindAudit, KindDump:
	default:
		return bad("kind", "%q is not crash, hang, audit or dump", r.Kind)
	}
	if !isEventID(r.EventID) {
		return bad("event_id", "%q is not 32 lower-case hex digits", r.EventID)
	}
	if r.Timestamp.IsZero() {
		return bad("timestamp", "missing")
	}
	if r.Platform == "" {
		return bad("platform", "missing")
	}
	if r.SDK.Name == "" {
		return bad("sdk.name", "missing")
	}
	switch r.Kind {
	case KindCrash:
		if r.Exception == nil && len(r.Threads) == 0 {
			return bad("exception", "a crash needs an exception or threads")
		}
	case KindHang:
		if r.Hang == nil {
			return bad("hang", "a hang report needs a hang section")
		}
		if r.Hang.DurationMS < 0 || r.Hang.ThresholdMS < 0 {
			return bad("hang", "negative duration or threshold")
		}
	case KindAudit:
		if r.Audit == nil {
			return bad("audit", "an audit report needs an audit section")
		}
	case KindDump:
		if len(r.Threads) == 0 {
			return bad("threads", "a dump needs threads")
		}
	}
	for i, m := range r.Modules {
		switch m.Type {
		case "elf", "macho", "pe", "wasm", "go":
		default:
			return bad(fmt.Sprintf("modules[%d].type", i), "%q is not elf, macho, pe, wasm or go", m.Type)
		}
	}
	for i := range r.Threads {
		if err := checkFrames(fmt.Sprintf("threads[%d]", i), r.Threads[i].Frames); err != nil {
			return err
		}
	}
	for i := range r.Trail {
		if err := checkFrames(fmt.Sprintf("trail[%d]", i), r.Trail[i].Frames); err != nil {
			return err
		}
	}
	if h := r.Hang; h != nil {
		for i := range h.Samples {
			if err := checkFrames(fmt.Sprintf("hang.samples[%d]", i), h.Samples[i].Frames); err != nil {
				return err
			}
		}
	}
	if s := r.Snapshot; s != nil {
		for i := range s.Stacks {
			if s.Stacks[i].Count < 1 {
				return bad(fmt.Sprintf("snapshot.stacks[%d].count", i), "%d is less than 1", s.Stacks[i].Count)
			}
			if err := checkFrames(fmt.Sprintf("snapshot.stacks[%d]", i), s.Stacks[i].Frames); err != nil {
				return err
			}
		}
	}
	if a := r.Audit; a != nil {
		for i := range a.Entries {
			if a.Entries[i].Kind == "" {
				return bad(fmt.Sprintf("audit.entries[%d].kind", i), "missing")
			}
			if err := checkFrames(fmt.Sprintf("audit.entries[%d]", i), a.Entries[i].Frames); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFrames enforces §4: a frame has an address or a function name.
func checkFrames(where string, frames []Frame) error {
	for i := range frames {
		f := &frames[i]
		if f.Addr == 0 && f.Function == "" {
			return &ValidationError{Field: fmt.Sprintf("%s.frames[%d]", where, i), Msg: "neither addr nor function"}
		}
		if f.Line < 0 {
			return &ValidationError{Field: fmt.Sprintf("%s.frames[%d].line", where, i), Msg: fmt.Sprintf("%d is negative", f.Line)}
		}
	}
	return nil
}

func isEventID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
