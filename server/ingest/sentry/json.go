package sentry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The types in this file read the scalar fields of Sentry's JSON leniently,
// as Sentry's SDKs need: SDKs in many languages write numbers as strings,
// addresses as numbers, and tags as booleans. Their UnmarshalJSON methods
// never fail; a value they cannot read is left unset. Containers (objects
// and arrays) are read strictly, and a container of the wrong type is an
// error naming the field (see decodeField).

// str is a JSON scalar read as a string: a string as it is, a number or a
// boolean as written, null, objects and arrays as "".
type str string

func (s *str) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case '"':
		*s = str(unquote(b))
	case 'n', '{', '[':
		*s = ""
	default: // number, true, false
		*s = str(b)
	}
	return nil
}

// unquote returns the JSON string literal b (valid, as json.Unmarshaler
// methods receive it) as a Go string, with invalid UTF-8 replaced by U+FFFD
// as encoding/json does. Strings without escapes, the common case, take a
// fast path.
func unquote(b []byte) string {
	inner := b[1 : len(b)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var v string
	json.Unmarshal(b, &v)
	return v
}

// flag is a JSON boolean that remembers whether it was set.
type flag struct{ v, set bool }

func (f *flag) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true", `"true"`, "1":
		*f = flag{true, true}
	case "false", `"false"`, "0":
		*f = flag{false, true}
	default:
		*f = flag{}
	}
	return nil
}

// num is a non-negative integer written as a JSON number or as a string of
// decimal digits, or "0x" and hex digits (addresses, sizes, ids). Negative,
// fractional or out-of-range values leave it unset, except that fractions of
// a JSON number are truncated.
type num struct {
	v   uint64
	set bool
}

func (n *num) UnmarshalJSON(b []byte) error {
	*n = num{}
	s := string(b)
	if b[0] == '"' {
		s = strings.TrimSpace(unquote(b))
		if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
			if v, err := strconv.ParseUint(s[2:], 16, 64); err == nil {
				*n = num{v, true}
			}
			return nil
		}
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		*n = num{v, true}
		return nil
	}
	if b[0] != '"' && b[0] != 't' && b[0] != 'f' && b[0] != 'n' && b[0] != '{' && b[0] != '[' {
		// A JSON number with a fraction or exponent.
		if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f < math.MaxUint64 {
			*n = num{uint64(f), true}
		}
	}
	return nil
}

// id is a thread id: Sentry allows a number or a string.
type id struct {
	n    num
	text string // the string form, when it is not a number
}

func (t *id) UnmarshalJSON(b []byte) error {
	*t = id{}
	t.n.UnmarshalJSON(b)
	if !t.n.set && b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) == nil {
			t.text = s
		}
	}
	return nil
}

func (t id) set() bool { return t.n.set || t.text != "" }

// timestamp is a point in time written as an RFC 3339 string (the zone may be
// missing, meaning UTC, as some SDKs write it) or as seconds since the Unix
// epoch, a JSON number or a string of one, with a fraction. Times that
// report.Encode cannot write (outside the years 0 to 9999 in UTC) and
// negative seconds leave it unset.
type timestamp struct{ t time.Time }

func (ts *timestamp) UnmarshalJSON(b []byte) error {
	ts.t = time.Time{}
	s := string(b)
	if b[0] == '"' {
		s = strings.TrimSpace(unquote(b))
		if t, ok := parseTime(s); ok {
			ts.t = t
			return nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f >= maxUnix || math.IsNaN(f) {
		return nil
	}
	sec := math.Floor(f)
	usec := math.Round((f - sec) * 1e6) // floats carry about microseconds at today's epoch
	ts.t = time.Unix(int64(sec), int64(usec)*1000).UTC()
	return nil
}

// maxUnix is the first second of the year 10000, which time.Time's JSON
// encoding refuses.
const maxUnix = 253402300800

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999", // no zone: UTC
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

func parseTime(s string) (time.Time, bool) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			t = t.UTC()
			if y := t.Year(); y < 0 || y > 9999 {
				return time.Time{}, false
			}
			return t, true
		}
	}
	return time.Time{}, false
}

// message is a log message: Sentry's "message" is either a string or, like
// "logentry", an object with the formatted message and its template.
type message string

func (m *message) UnmarshalJSON(b []byte) error {
	*m = ""
	switch b[0] {
	case '"':
		*m = message(unquote(b))
	case '{':
		var o struct {
			Formatted str `json:"formatted"`
			Message   str `json:"message"`
		}
		if json.Unmarshal(b, &o) == nil {
			*m = message(o.Formatted)
			if *m == "" {
				*m = message(o.Message)
			}
		}
	}
	return nil
}

// tags reads Sentry's tags, an object of strings or an array of [key, value]
// pairs; pairs that are not two scalars are skipped.
type tags map[string]string

func (t *tags) UnmarshalJSON(b []byte) error {
	*t = nil
	switch b[0] {
	case '{':
		var m map[string]str
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		for k, v := range m {
			t.set(k, string(v))
		}
	case '[':
		var pairs []json.RawMessage
		if err := json.Unmarshal(b, &pairs); err != nil {
			return err
		}
		for _, p := range pairs {
			var kv []json.RawMessage
			if json.Unmarshal(p, &kv) != nil || len(kv) != 2 || !isScalar(kv[0]) || !isScalar(kv[1]) {
				continue
			}
			var k, v str
			k.UnmarshalJSON(kv[0])
			v.UnmarshalJSON(kv[1])
			t.set(string(k), string(v))
		}
	case 'n':
	default:
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[map[string]string]()}
	}
	return nil
}

func (t *tags) set(k, v string) {
	if k == "" {
		return
	}
	if *t == nil {
		*t = make(tags)
	}
	(*t)[k] = v
}

func isScalar(b []byte) bool {
	return len(b) > 0 && b[0] != '{' && b[0] != '[' && b[0] != 'n'
}

// jsonKind names the kind of JSON value b holds, for error messages.
func jsonKind(b []byte) string {
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// decodeField unmarshals the JSON value raw, found at path in an event, into
// v. A missing or null value leaves v alone. A value of the wrong type is an
// error wrapping ErrInvalid that names the field, such as
// "exception.values.stacktrace.frames: found string, want array".
func decodeField(raw json.RawMessage, path string, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := path
		if te.Field != "" {
			field += "." + te.Field
		}
		return fmt.Errorf("%w event: field %s: found %s, want %s", ErrInvalid, field, te.Value, goKind(te.Type))
	}
	return fmt.Errorf("%w event: field %s: %v", ErrInvalid, path, err)
}

// goKind names the JSON kind that decodes into t.
func goKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Pointer:
		return goKind(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	}
	return "number"
}
