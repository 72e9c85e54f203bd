// Package ingest turns what clients send into reports: it tells formats
// apart by their content, splits uploads into events with their ids, and
// decodes stored payloads with the decoder of their format (the
// subpackages: sentry, apple; backtrail's own format is package report; Go
// panic text is report's traceback parser).
package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/ingest/apple"
	"github.com/backtrail/backtrail/server/ingest/sentry"
)

// Payload is one event's raw data and id.
type Payload struct {
	EventID string
	Format  string
	Raw     []byte
}

// Detect tells the format of a body posted to /api/v1/reports from its
// content: backtrail's report JSON, Apple .ips, .crash or MetricKit, or Go
// panic text. It returns "" when it cannot tell.
func Detect(data []byte) string {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		switch apple.Sniff(data) {
		case apple.FormatIPS:
			return server.FormatIPS
		case apple.FormatMetricKit:
			return server.FormatMetricKit
		}
		head := trimmed[:min(len(trimmed), 4096)]
		if bytes.Contains(head, []byte(`"version"`)) && bytes.Contains(head, []byte(`"kind"`)) {
			return server.FormatReport
		}
		return ""
	}
	if apple.Sniff(data) == apple.FormatCrash {
		return server.FormatCrash
	}
	if report.IsGoTraceback(data) {
		return server.FormatGoPanic
	}
	return ""
}

// Split checks an upload of a known format and returns the events it
// holds, each with its id: the id the producer gave, or one derived from
// the content so that uploading the same report twice stores it once.
func Split(format string, data []byte) ([]Payload, error) {
	switch format {
	case server.FormatReport:
		// Only the head is read here; processing decodes the rest, and a
		// report that turns out malformed is kept as a failed event.
		version, eventID, err := report.Head(data)
		if err != nil {
			return nil, server.Errorf(server.EINVALID, "%v", err)
		}
		if err := report.CheckVersion(version); err != nil {
			return nil, server.Errorf(server.EINVALID, "%v", err)
		}
		if !json.Valid(data) {
			return nil, server.Errorf(server.EINVALID, "report: not valid JSON")
		}
		id, err := NormalizeEventID(eventID, data)
		if err != nil {
			return nil, err
		}
		return []Payload{{id, format, data}}, nil
	case server.FormatMetricKit:
		rs, err := apple.ParseMetricKit(data)
		if err != nil {
			return nil, server.Errorf(server.EINVALID, "%v", err)
		}
		// Each diagnostic becomes its own event, stored as the report it
		// decoded to: the payload held several.
		var out []Payload
		for _, r := range rs {
			var buf bytes.Buffer
			if err := report.Encode(&buf, r); err != nil {
				return nil, server.Errorf(server.EINVALID, "%v", err)
			}
			id, err := NormalizeEventID(r.EventID, buf.Bytes())
			if err != nil {
				return nil, err
			}
			out = append(out, Payload{id, server.FormatReport, buf.Bytes()})
		}
		return out, nil
	case server.FormatIPS, server.FormatCrash, server.FormatGoPanic, server.FormatStore:
		r, err := Decode(format, data)
		if err != nil {
			return nil, err
		}
		id, err := NormalizeEventID(r.EventID, data)
		if err != nil {
			return nil, err
		}
		return []Payload{{id, format, data}}, nil
	case server.FormatSentry:
		var head struct {
			EventID string `json:"event_id"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return nil, server.Errorf(server.EINVALID, "sentry event: %v", err)
		}
		id, err := NormalizeEventID(head.EventID, data)
		if err != nil {
			return nil, err
		}
		return []Payload{{id, format, data}}, nil
	}
	return nil, server.Errorf(server.EUNSUPPORTED, "unknown report format")
}

// Decode decodes a stored payload into a report.
func Decode(format string, raw []byte) (*report.Report, error) {
	var r *report.Report
	var err error
	switch format {
	case server.FormatReport:
		r, err = report.Parse(raw)
	case server.FormatSentry:
		r, err = sentry.Event(raw)
	case server.FormatStore:
		r, err = sentry.Store(raw, sentry.Limits{})
	case server.FormatIPS:
		r, err = apple.ParseIPS(raw)
	case server.FormatCrash:
		r, err = apple.ParseCrash(raw)
	case server.FormatGoPanic:
		r, err = report.ParseGoTraceback(raw)
	default:
		return nil, server.Errorf(server.EUNSUPPORTED, "unknown report format %q", format)
	}
	if err != nil {
		return nil, server.Errorf(server.EINVALID, "%s: %v", format, err)
	}
	return r, nil
}

// NormalizeEventID returns id as 32 lower-case hex digits (dashes
// removed), or, when id is empty, an id derived from content.
func NormalizeEventID(id string, content []byte) (string, error) {
	if id == "" {
		sum := sha256.Sum256(content)
		return hex.EncodeToString(sum[:16]), nil
	}
	s := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if len(s) != 32 || !utf8.ValidString(s) {
		return "", server.Errorf(server.EINVALID, "event id %q is not 32 hex digits", id)
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", server.Errorf(server.EINVALID, "event id %q is not 32 hex digits", id)
	}
	return s, nil
}
