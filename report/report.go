// Package report is the versioned JSON report format shared by the Go SDK,
// `backtrail dump` and the server: crashes, hangs, audits and native dumps,
// version 1.0 as specified in docs/report-format.md. Section references in
// comments (§3.2 and so on) are to that document.
//
// A Report is plain data. Encode writes one; Decode reads one from an
// untrusted stream and checks its version; Validate checks the rules that
// JSON types alone cannot express.
//
// # Untrusted input
//
// Decode reads at most the limit it is given, never panics, ignores fields it
// does not know (so a 1.x reader accepts any 1.y report), and rejects a major
// version it does not know with an error that wraps ErrVersion. A fuzz target
// checks that whatever Decode accepts survives Encode and Decode unchanged.
package report

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Version is the format version this package writes (§1). Readers accept any
// minor version of MajorVersion and reject other majors.
const Version = "1.1"

// MajorVersion is the major part of Version.
const MajorVersion = 1

// Sentinel errors, for errors.Is.
var (
	ErrVersion  = errors.New("report: unsupported format version")
	ErrTooLarge = errors.New("report: larger than the limit")
)

// Kind says what a report describes (§2).
type Kind string

// The kinds of report.
const (
	KindCrash Kind = "crash" // a panic or fatal runtime error
	KindHang  Kind = "hang"  // a loop or request that ran past its threshold
	KindAudit Kind = "audit" // counts of sensitive calls per unique stack
	KindDump  Kind = "dump"  // a native process dump taken by `backtrail dump`
)

// Platform says how frames were produced and symbolized (§2).
type Platform string

// The platforms.
const (
	PlatformGo     Platform = "go"     // Go program; frames symbolized in-process
	PlatformNative Platform = "native" // native process; frames may be addresses only
)

// Report is one event (§2). Optional sections are nil when absent.
type Report struct {
	Version     string            `json:"version"`
	Kind        Kind              `json:"kind"`
	EventID     string            `json:"event_id"`
	Timestamp   time.Time         `json:"timestamp"`
	Platform    Platform          `json:"platform"`
	Release     string            `json:"release,omitempty"`
	Environment string            `json:"environment,omitempty"`
	ServerName  string            `json:"server_name,omitempty"`
	SDK         SDK               `json:"sdk"`
	OS          OS                `json:"os"`
	Arch        string            `json:"arch,omitempty"`
	Runtime     Runtime           `json:"runtime"`
	Modules     []Module          `json:"modules,omitempty"`
	Threads     []Thread          `json:"threads,omitempty"`
	Trail       []Hop             `json:"trail,omitempty"`
	Exception   *Exception        `json:"exception,omitempty"`
	Hang        *Hang             `json:"hang,omitempty"`
	Snapshot    *Snapshot         `json:"snapshot,omitempty"`
	Audit       *Audit            `json:"audit,omitempty"`
	Fingerprint []string          `json:"fingerprint,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Truncated   *Truncated        `json:"truncated,omitempty"`
}

// SDK names the producer of a report (§2).
type SDK struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// OS describes the operating system (§2).
type OS struct {
	Name    string `json:"name,omitempty"` // GOOS spelling: linux, darwin, windows
	Version string `json:"version,omitempty"`
}

// Runtime describes the language runtime (§2).
type Runtime struct {
	Name    string `json:"name,omitempty"`    // "go" for Go programs
	Version string `json:"version,omitempty"` // runtime.Version()
}

// Truncated lists which report-level lists were cut to fit limits (§2.1).
// Each frame list carries its own flag.
type Truncated struct {
	Threads bool `json:"threads,omitempty"` // some threads or goroutines were left out
	Trail   bool `json:"trail,omitempty"`   // older hops were dropped
	Modules bool `json:"modules,omitempty"` // some modules were left out
}

// Module is one loaded image (§3).
type Module struct {
	Type        string `json:"type"` // "elf", "macho" or "go"
	Name        string `json:"name,omitempty"`
	Path        string `json:"path,omitempty"`
	DebugID     string `json:"debug_id,omitempty"`
	CodeID      string `json:"code_id,omitempty"`
	BuildID     string `json:"build_id,omitempty"` // Go build ID, for Go executables
	ImageAddr   Addr   `json:"image_addr,omitempty"`
	ImageSize   uint64 `json:"image_size,omitempty"`
	ImageVMAddr Addr   `json:"image_vmaddr,omitempty"`
	Arch        string `json:"arch,omitempty"`
}

// Frame is one frame of a stack, innermost first in every list (§4).
// Addr is the return address for every frame but a crashing one; inlined
// frames repeat the Addr of the physical frame they were inlined into.
type Frame struct {
	Addr        Addr   `json:"addr,omitempty"`
	Module      string `json:"module,omitempty"`
	Function    string `json:"function,omitempty"`
	RawFunction string `json:"raw_function,omitempty"` // the mangled name, when Function is demangled (§4, 1.1)
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	Column      int    `json:"column,omitempty"` // 1.1
	Inlined     bool   `json:"inlined,omitempty"`
	InApp       bool   `json:"in_app,omitempty"`
}

// Thread is one OS thread or goroutine (§5).
type Thread struct {
	ID        uint64            `json:"id"`
	Name      string            `json:"name,omitempty"`
	State     string            `json:"state,omitempty"`
	Crashed   bool              `json:"crashed,omitempty"`
	Current   bool              `json:"current,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	CreatedBy *Frame            `json:"created_by,omitempty"`
	Registers map[string]Addr   `json:"registers,omitempty"`
	Frames    []Frame           `json:"frames"`
	Truncated bool              `json:"truncated,omitempty"`
}

// Hop is one hand-off in a trail: the stack that submitted the work (§6).
// Trail lists are innermost first: Trail[0] submitted the current work.
type Hop struct {
	Site      *Frame  `json:"site,omitempty"` // the submitting call site, also Frames[0] when known
	Hash      string  `json:"hash,omitempty"` // the SDK's stack hash, 16 hex digits
	Frames    []Frame `json:"frames"`
	Truncated bool    `json:"truncated,omitempty"`
}

// Exception describes a panic or fatal error (§7).
type Exception struct {
	Type      string `json:"type"`
	Value     string `json:"value,omitempty"`
	Mechanism string `json:"mechanism,omitempty"` // "panic", "fatal", "signal"
	Handled   bool   `json:"handled,omitempty"`   // the program went on running
	ThreadID  uint64 `json:"thread_id,omitempty"`
}

// Hang describes a loop or request that ran past a threshold (§8).
type Hang struct {
	DurationMS  int64    `json:"duration_ms"`
	ThresholdMS int64    `json:"threshold_ms"`
	Loop        string   `json:"loop,omitempty"`
	Request     string   `json:"request,omitempty"`
	Samples     []Sample `json:"samples,omitempty"`
	Suppressed  int      `json:"suppressed,omitempty"` // identical hangs not reported since the last report
}

// Sample is one stack of the hung goroutine, oldest sample first (§8).
// Weight counts consecutive identical samples merged into this one.
type Sample struct {
	Timestamp time.Time `json:"timestamp"`
	Weight    int       `json:"weight,omitempty"`
	Frames    []Frame   `json:"frames"`
	Truncated bool      `json:"truncated,omitempty"`
}

// Snapshot aggregates every goroutine or thread at one moment (§9).
type Snapshot struct {
	Timestamp time.Time       `json:"timestamp"`
	Total     int             `json:"total"` // goroutines seen, including those in dropped stacks
	PauseUS   int64           `json:"pause_us,omitempty"`
	Stacks    []SnapshotStack `json:"stacks"`
	Truncated bool            `json:"truncated,omitempty"` // rarer stacks were dropped
}

// SnapshotStack is one unique stack and how many goroutines share it (§9).
type SnapshotStack struct {
	Count     int               `json:"count"`
	State     string            `json:"state,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Frames    []Frame           `json:"frames"`
	Truncated bool              `json:"truncated,omitempty"`
}

// Audit holds counts of sensitive calls per unique stack (§10).
type Audit struct {
	Since   time.Time    `json:"since,omitempty"` // counts are since this moment
	Entries []AuditEntry `json:"entries"`
	Dropped uint64       `json:"dropped,omitempty"` // calls counted in no entry because a table was full
}

// AuditEntry counts one kind of call from one unique stack (§10).
type AuditEntry struct {
	Kind      string    `json:"kind"`
	Count     uint64    `json:"count"`
	First     time.Time `json:"first,omitempty"`
	Last      time.Time `json:"last,omitempty"`
	Hash      string    `json:"hash,omitempty"`
	Frames    []Frame   `json:"frames"`
	Truncated bool      `json:"truncated,omitempty"`
}

// Addr is a memory address. In JSON it is a string of "0x" and lower-case hex
// digits (§4.1), because JSON numbers lose precision above 2^53.
type Addr uint64

// String returns the address as JSON spells it.
func (a Addr) String() string { return "0x" + strconv.FormatUint(uint64(a), 16) }

// MarshalText implements encoding.TextMarshaler.
func (a Addr) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler. It accepts "0x" or "0X"
// followed by 1 to 16 hex digits.
func (a *Addr) UnmarshalText(b []byte) error {
	s := string(b)
	if len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || len(s) > 18 {
		return fmt.Errorf("report: address %q is not 0x followed by 1 to 16 hex digits", s)
	}
	v, err := strconv.ParseUint(s[2:], 16, 64)
	if err != nil {
		return fmt.Errorf("report: address %q is not 0x followed by 1 to 16 hex digits", s)
	}
	*a = Addr(v)
	return nil
}

// NewEventID returns a random event id: a version 4 UUID as 32 lower-case
// hex digits without dashes (§2).
func NewEventID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

// Encode writes r as one line of JSON followed by a newline. An empty
// r.Version is written as Version.
func Encode(w io.Writer, r *Report) error {
	b, err := AppendJSON(nil, r)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Decode reads one report of at most limit bytes from rd (§1). It fails with
// ErrTooLarge beyond the limit and with an error wrapping ErrVersion for a
// missing or unknown major version; unknown fields are ignored. Decode does
// not call Validate.
func Decode(rd io.Reader, limit int64) (*Report, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("report: decode limit %d is not positive", limit)
	}
	data, err := io.ReadAll(io.LimitReader(rd, limit+1))
	if err != nil {
		return nil, fmt.Errorf("report: read: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
	}
	return Parse(data)
}

// Parse decodes one report held in data, like Decode without the limit.
func Parse(data []byte) (*Report, error) {
	r, ok := parseFast(data)
	if !ok {
		r = new(Report)
		if err := json.Unmarshal(data, r); err != nil {
			// A report of a future major version may fail on its new
			// layout; say that rather than the type mismatch.
			if v, _, herr := Head(data); herr == nil && v != "" && CheckVersion(v) != nil {
				return nil, CheckVersion(v)
			}
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	if r.Version == "" {
		return nil, fmt.Errorf("%w: no version field", ErrVersion)
	}
	if err := CheckVersion(r.Version); err != nil {
		return nil, err
	}
	return r, nil
}

// Head returns the version and event id of an encoded report without
// decoding the rest: it reads top-level fields only until it has both,
// which writers put first. Cost: proportional to the fields before them.
func Head(data []byte) (version, eventID string, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", "", fmt.Errorf("report: not a JSON object")
	}
	var haveV, haveID bool
	for dec.More() && !(haveV && haveID) {
		t, err := dec.Token()
		if err != nil {
			return "", "", fmt.Errorf("report: %w", err)
		}
		key, _ := t.(string)
		switch key {
		case "version":
			err, haveV = dec.Decode(&version), true
		case "event_id":
			err, haveID = dec.Decode(&eventID), true
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return "", "", fmt.Errorf("report: %s: %w", key, err)
		}
	}
	return version, eventID, nil
}

// CheckVersion returns nil if v is "MAJOR.MINOR" with MAJOR equal to
// MajorVersion, and an error wrapping ErrVersion otherwise.
func CheckVersion(v string) error {
	major, minor, ok := strings.Cut(v, ".")
	if !ok || !isDigits(major) || !isDigits(minor) {
		return fmt.Errorf("%w: version %q is not MAJOR.MINOR", ErrVersion, v)
	}
	if m, err := strconv.Atoi(major); err != nil || m != MajorVersion {
		return fmt.Errorf("%w: version %q has major %s; this reader knows major %d", ErrVersion, v, major, MajorVersion)
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
