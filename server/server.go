// Package server holds the domain of `backtrail serve`: projects and their
// keys, events and the issues they are grouped into, debug files and the
// symbols events are missing. It defines the interfaces its storage
// implements (Store, Blobs) and the error codes every layer uses; the
// packages below it (store, blob, ingest, group, process, api, ui) do the
// work, and only cmd/backtrail wires them together.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/backtrail/backtrail/report"
)

// Error codes. Every error the server returns to a client carries one; the
// api package maps them to HTTP status codes.
const (
	EINVALID      = "invalid"      // the request or payload is malformed
	ENOTFOUND     = "not_found"    // no such project, issue, event or file
	EUNAUTHORIZED = "unauthorized" // missing or wrong key or token
	ECONFLICT     = "conflict"     // already exists
	ETOOLARGE     = "too_large"    // over a size limit
	ERATELIMITED  = "rate_limited" // too many requests
	EUNSUPPORTED  = "unsupported"  // a format or encoding the server cannot read
	EUNAVAILABLE  = "unavailable"  // shutting down or overloaded
	EINTERNAL     = "internal"     // everything else
)

// Error is an error with a code and a message safe to show to clients. Err,
// when set, is the cause, for logs only.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for other errors and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// Project is a tenant: events, issues and debug files belong to one.
type Project struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Key       string    `json:"key"` // public key: Sentry DSN key and Bearer key for reports
	CreatedAt time.Time `json:"created_at"`
}

// DSN returns the Sentry DSN of the project for a server reachable at
// base (e.g. "http://127.0.0.1:7070").
func (p *Project) DSN(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	u.User = url.User(p.Key)
	u.Path = "/" + strconv.FormatInt(p.ID, 10)
	return u.String()
}

// Status is the state of an issue.
type Status string

// Issue statuses.
const (
	StatusUnresolved Status = "unresolved"
	StatusResolved   Status = "resolved"
	StatusIgnored    Status = "ignored"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	return s == StatusUnresolved || s == StatusResolved || s == StatusIgnored
}

// Issue is a group of events with the same fingerprint.
type Issue struct {
	ID              int64       `json:"id"`
	ProjectID       int64       `json:"project"`
	Kind            report.Kind `json:"kind"`
	Fingerprint     string      `json:"fingerprint"`
	Title           string      `json:"title"`
	Culprit         string      `json:"culprit"`
	Count           int64       `json:"count"`
	FirstSeen       time.Time   `json:"first_seen"`
	LastSeen        time.Time   `json:"last_seen"`
	Status          Status      `json:"status"`
	FirstRelease    string      `json:"first_release,omitempty"`
	LastRelease     string      `json:"last_release,omitempty"`
	ResolvedRelease string      `json:"resolved_release,omitempty"` // the newest release when it was resolved
	RegressedAt     *time.Time  `json:"regressed_at,omitempty"`
	GroupingVersion int         `json:"grouping_version"`
}

// IssueFilter selects issues. Zero fields do not filter.
type IssueFilter struct {
	ProjectID int64
	Kind      report.Kind
	Release   string // issues with events in this release
	Status    Status
	Sort      string // "last_seen" (default), "first_seen", "count"
	Limit     int    // default 100
	Offset    int
}

// Event formats: what the raw payload of an event is.
const (
	FormatReport    = "report"       // backtrail's report format
	FormatSentry    = "sentry"       // a Sentry event (an envelope's event item)
	FormatStore     = "sentry-store" // the body of Sentry's legacy store endpoint (JSON, or base64/zlib from old SDKs)
	FormatIPS       = "ips"          // Apple .ips
	FormatCrash     = "crash"        // Apple legacy .crash text
	FormatMetricKit = "metrickit"    // one MetricKit diagnostic (already split)
	FormatGoPanic   = "gopanic"      // Go panic or goroutine dump text
)

// Incoming is an accepted event before processing: durable once Store.Accept
// returns.
type Incoming struct {
	ProjectID int64
	EventID   string // 32 lower-case hex digits
	Format    string
	Raw       []byte // the payload as received (decompressed)
	Received  time.Time
}

// Queued is an event claimed for processing.
type Queued struct {
	ID int64 // row id
	Incoming
	Attempts int
	// Err says why the stored payload could not be read back (a damaged
	// row); Raw is then empty and processing records Err as the event's
	// failure, so that one bad row does not hold up the queue.
	Err error
}

// Processed is the result of processing one event.
type Processed struct {
	ID        int64 // row id of the event
	ProjectID int64
	// Worker and Attempt name the lease the event was processed under:
	// the worker that claimed it and Queued.Attempts. Store.Complete
	// records the result only while that lease is held, so an event whose
	// lease expired and was claimed again elsewhere is counted once. Zero
	// values accept whatever lease the event holds.
	Worker          string
	Attempt         int
	Report          *report.Report // normalized and symbolicated
	Fingerprint     string
	GroupingVersion int
	Title           string
	Culprit         string
	Missing         []MissingModule // modules with frames but no debug file
	Err             error           // processing failed: the event is kept with this error
}

// MissingModule is a module an event needed symbols for.
type MissingModule struct {
	DebugID string `json:"debug_id"`
	CodeID  string `json:"code_id,omitempty"`
	Name    string `json:"name,omitempty"`
	Arch    string `json:"arch,omitempty"`
}

// MissingSymbols is a module events lacked a debug file for.
type MissingSymbols struct {
	ProjectID int64 `json:"project"`
	MissingModule
	Events    int64     `json:"events"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// Event is a stored event.
type Event struct {
	ID        int64          `json:"-"`
	ProjectID int64          `json:"project"`
	EventID   string         `json:"id"`
	IssueID   int64          `json:"issue,omitempty"`
	Kind      report.Kind    `json:"kind"`
	Format    string         `json:"format"`
	Received  time.Time      `json:"received"`
	Timestamp time.Time      `json:"timestamp"`
	Release   string         `json:"release,omitempty"`
	Title     string         `json:"title,omitempty"`
	Processed bool           `json:"processed"`
	Error     string         `json:"error,omitempty"`
	Report    *report.Report `json:"-"`
}

// CountBucket is the number of events of an issue in one hour.
type CountBucket struct {
	Hour  time.Time `json:"hour"`
	Count int64     `json:"count"`
}

// DebugFile is a stored debug file: one object (architecture) of an
// uploaded file.
type DebugFile struct {
	ID         int64     `json:"id"`
	ProjectID  int64     `json:"project"`
	DebugID    string    `json:"debug_id"`
	CodeID     string    `json:"code_id,omitempty"`
	Arch       string    `json:"arch"`
	Format     string    `json:"format"` // elf, macho
	Kind       string    `json:"kind"`   // executable, library, debug, …
	Name       string    `json:"name"`
	Size       int64     `json:"size"`
	Blob       string    `json:"sha256"` // content address of the file in Blobs
	Features   []string  `json:"features"`
	UploadedAt time.Time `json:"uploaded_at"`
}

// Store keeps everything but blobs. Implementations are safe for
// concurrent use.
type Store interface {
	// Projects.
	CreateProject(ctx context.Context, name string) (*Project, error)
	Projects(ctx context.Context) ([]*Project, error)
	Project(ctx context.Context, id int64) (*Project, error)
	ProjectByName(ctx context.Context, name string) (*Project, error)
	ProjectByKey(ctx context.Context, key string) (*Project, error)

	// Accept stores incoming events durably, in one transaction, and
	// queues them for processing. An event id already stored for the
	// project is not stored again (ingestion is idempotent); dup[i] tells.
	Accept(ctx context.Context, evs []*Incoming) (dup []bool, err error)
	// Claim leases up to n queued events for processing by worker until
	// now+lease. Expired leases are claimed again.
	Claim(ctx context.Context, worker string, n int, lease time.Duration) ([]*Queued, error)
	// Complete records processing results in one transaction: events,
	// issues, counts, missing symbols. Results whose lease was lost (see
	// Processed.Worker) are skipped.
	Complete(ctx context.Context, ps []*Processed) error
	// Requeue queues events again (their symbols arrived).
	Requeue(ctx context.Context, eventRowIDs []int64) error
	// Pending returns the number of events waiting to be processed.
	Pending(ctx context.Context) (int64, error)

	// Reading.
	Issues(ctx context.Context, f IssueFilter) ([]*Issue, error)
	Issue(ctx context.Context, id int64) (*Issue, error)
	SetIssueStatus(ctx context.Context, id int64, s Status) error
	IssueCounts(ctx context.Context, id int64, since time.Time) ([]CountBucket, error)
	IssueReleases(ctx context.Context, id int64) ([]string, error)
	Events(ctx context.Context, issueID int64, limit, offset int) ([]*Event, error)
	Event(ctx context.Context, projectID int64, eventID string) (*Event, error)
	RawEvent(ctx context.Context, projectID int64, eventID string) (format string, raw []byte, err error)

	// Debug files and missing symbols.
	AddDebugFile(ctx context.Context, f *DebugFile) (*DebugFile, bool, error) // bool: newly added
	DebugFiles(ctx context.Context, projectID int64) ([]*DebugFile, error)
	DebugFile(ctx context.Context, id int64) (*DebugFile, error)
	DeleteDebugFile(ctx context.Context, id int64) error
	FindDebugFiles(ctx context.Context, projectID int64, debugID, codeID string) ([]*DebugFile, error) // projectID 0: any project
	MissingSymbols(ctx context.Context, projectID int64) ([]*MissingSymbols, error)
	// EventsMissing returns the row ids of events that lacked the module.
	EventsMissing(ctx context.Context, projectID int64, debugID string) ([]int64, error)

	Close() error
}

// Blobs is a content-addressed file store. Implementations are safe for
// concurrent use.
type Blobs interface {
	// Put stores the content of r and returns its address (lower-case hex
	// SHA-256) and size. Storing existing content is cheap and harmless.
	Put(ctx context.Context, r io.Reader) (addr string, size int64, err error)
	// Open returns the content at addr; ENOTFOUND when absent.
	Open(ctx context.Context, addr string) (io.ReadCloser, error)
	// Path returns a local file holding the content, for memory mapping.
	Path(ctx context.Context, addr string) (string, error)
	// Delete removes the content.
	Delete(ctx context.Context, addr string) error
}

// Regresses reports whether an event of release reopens an issue resolved
// when resolved was the newest release: any event does when either release
// is unknown; otherwise only an event of a newer release (older releases
// still in the field do not reopen it).
func Regresses(resolved, release string) bool {
	if resolved == "" || release == "" {
		return true
	}
	return CompareReleases(release, resolved) > 0
}

// CompareReleases orders release names: dotted numeric parts compare as
// numbers ("1.10" > "1.9"), anything else compares as text. An optional
// "name@" prefix (Sentry's package@version form) is ignored.
func CompareReleases(a, b string) int {
	if i := lastIndexByte(a, '@'); i >= 0 {
		a = a[i+1:]
	}
	if i := lastIndexByte(b, '@'); i >= 0 {
		b = b[i+1:]
	}
	for a != "" || b != "" {
		pa, ra := cutPart(a)
		pb, rb := cutPart(b)
		na, ea := strconv.ParseUint(pa, 10, 64)
		nb, eb := strconv.ParseUint(pb, 10, 64)
		switch {
		case ea == nil && eb == nil && na != nb:
			if na < nb {
				return -1
			}
			return 1
		case (ea != nil || eb != nil) && pa != pb:
			if pa < pb {
				return -1
			}
			return 1
		}
		a, b = ra, rb
	}
	return 0
}

func cutPart(s string) (part, rest string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' || s[i] == '-' || s[i] == '+' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

func lastIndexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}
