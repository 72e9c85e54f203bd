package sentry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/backtrail/backtrail/report"
)

// Envelope is a parsed Sentry envelope ("Envelopes" at
// develop.sentry.dev/sdk/data-model/envelopes/): a header and items.
type Envelope struct {
	Header EnvelopeHeader
	Items  []Item
}

// EnvelopeHeader holds the envelope header fields this package reads.
type EnvelopeHeader struct {
	EventID string     // 32 lower-case hex digits, or "" if absent
	DSN     string     // the DSN the SDK was configured with, if it sent it; see KeyFromDSN
	SentAt  time.Time  // when the SDK sent the envelope; zero if absent or unreadable
	SDK     report.SDK // the SDK's name and version, if it sent them
}

// Item is one item of an envelope. Items of every type are kept, those
// this package does not convert too ("attachment", "session", "sessions",
// "client_report", "transaction", and types Sentry adds later), so that
// callers can store or count them; most callers use Envelope.Event and
// ignore the rest.
type Item struct {
	Type           string // "event", "attachment", "session", "client_report", …
	ContentType    string // content_type, if given
	Filename       string // filename, for attachments
	AttachmentType string // attachment_type, e.g. "event.minidump"
	// Payload is the item's bytes. It aliases the data given to
	// ParseEnvelope.
	Payload []byte
}

// EnvelopeError describes malformed or oversized envelope data.
type EnvelopeError struct {
	Offset int64  // byte offset in the envelope where the problem is
	Item   int    // index of the item, or -1 for the envelope header
	Msg    string // what is wrong
	Err    error  // ErrInvalid or ErrTooLarge
}

// Error implements error.
func (e *EnvelopeError) Error() string {
	where := "header"
	if e.Item >= 0 {
		where = "item " + strconv.Itoa(e.Item)
	}
	return fmt.Sprintf("sentry: envelope %s at offset %#x: %s", where, e.Offset, e.Msg)
}

// Unwrap returns ErrInvalid or ErrTooLarge, for errors.Is.
func (e *EnvelopeError) Unwrap() error { return e.Err }

// ParseEnvelope splits data, a whole envelope with any Content-Encoding
// already undone (see Body), into its header and items. The format is
// newline-separated: a JSON object for the envelope header, then for each
// item a JSON object for the item header and the payload. An item header
// with "length" gives the payload's size in bytes, and a newline may follow
// the payload; without "length" the payload runs to the next newline or the
// end. Blank lines between items and at the end are skipped.
//
// Malformed data is an *EnvelopeError wrapping ErrInvalid, with the offset of
// the problem: an envelope or item header that is not a JSON object, an item
// without a type, a length that is not a non-negative integer or exceeds the
// bytes that remain, a payload not followed by a newline. Data over
// lim.Decompressed, more than lim.Items items, or an "event" or
// "transaction" item over lim.Event is an *EnvelopeError wrapping
// ErrTooLarge. A header event_id that is not a UUID is invalid;
// other header fields of the wrong type are ignored.
//
// Payloads alias data; ParseEnvelope copies nothing. It is linear in
// len(data).
func ParseEnvelope(data []byte, lim Limits) (*Envelope, error) {
	if max := lim.decompressed(); int64(len(data)) > max {
		return nil, &EnvelopeError{Offset: max, Item: -1, Msg: fmt.Sprintf("envelope of %d bytes, limit %d", len(data), max), Err: ErrTooLarge}
	}
	env := new(Envelope)
	line, pos := cutLine(data, 0)
	if err := env.Header.parse(line); err != nil {
		return nil, err
	}
	maxItems, maxEvent := lim.items(), lim.event()
	for {
		for pos < len(data) && isSpace(data[pos]) {
			pos++
		}
		if pos >= len(data) {
			return env, nil
		}
		n := len(env.Items)
		bad := func(off int, format string, args ...any) error {
			return &EnvelopeError{Offset: int64(off), Item: n, Msg: fmt.Sprintf(format, args...), Err: ErrInvalid}
		}
		if n == maxItems {
			return nil, &EnvelopeError{Offset: int64(pos), Item: n, Msg: fmt.Sprintf("more than %d items", maxItems), Err: ErrTooLarge}
		}
		start := pos
		line, pos = cutLine(data, pos)
		var h itemHeader
		if err := h.parse(line); err != nil {
			return nil, bad(start, "%v", err)
		}
		var payload []byte
		if h.length >= 0 {
			if left := len(data) - pos; h.length > int64(left) {
				return nil, bad(pos, "payload length %d exceeds the %d bytes that remain", h.length, left)
			}
			payload = data[pos : pos+int(h.length)]
			pos += int(h.length)
			if pos < len(data) {
				if data[pos] != '\n' {
					return nil, bad(pos, "payload of length %d is followed by %q, not a newline", h.length, data[pos])
				}
				pos++
			}
		} else {
			payload, pos = cutLine(data, pos)
		}
		if (h.Type == "event" || h.Type == "transaction") && int64(len(payload)) > maxEvent {
			return nil, &EnvelopeError{Offset: int64(start), Item: n, Msg: fmt.Sprintf("%s of %d bytes, limit %d", h.Type, len(payload), maxEvent), Err: ErrTooLarge}
		}
		env.Items = append(env.Items, Item{
			Type:           h.Type,
			ContentType:    string(h.ContentType),
			Filename:       string(h.Filename),
			AttachmentType: string(h.AttachmentType),
			Payload:        payload,
		})
	}
}

// Event converts the envelope's first "event" item with Event, taking the
// event id and SDK from the envelope header when the payload has none. It
// returns ErrNoEvent if there is no event item.
func (e *Envelope) Event() (*report.Report, error) {
	for i := range e.Items {
		if e.Items[i].Type == "event" {
			return convert(e.Items[i].Payload, &e.Header)
		}
	}
	return nil, ErrNoEvent
}

func (h *EnvelopeHeader) parse(line []byte) error {
	bad := func(format string, args ...any) error {
		return &EnvelopeError{Offset: 0, Item: -1, Msg: fmt.Sprintf(format, args...), Err: ErrInvalid}
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return bad("missing")
	}
	if line[0] != '{' {
		return bad("not a JSON object")
	}
	var raw struct {
		EventID json.RawMessage `json:"event_id"`
		DSN     str             `json:"dsn"`
		SentAt  timestamp       `json:"sent_at"`
		SDK     json.RawMessage `json:"sdk"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return bad("%v", err)
	}
	if len(raw.EventID) > 0 && string(raw.EventID) != "null" {
		var s string
		if json.Unmarshal(raw.EventID, &s) != nil {
			return bad("event_id is a JSON %s, not a string", jsonKind(raw.EventID))
		}
		id, ok := NormalizeEventID(s)
		if !ok {
			return bad("event_id %q is not a UUID", s)
		}
		h.EventID = id
	}
	h.DSN = string(raw.DSN)
	h.SentAt = raw.SentAt.t
	var sdk sdkJSON
	if len(raw.SDK) > 0 && raw.SDK[0] == '{' && json.Unmarshal(raw.SDK, &sdk) == nil {
		h.SDK = report.SDK{Name: string(sdk.Name), Version: string(sdk.Version)}
	}
	return nil
}

type itemHeader struct {
	Type           string
	ContentType    str
	Filename       str
	AttachmentType str
	length         int64 // -1 if absent
}

func (h *itemHeader) parse(line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return fmt.Errorf("item header is not a JSON object")
	}
	var raw struct {
		Type           json.RawMessage `json:"type"`
		Length         json.RawMessage `json:"length"`
		ContentType    str             `json:"content_type"`
		Filename       str             `json:"filename"`
		AttachmentType str             `json:"attachment_type"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return fmt.Errorf("item header: %v", err)
	}
	if len(raw.Type) == 0 || json.Unmarshal(raw.Type, &h.Type) != nil || h.Type == "" {
		return fmt.Errorf("item header has no type")
	}
	h.ContentType, h.Filename, h.AttachmentType = raw.ContentType, raw.Filename, raw.AttachmentType
	h.length = -1
	if len(raw.Length) > 0 && string(raw.Length) != "null" {
		n, err := strconv.ParseInt(string(raw.Length), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("item length %s is not a non-negative integer", raw.Length)
		}
		h.length = n
	}
	return nil
}

// cutLine returns the bytes of data from pos to the next newline or the
// end, and the position after the newline.
func cutLine(data []byte, pos int) (line []byte, next int) {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return data[pos : pos+i], pos + i + 1
	}
	return data[pos:], len(data)
}

func isSpace(c byte) bool { return c == '\n' || c == '\r' || c == ' ' || c == '\t' }
