package backtrail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backtrail/backtrail/internal/spool"
	"github.com/backtrail/backtrail/report"
)

// SDKName and SDKVersion identify this SDK in reports ("sdk" in
// docs/report-format.md §2).
const (
	SDKName    = "backtrail.go"
	SDKVersion = "0.1.0"
)

// Options configure a Client. The zero value of every field means its
// default, and zero Options as a whole give a working client that keeps
// reports in memory and sends nothing.
type Options struct {
	// Endpoint is the server's base URL, e.g. "https://backtrail.example.com".
	// Reports are POSTed to Endpoint + "/api/v1/reports". Empty disables
	// delivery; everything else still works.
	Endpoint string
	// Key is the project key, sent as "Authorization: Bearer <Key>".
	Key string

	// SpoolDir is where reports wait for delivery, one file each, so that
	// they survive crashes and restarts. It is also where fatal runtime
	// errors are captured (see DisableCrashOutput). Empty keeps reports in
	// memory, lost at exit.
	SpoolDir string
	// Spool bounds: defaults 100 reports, 16 MiB, 7 days. The oldest go first.
	SpoolMaxCount int
	SpoolMaxBytes int64
	SpoolMaxAge   time.Duration

	Release     string            // e.g. "shop@1.4.2"
	Environment string            // e.g. "production"
	ServerName  string            // default: os.Hostname
	Tags        map[string]string // added to every report

	// RecoverPanics makes a panic in handed-off work (Go, AfterFunc, Wrap,
	// Group) stop after it is recorded, as if the work had returned. By
	// default the panic continues after recording and crashes the program,
	// as it would without the SDK.
	RecoverPanics bool
	// DisableCrashOutput stops the client from pointing
	// runtime/debug.SetCrashOutput at SpoolDir. Fatal errors that recover
	// cannot see are then not reported.
	DisableCrashOutput bool
	// DisableLabels stops handed-off work from carrying the LabelKey pprof
	// label. Setting it leaves goroutine labels alone entirely.
	DisableLabels bool

	// ShouldUpload is asked before each upload; returning false defers
	// delivery (say, on a metered or poor network). Nil means always.
	ShouldUpload func() bool
	// HTTPClient sends reports; nil means a client with a 30 s timeout.
	HTTPClient *http.Client
	// RetryBase and RetryMax bound the exponential backoff between failed
	// uploads; defaults 1 s and 5 min. A Retry-After header overrides them.
	RetryBase, RetryMax time.Duration

	// BeforeSend may edit a report before it is spooled, or return nil to
	// drop it. It runs on the goroutine that produced the report.
	BeforeSend func(*report.Report) *report.Report
	// Logger receives delivery problems (dropped reports, retries). Nil
	// discards them.
	Logger *slog.Logger
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
}

// Client records reports and delivers them. Package-level functions use a
// default client that Init replaces; programs that need two use NewClient.
// A Client is safe for concurrent use.
type Client struct {
	opts   Options
	spool  *spool.Spool
	tr     transport // nil when Options.Endpoint is empty
	log    *slog.Logger
	audits *auditTable
	host   string

	crashFile string // our crash-output file, "" if none
	closed    atomic.Bool
	closeOnce sync.Once
}

// transport moves spooled reports to their destination. The HTTP uploader
// (upload.go) is the one implementation.
type transport interface {
	// notify says a report was spooled. It must not block.
	notify()
	// flush waits until the spool is empty or ctx is done.
	flush(ctx context.Context) error
	// close stops delivery and waits for the transport's goroutines.
	close() error
}

// NewClient returns a client configured by opts. With a SpoolDir it opens
// the spool, turns crash output left by an earlier run into reports, and
// starts capturing this run's fatal errors. With an Endpoint it starts the
// uploader goroutine; Close stops it.
func NewClient(opts Options) (*Client, error) {
	c := &Client{opts: opts, log: opts.Logger, audits: newAuditTable()}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.host = opts.ServerName
	if c.host == "" {
		c.host, _ = os.Hostname()
	}
	so := spool.Options{
		MaxCount: opts.SpoolMaxCount,
		MaxBytes: opts.SpoolMaxBytes,
		MaxAge:   opts.SpoolMaxAge,
		Valid:    json.Valid,
		Now:      opts.Now,
	}
	if opts.SpoolDir == "" {
		c.spool = spool.NewMemory(so)
	} else {
		s, err := spool.Open(opts.SpoolDir, so)
		if err != nil {
			return nil, fmt.Errorf("backtrail: %w", err)
		}
		c.spool = s
	}
	if opts.Endpoint != "" {
		tr, err := newUploader(c)
		if err != nil {
			return nil, err
		}
		c.tr = tr
	}
	if opts.SpoolDir != "" {
		c.collectCrashes()
		if !opts.DisableCrashOutput {
			if err := c.startCrashOutput(); err != nil {
				c.log.Warn("backtrail: crash output not captured", "err", err)
			}
		}
	}
	if c.tr != nil {
		c.tr.notify() // deliver what earlier runs left behind
	}
	return c, nil
}

func (c *Client) now() time.Time {
	if c.opts.Now != nil {
		return c.opts.Now()
	}
	return time.Now()
}

// Flush waits until every spooled report is delivered or ctx is done. With
// no Endpoint there is nothing to wait for.
func (c *Client) Flush(ctx context.Context) error {
	if c == nil || c.tr == nil {
		return nil
	}
	return c.tr.flush(ctx)
}

// Close stops delivery, waits for the uploader goroutine, and stops
// capturing crash output. Spooled reports stay for the next run. Calling
// Close again does nothing. A closed client still records reports.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.stopCrashOutput()
		if c.tr != nil {
			err = c.tr.close()
		}
	})
	return err
}

// SpoolDir returns the directory reports are spooled to, or "" when they
// are kept in memory.
func (c *Client) SpoolDir() string { return c.spool.Dir() }

// Pending returns the reports waiting in the spool, oldest first, decoded.
// Reports that fail to decode are skipped. It reads every spooled file, so
// it is meant for tests, examples and diagnostics.
func (c *Client) Pending() ([]*report.Report, error) {
	ents, err := c.spool.List()
	if err != nil {
		return nil, err
	}
	var out []*report.Report
	for _, e := range ents {
		data, err := c.spool.Read(e.Name)
		if err != nil {
			continue
		}
		r, err := report.Parse(data)
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// newReport returns a report of kind k with the fields every report shares.
func (c *Client) newReport(k report.Kind) *report.Report {
	r := &report.Report{
		Version:     report.Version,
		Kind:        k,
		EventID:     report.NewEventID(),
		Timestamp:   c.now().UTC(),
		Platform:    report.PlatformGo,
		Release:     c.opts.Release,
		Environment: c.opts.Environment,
		ServerName:  c.host,
		SDK:         report.SDK{Name: SDKName, Version: SDKVersion},
		OS:          report.OS{Name: runtime.GOOS},
		Arch:        runtime.GOARCH,
		Runtime:     report.Runtime{Name: "go", Version: runtime.Version()},
		Modules:     modules(),
	}
	if len(c.opts.Tags) > 0 {
		r.Tags = maps.Clone(c.opts.Tags)
	}
	return r
}

// errDropped says BeforeSend dropped a report.
var errDropped = errors.New("backtrail: report dropped by BeforeSend")

// emit runs BeforeSend, spools r durably and wakes the uploader. When emit
// returns nil the report is on disk (or in the memory spool).
func (c *Client) emit(r *report.Report) error {
	if c.opts.BeforeSend != nil {
		if r = c.opts.BeforeSend(r); r == nil {
			return errDropped
		}
	}
	var buf bytes.Buffer
	if err := report.Encode(&buf, r); err != nil {
		return fmt.Errorf("backtrail: encode report: %w", err)
	}
	if _, err := c.spool.Put(buf.Bytes()); err != nil {
		c.log.Warn("backtrail: report not spooled", "kind", r.Kind, "err", err)
		return fmt.Errorf("backtrail: %w", err)
	}
	if c.tr != nil {
		c.tr.notify()
	}
	return nil
}

// The default client.
var defaultClientPtr atomic.Pointer[Client]

// CurrentClient returns the client the package-level functions use: the
// one Init installed, or a client with zero Options.
func CurrentClient() *Client {
	if c := defaultClientPtr.Load(); c != nil {
		return c
	}
	c, err := NewClient(Options{})
	if err != nil {
		panic("backtrail: zero Options failed: " + err.Error()) // cannot happen: no I/O
	}
	if defaultClientPtr.CompareAndSwap(nil, c) {
		return c
	}
	return defaultClientPtr.Load()
}

// Init replaces the default client with one configured by opts and closes
// the one it replaces. Work already handed off under the old client reports
// to the old client's spool.
func Init(opts Options) error {
	c, err := NewClient(opts)
	if err != nil {
		return err
	}
	if old := defaultClientPtr.Swap(c); old != nil {
		old.Close()
	}
	return nil
}

// Flush waits for the default client's spooled reports to be delivered.
func Flush(ctx context.Context) error { return CurrentClient().Flush(ctx) }

// Close closes the default client.
func Close() error { return CurrentClient().Close() }
