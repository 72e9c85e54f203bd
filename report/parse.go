package report

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
)

// parseFast is Parse's fast path: a decoder of the report layout without
// reflection, for the reports producers write — every key spelled as in
// the struct tags and given once, no null, integers without fraction or
// exponent, top-level fields only among those below. Anything else makes
// it give up (ok false), and Parse decodes the input with encoding/json,
// whose result and errors are the reference: on the input it accepts, the
// fast path builds exactly what json.Unmarshal builds (FuzzParseFast).
// Strings with escapes or non-ASCII bytes, and the rarer sections (hang,
// snapshot, audit), are handed to json.Unmarshal piece by piece.
//
// Decoding a report with 30 frames took 30–40 µs per event in the server
// with json.Unmarshal, the largest JSON cost left in its processing.
func parseFast(data []byte) (r *Report, ok bool) {
	d := &decoder{data: data}
	r = new(Report)
	d.ws()
	d.report(r)
	d.ws()
	if d.bad || d.i != len(d.data) {
		return nil, false
	}
	return r, true
}

// decoder reads JSON from data at i. After anything outside the fast path
// it sets bad and reads nothing more; callers check bad at the end.
type decoder struct {
	data []byte
	i    int
	bad  bool
}

func (d *decoder) fail() {
	d.bad = true
	d.i = len(d.data)
}

func (d *decoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

func (d *decoder) consume(c byte) bool {
	if d.peek() != c {
		d.fail()
		return false
	}
	d.i++
	return true
}

// object reads an object whose keys are the fields of a struct, named
// by keys (jsonKeys): field decodes the value of one of them. A key given
// twice ends the fast path (encoding/json would merge a repeated object),
// and so does an unknown key that encoding/json would match to a field
// regardless of case. Other unknown keys are skipped, their values
// checked with json.Valid.
// nameVersion decodes an object of a name and a version (the sdk, os and
// runtime of a report), whose known keys are keys.
func (d *decoder) nameVersion(keys []string, name, version *string) {
	d.object(keys, func(k []byte) {
		d.noNull()
		switch string(k) {
		case "name":
			*name = d.str()
		case "version":
			*version = d.str()
		}
	})
}

func (d *decoder) object(keys []string, field func(key []byte)) {
	if !d.consume('{') {
		return
	}
	var seen uint64
	d.ws()
	if d.peek() == '}' {
		d.i++
		return
	}
	for !d.bad {
		k := d.key()
		d.ws()
		if !d.consume(':') {
			return
		}
		d.ws()
		n := slices.IndexFunc(keys, func(name string) bool { return string(k) == name })
		switch {
		case n >= 0 && seen&(1<<n) == 0:
			seen |= 1 << n
			field(k)
		case n < 0 && !slices.ContainsFunc(keys, func(name string) bool { return strings.EqualFold(string(k), name) }):
			if !json.Valid(d.skip()) {
				d.fail()
			}
		default:
			d.fail()
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
			d.ws()
		case '}':
			d.i++
			return
		default:
			d.fail()
		}
	}
}

// jsonKeys returns the JSON keys of struct type T's fields, as their tags
// name them, in field order (at most 64).
func jsonKeys[T any]() []string {
	t := reflect.TypeFor[T]()
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	return keys
}

var (
	reportKeys    = jsonKeys[Report]()
	sdkKeys       = jsonKeys[SDK]()
	osKeys        = jsonKeys[OS]()
	runtimeKeys   = jsonKeys[Runtime]()
	truncatedKeys = jsonKeys[Truncated]()
	moduleKeys    = jsonKeys[Module]()
	frameKeys     = jsonKeys[Frame]()
	threadKeys    = jsonKeys[Thread]()
	hopKeys       = jsonKeys[Hop]()
	exceptionKeys = jsonKeys[Exception]()
)

// array reads an array, calling elem for each element.
func (d *decoder) array(elem func()) {
	if !d.consume('[') {
		return
	}
	d.ws()
	if d.peek() == ']' {
		d.i++
		return
	}
	for !d.bad {
		elem()
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
			d.ws()
		case ']':
			d.i++
			return
		default:
			d.fail()
		}
	}
}

// plainByte marks the bytes a string holds as they are in JSON: printable
// ASCII but quote and backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// key reads an object key of plain bytes, without copying it.
func (d *decoder) key() []byte {
	if !d.consume('"') {
		return nil
	}
	start := d.i
	for d.i < len(d.data) && plainByte[d.data[d.i]] {
		d.i++
	}
	if d.peek() != '"' {
		d.fail()
		return nil
	}
	d.i++
	return d.data[start : d.i-1]
}

// token returns the string token at i, quotes included, and whether it
// holds only plain bytes.
func (d *decoder) token() (tok []byte, plain bool) {
	start := d.i
	if !d.consume('"') {
		return nil, false
	}
	plain = true
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return d.data[start:d.i], plain
		case c == '\\':
			plain = false
			d.i += 2
		case c < 0x20:
			d.fail()
			return nil, false
		default:
			plain = plain && c < 0x80
			d.i++
		}
	}
	d.fail()
	return nil, false
}

func (d *decoder) str() string {
	tok, plain := d.token()
	if d.bad {
		return ""
	}
	if plain {
		return string(tok[1 : len(tok)-1])
	}
	// Escapes and UTF-8 exactly as encoding/json reads them (invalid
	// sequences become U+FFFD).
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		d.fail()
	}
	return s
}

// addr reads an Addr; its text has no escapes in the fast path.
func (d *decoder) addr() Addr {
	tok, plain := d.token()
	var a Addr
	if d.bad || !plain || a.UnmarshalText(tok[1:len(tok)-1]) != nil {
		d.fail()
	}
	return a
}

func (d *decoder) time() time.Time {
	tok, _ := d.token()
	var t time.Time
	if d.bad || t.UnmarshalJSON(tok) != nil {
		d.fail()
	}
	return t
}

func (d *decoder) bool() bool {
	switch {
	case len(d.data)-d.i >= 4 && string(d.data[d.i:d.i+4]) == "true":
		d.i += 4
		return true
	case len(d.data)-d.i >= 5 && string(d.data[d.i:d.i+5]) == "false":
		d.i += 5
		return false
	}
	d.fail()
	return false
}

// digits reads an integer without sign, fraction or exponent, of at most
// 18 digits (so it cannot overflow); longer ones leave the fast path.
func (d *decoder) digits() uint64 {
	start := d.i
	var v uint64
	for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
		v = v*10 + uint64(d.data[d.i]-'0')
		d.i++
	}
	n := d.i - start
	if n == 0 || n > 18 || n > 1 && d.data[start] == '0' {
		d.fail()
		return 0
	}
	switch d.peek() {
	case '.', 'e', 'E':
		d.fail()
	}
	return v
}

func (d *decoder) uint() uint64 { return d.digits() }

func (d *decoder) int() int64 {
	neg := d.peek() == '-'
	if neg {
		d.i++
	}
	v := int64(d.digits())
	if neg {
		return -v
	}
	return v
}

// stringMap reads a map[string]string; like encoding/json it makes an
// empty map for {} and keeps the last of repeated keys.
func (d *decoder) stringMap() map[string]string {
	m := map[string]string{}
	d.mapEntries(func(k string) { m[k] = d.str() })
	return m
}

func (d *decoder) addrMap() map[string]Addr {
	m := map[string]Addr{}
	d.mapEntries(func(k string) { m[k] = d.addr() })
	return m
}

func (d *decoder) mapEntries(value func(k string)) {
	if !d.consume('{') {
		return
	}
	d.ws()
	if d.peek() == '}' {
		d.i++
		return
	}
	for !d.bad {
		k := d.str()
		d.ws()
		if !d.consume(':') {
			return
		}
		d.ws()
		value(k)
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
			d.ws()
		case '}':
			d.i++
			return
		default:
			d.fail()
		}
	}
}

// skip steps over one value (any JSON, not checked here) and returns it.
func (d *decoder) skip() []byte {
	start := d.i
	depth := 0
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case '"':
			if d.token(); d.bad {
				return nil
			}
			if depth == 0 {
				return d.data[start:d.i]
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return d.data[start:d.i]
			}
			if depth--; depth == 0 {
				d.i++
				return d.data[start:d.i]
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return d.data[start:d.i]
			}
		}
		d.i++
	}
	if depth != 0 {
		d.fail()
	}
	return d.data[start:d.i]
}

// unmarshal decodes the next value into v with encoding/json.
func (d *decoder) unmarshal(v any) {
	raw := d.skip()
	if d.bad || json.Unmarshal(raw, v) != nil {
		d.fail()
	}
}

// noNull leaves the fast path at a null, which encoding/json treats as
// "leave as is" and the readers above don't know.
func (d *decoder) noNull() {
	if d.peek() == 'n' {
		d.fail()
	}
}

func (d *decoder) report(r *Report) {
	d.object(reportKeys, func(k []byte) {
		d.noNull()
		switch string(k) {
		case "version":
			r.Version = d.str()
		case "kind":
			r.Kind = Kind(d.str())
		case "event_id":
			r.EventID = d.str()
		case "timestamp":
			r.Timestamp = d.time()
		case "platform":
			r.Platform = Platform(d.str())
		case "release":
			r.Release = d.str()
		case "environment":
			r.Environment = d.str()
		case "server_name":
			r.ServerName = d.str()
		case "sdk":
			d.nameVersion(sdkKeys, &r.SDK.Name, &r.SDK.Version)
		case "os":
			d.nameVersion(osKeys, &r.OS.Name, &r.OS.Version)
		case "arch":
			r.Arch = d.str()
		case "runtime":
			d.nameVersion(runtimeKeys, &r.Runtime.Name, &r.Runtime.Version)
		case "modules":
			r.Modules = list(d, d.module)
		case "threads":
			r.Threads = list(d, d.thread)
		case "trail":
			r.Trail = list(d, d.hop)
		case "exception":
			r.Exception = new(Exception)
			d.exception(r.Exception)
		case "hang":
			d.unmarshal(&r.Hang)
		case "snapshot":
			d.unmarshal(&r.Snapshot)
		case "audit":
			d.unmarshal(&r.Audit)
		case "fingerprint":
			r.Fingerprint = []string{}
			d.array(func() {
				d.noNull()
				r.Fingerprint = append(r.Fingerprint, d.str())
			})
		case "tags":
			r.Tags = d.stringMap()
		case "truncated":
			r.Truncated = new(Truncated)
			d.object(truncatedKeys, func(k []byte) {
				d.noNull()
				switch string(k) {
				case "threads":
					r.Truncated.Threads = d.bool()
				case "trail":
					r.Truncated.Trail = d.bool()
				case "modules":
					r.Truncated.Modules = d.bool()
				}
			})
		}
	})
}

func (d *decoder) module(m *Module) {
	d.object(moduleKeys, func(k []byte) {
		d.noNull()
		switch string(k) {
		case "type":
			m.Type = d.str()
		case "name":
			m.Name = d.str()
		case "path":
			m.Path = d.str()
		case "debug_id":
			m.DebugID = d.str()
		case "code_id":
			m.CodeID = d.str()
		case "build_id":
			m.BuildID = d.str()
		case "image_addr":
			m.ImageAddr = d.addr()
		case "image_size":
			m.ImageSize = d.uint()
		case "image_vmaddr":
			m.ImageVMAddr = d.addr()
		case "arch":
			m.Arch = d.str()
		}
	})
}

func (d *decoder) frame(f *Frame) {
	d.object(frameKeys, func(k []byte) {
		d.noNull()
		switch string(k) {
		case "addr":
			f.Addr = d.addr()
		case "module":
			f.Module = d.str()
		case "function":
			f.Function = d.str()
		case "raw_function":
			f.RawFunction = d.str()
		case "file":
			f.File = d.str()
		case "line":
			f.Line = int(d.int())
		case "column":
			f.Column = int(d.int())
		case "inlined":
			f.Inlined = d.bool()
		case "in_app":
			f.InApp = d.bool()
		}
	})
}

// list decodes an array of objects, each into its element by decode. An
// empty array gives an empty slice, not nil, as encoding/json does.
func list[T any](d *decoder, decode func(*T)) []T {
	s := []T{}
	d.array(func() {
		s = append(s, *new(T))
		decode(&s[len(s)-1])
	})
	return s
}

func (d *decoder) thread(t *Thread) {
	d.object(threadKeys, func(k []byte) {
		d.noNull()
		switch string(k) {
		case "id":
			t.ID = d.uint()
		case "name":
			t.Name = d.str()
		case "state":
			t.State = d.str()
		case "crashed":
			t.Crashed = d.bool()
		case "current":
			t.Current = d.bool()
		case "labels":
			t.Labels = d.stringMap()
		case "created_by":
			t.CreatedBy = new(Frame)
			d.frame(t.CreatedBy)
		case "registers":
			t.Registers = d.addrMap()
		case "frames":
			t.Frames = list(d, d.frame)
		case "truncated":
			t.Truncated = d.bool()
		}
	})
}

func (d *decoder) hop(h *Hop) {
	d.object(hopKeys, func(k []byte) {
		d.noNull()
		switch string(k) {
		case "site":
			h.Site = new(Frame)
			d.frame(h.Site)
		case "hash":
			h.Hash = d.str()
		case "frames":
			h.Frames = list(d, d.frame)
		case "truncated":
			h.Truncated = d.bool()
		}
	})
}

func (d *decoder) exception(e *Exception) {
	d.object(exceptionKeys, func(k []byte) {
		d.noNull()
		switch string(k) {
		case "type":
			e.Type = d.str()
		case "value":
			e.Value = d.str()
		case "mechanism":
			e.Mechanism = d.str()
		case "handled":
			e.Handled = d.bool()
		case "thread_id":
			e.ThreadID = d.uint()
		}
	})
}
