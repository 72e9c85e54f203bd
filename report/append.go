package report

import (
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends r to b as Encode writes it, newline included, and
// returns the extended slice. The server encodes every processed report,
// tens of kilobytes of frames, so this spells the JSON out field by field
// instead of going through reflection: the bytes are exactly those of
// encoding/json with HTML escaping off (a test and the fuzz target compare
// them). It fails only on a timestamp encoding/json cannot write either.
func AppendJSON(b []byte, r *Report) ([]byte, error) {
	e := appender{b: b}
	e.report(r)
	if e.err != nil {
		return b, e.err
	}
	return append(e.b, '\n'), nil
}

// appender writes JSON into b. Each object method writes its fields
// in declaration order and honours omitempty as encoding/json does; first
// tracks whether the object being written has a field yet.
type appender struct {
	b   []byte
	err error
}

func (e *appender) key(first *bool, k string) {
	if !*first {
		e.b = append(e.b, ',')
	}
	*first = false
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

func (e *appender) str(first *bool, k, v string) {
	e.key(first, k)
	e.string(v)
}

func (e *appender) optStr(first *bool, k, v string) {
	if v != "" {
		e.str(first, k, v)
	}
}

func (e *appender) optInt(first *bool, k string, v int64) {
	if v != 0 {
		e.key(first, k)
		e.b = strconv.AppendInt(e.b, v, 10)
	}
}

func (e *appender) optUint(first *bool, k string, v uint64) {
	if v != 0 {
		e.key(first, k)
		e.b = strconv.AppendUint(e.b, v, 10)
	}
}

func (e *appender) optBool(first *bool, k string, v bool) {
	if v {
		e.key(first, k)
		e.b = append(e.b, "true"...)
	}
}

func (e *appender) addr(a Addr) {
	e.b = append(e.b, '"', '0', 'x')
	e.b = strconv.AppendUint(e.b, uint64(a), 16)
	e.b = append(e.b, '"')
}

func (e *appender) optAddr(first *bool, k string, a Addr) {
	if a != 0 {
		e.key(first, k)
		e.addr(a)
	}
}

func (e *appender) time(first *bool, k string, t time.Time) {
	e.key(first, k)
	j, err := t.MarshalJSON()
	if err != nil && e.err == nil {
		e.err = &marshalerError{err}
	}
	e.b = append(e.b, j...)
}

// marshalerError words a time that cannot be encoded as encoding/json does.
type marshalerError struct{ err error }

func (m *marshalerError) Error() string {
	return "json: error calling MarshalJSON for type time.Time: " + m.err.Error()
}

func (m *marshalerError) Unwrap() error { return m.err }

const hexDigits = "0123456789abcdef"

// plain marks the bytes a JSON string holds as they are: ASCII but
// control characters, quote and backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// string appends s quoted as encoding/json does without HTML escaping:
// control characters escaped, invalid UTF-8 replaced by U+FFFD, U+2028
// and U+2029 escaped for JavaScript.
func (e *appender) string(s string) {
	b := append(e.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	e.b = append(b, '"')
}

func (e *appender) stringMap(first *bool, k string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	e.key(first, k)
	e.b = append(e.b, '{')
	f := true
	for _, mk := range sortedMapKeys(m) {
		e.key2(&f, mk)
		e.string(m[mk])
	}
	e.b = append(e.b, '}')
}

func (e *appender) addrMap(first *bool, k string, m map[string]Addr) {
	if len(m) == 0 {
		return
	}
	e.key(first, k)
	e.b = append(e.b, '{')
	f := true
	for _, mk := range sortedMapKeys(m) {
		e.key2(&f, mk)
		e.addr(m[mk])
	}
	e.b = append(e.b, '}')
}

// key2 writes a map key, which unlike a field name needs quoting.
func (e *appender) key2(first *bool, k string) {
	if !*first {
		e.b = append(e.b, ',')
	}
	*first = false
	e.string(k)
	e.b = append(e.b, ':')
}

func sortedMapKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (e *appender) report(r *Report) {
	e.b = append(e.b, '{')
	f := true
	v := r.Version
	if v == "" {
		v = Version
	}
	e.str(&f, "version", v)
	e.str(&f, "kind", string(r.Kind))
	e.str(&f, "event_id", r.EventID)
	e.time(&f, "timestamp", r.Timestamp)
	e.str(&f, "platform", string(r.Platform))
	e.optStr(&f, "release", r.Release)
	e.optStr(&f, "environment", r.Environment)
	e.optStr(&f, "server_name", r.ServerName)
	e.key(&f, "sdk")
	e.b = append(e.b, '{')
	g := true
	e.str(&g, "name", r.SDK.Name)
	e.optStr(&g, "version", r.SDK.Version)
	e.b = append(e.b, '}')
	e.key(&f, "os")
	e.b = append(e.b, '{')
	g = true
	e.optStr(&g, "name", r.OS.Name)
	e.optStr(&g, "version", r.OS.Version)
	e.b = append(e.b, '}')
	e.optStr(&f, "arch", r.Arch)
	e.key(&f, "runtime")
	e.b = append(e.b, '{')
	g = true
	e.optStr(&g, "name", r.Runtime.Name)
	e.optStr(&g, "version", r.Runtime.Version)
	e.b = append(e.b, '}')
	if len(r.Modules) > 0 {
		e.key(&f, "modules")
		appendArray(e, r.Modules, e.module)
	}
	if len(r.Threads) > 0 {
		e.key(&f, "threads")
		appendArray(e, r.Threads, e.thread)
	}
	if len(r.Trail) > 0 {
		e.key(&f, "trail")
		appendArray(e, r.Trail, e.hop)
	}
	if x := r.Exception; x != nil {
		e.key(&f, "exception")
		e.b = append(e.b, '{')
		g := true
		e.str(&g, "type", x.Type)
		e.optStr(&g, "value", x.Value)
		e.optStr(&g, "mechanism", x.Mechanism)
		e.optBool(&g, "handled", x.Handled)
		e.optUint(&g, "thread_id", x.ThreadID)
		e.b = append(e.b, '}')
	}
	if h := r.Hang; h != nil {
		e.key(&f, "hang")
		e.hang(h)
	}
	if s := r.Snapshot; s != nil {
		e.key(&f, "snapshot")
		e.snapshot(s)
	}
	if a := r.Audit; a != nil {
		e.key(&f, "audit")
		e.audit(a)
	}
	if len(r.Fingerprint) > 0 {
		e.key(&f, "fingerprint")
		appendArray(e, r.Fingerprint, func(s *string) { e.string(*s) })
	}
	e.stringMap(&f, "tags", r.Tags)
	if t := r.Truncated; t != nil {
		e.key(&f, "truncated")
		e.b = append(e.b, '{')
		g := true
		e.optBool(&g, "threads", t.Threads)
		e.optBool(&g, "trail", t.Trail)
		e.optBool(&g, "modules", t.Modules)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, '}')
}

func (e *appender) module(m *Module) {
	e.b = append(e.b, '{')
	f := true
	e.str(&f, "type", m.Type)
	e.optStr(&f, "name", m.Name)
	e.optStr(&f, "path", m.Path)
	e.optStr(&f, "debug_id", m.DebugID)
	e.optStr(&f, "code_id", m.CodeID)
	e.optStr(&f, "build_id", m.BuildID)
	e.optAddr(&f, "image_addr", m.ImageAddr)
	e.optUint(&f, "image_size", m.ImageSize)
	e.optAddr(&f, "image_vmaddr", m.ImageVMAddr)
	e.optStr(&f, "arch", m.Arch)
	e.b = append(e.b, '}')
}

func (e *appender) frame(fr *Frame) {
	e.b = append(e.b, '{')
	f := true
	e.optAddr(&f, "addr", fr.Addr)
	e.optStr(&f, "module", fr.Module)
	e.optStr(&f, "function", fr.Function)
	e.optStr(&f, "raw_function", fr.RawFunction)
	e.optStr(&f, "file", fr.File)
	e.optInt(&f, "line", int64(fr.Line))
	e.optInt(&f, "column", int64(fr.Column))
	e.optBool(&f, "inlined", fr.Inlined)
	e.optBool(&f, "in_app", fr.InApp)
	e.b = append(e.b, '}')
}

// appendArray writes xs as a JSON array, each element by each; like
// encoding/json, a nil slice is null.
func appendArray[T any](e *appender, xs []T, each func(*T)) {
	if xs == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i := range xs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		each(&xs[i])
	}
	e.b = append(e.b, ']')
}

// frames writes a frame list, which has no omitempty: nil is null.
func (e *appender) frames(first *bool, fs []Frame) {
	e.key(first, "frames")
	appendArray(e, fs, e.frame)
}

func (e *appender) thread(t *Thread) {
	e.b = append(e.b, '{')
	f := true
	e.key(&f, "id")
	e.b = strconv.AppendUint(e.b, t.ID, 10)
	e.optStr(&f, "name", t.Name)
	e.optStr(&f, "state", t.State)
	e.optBool(&f, "crashed", t.Crashed)
	e.optBool(&f, "current", t.Current)
	e.stringMap(&f, "labels", t.Labels)
	if t.CreatedBy != nil {
		e.key(&f, "created_by")
		e.frame(t.CreatedBy)
	}
	e.addrMap(&f, "registers", t.Registers)
	e.frames(&f, t.Frames)
	e.optBool(&f, "truncated", t.Truncated)
	e.b = append(e.b, '}')
}

func (e *appender) hop(h *Hop) {
	e.b = append(e.b, '{')
	f := true
	if h.Site != nil {
		e.key(&f, "site")
		e.frame(h.Site)
	}
	e.optStr(&f, "hash", h.Hash)
	e.frames(&f, h.Frames)
	e.optBool(&f, "truncated", h.Truncated)
	e.b = append(e.b, '}')
}

func (e *appender) hang(h *Hang) {
	e.b = append(e.b, '{')
	f := true
	e.key(&f, "duration_ms")
	e.b = strconv.AppendInt(e.b, h.DurationMS, 10)
	e.key(&f, "threshold_ms")
	e.b = strconv.AppendInt(e.b, h.ThresholdMS, 10)
	e.optStr(&f, "loop", h.Loop)
	e.optStr(&f, "request", h.Request)
	if len(h.Samples) > 0 {
		e.key(&f, "samples")
		appendArray(e, h.Samples, func(s *Sample) {
			e.b = append(e.b, '{')
			g := true
			e.time(&g, "timestamp", s.Timestamp)
			e.optInt(&g, "weight", int64(s.Weight))
			e.frames(&g, s.Frames)
			e.optBool(&g, "truncated", s.Truncated)
			e.b = append(e.b, '}')
		})
	}
	e.optInt(&f, "suppressed", int64(h.Suppressed))
	e.b = append(e.b, '}')
}

func (e *appender) snapshot(s *Snapshot) {
	e.b = append(e.b, '{')
	f := true
	e.time(&f, "timestamp", s.Timestamp)
	e.key(&f, "total")
	e.b = strconv.AppendInt(e.b, int64(s.Total), 10)
	e.optInt(&f, "pause_us", s.PauseUS)
	e.key(&f, "stacks")
	appendArray(e, s.Stacks, func(st *SnapshotStack) {
		e.b = append(e.b, '{')
		g := true
		e.key(&g, "count")
		e.b = strconv.AppendInt(e.b, int64(st.Count), 10)
		e.optStr(&g, "state", st.State)
		e.stringMap(&g, "labels", st.Labels)
		e.frames(&g, st.Frames)
		e.optBool(&g, "truncated", st.Truncated)
		e.b = append(e.b, '}')
	})
	e.optBool(&f, "truncated", s.Truncated)
	e.b = append(e.b, '}')
}

func (e *appender) audit(a *Audit) {
	e.b = append(e.b, '{')
	f := true
	e.time(&f, "since", a.Since)
	e.key(&f, "entries")
	appendArray(e, a.Entries, func(en *AuditEntry) {
		e.b = append(e.b, '{')
		g := true
		e.str(&g, "kind", en.Kind)
		e.key(&g, "count")
		e.b = strconv.AppendUint(e.b, en.Count, 10)
		e.time(&g, "first", en.First)
		e.time(&g, "last", en.Last)
		e.optStr(&g, "hash", en.Hash)
		e.frames(&g, en.Frames)
		e.optBool(&g, "truncated", en.Truncated)
		e.b = append(e.b, '}')
	})
	e.optUint(&f, "dropped", a.Dropped)
	e.b = append(e.b, '}')
}
