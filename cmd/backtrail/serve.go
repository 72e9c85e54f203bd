package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/api"
	"github.com/backtrail/backtrail/server/blob"
	"github.com/backtrail/backtrail/server/process"
	"github.com/backtrail/backtrail/server/store"
	"github.com/backtrail/backtrail/server/ui"
)

func init() {
	register(&command{
		name:  "serve",
		args:  "[--addr 127.0.0.1:7070] [--data DIR] [--db URL] [--retention 90d] [--admin-token TOKEN]",
		short: "run the server: ingest, symbolicate, group, web UI",
		long: `
Serve runs the backtrail server. It stores everything under --data: the
SQLite database (unless --db names a PostgreSQL database), debug files and
symcaches. On first start it creates the project "default" and prints the
URL, the project's DSN (for Sentry SDKs and backtrail's Go SDK) and where
the admin token is.

The admin token guards the read API, the web UI and debug file uploads. It
comes from --admin-token or BACKTRAIL_ADMIN_TOKEN, else it is generated into
DIR/admin-token (mode 0600).

Endpoints: Sentry's /api/<project>/envelope/ and /store/; /api/v1/reports
for backtrail reports, Apple .ips/.crash/MetricKit and Go panics;
/api/v1/debug-files and sentry-cli's chunk upload for debug files (ELF,
Mach-O, zipped dSYMs, and symcaches from backtrail symcache build, used as
they are);
/buildid/<id>/debuginfo for debuginfod clients; /api/v1/issues and friends
for reading; /healthz (200 with the queue length while the database
answers, for load balancers); the web UI at /.

Several replicas may serve one PostgreSQL database (--db postgres://…)
behind a load balancer: they share the processing queue, and each event is
processed once even when a replica dies (its leases expire after --lease
and other replicas take the events over). They must share the blob
directory (--data, or at least DIR/blobs and DIR/chunks, on a shared file
system); symcaches are built per replica. See docs/scaling.md.

With --retention, events received longer ago are deleted, checked hourly:
on PostgreSQL whole days at a time (daily partitions are dropped), on
SQLite in batches. Issue counts always match the events kept.
`,
		flags: func(fs *flag.FlagSet) {
			fs.String("addr", "127.0.0.1:7070", "`address` to listen on")
			fs.String("data", "backtrail-data", "data `directory`")
			fs.String("db", "", "database: a postgres:// URL (default: SQLite in the data directory)")
			fs.String("retention", "", "delete events received longer ago than this `period`: days (90d) or a duration (default: keep all)")
			fs.Duration("lease", 30*time.Second, "how long a replica holds events it is processing before others may take them over")
			fs.String("admin-token", "", "admin `token` (default: BACKTRAIL_ADMIN_TOKEN, else generated)")
			fs.String("base-url", "", "`URL` clients reach the server at (default: http://ADDR)")
			fs.Float64("rate-limit", 0, "events per second per project (0: unlimited)")
			fs.Bool("demo", false, "load demo data (debug files and crashes from the repository's testdata) on start")
			fs.String("debuginfod-urls", "", "space-separated upstream debuginfod `URLs` asked for debug files nobody uploaded (default: $DEBUGINFOD_URLS)")
		},
		run: runServe,
	})
}

func flagString(fs *flag.FlagSet, name string) string { return fs.Lookup(name).Value.String() }

func runServe(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	// The server's live heap is a few MB while each event allocates
	// ≈ 100 KB on its way (decoded report, frames, buffers): at 2,000
	// events/s the default of 100 ran a collection every 13 ms, 9 % of
	// the CPU; at 400 it is 3 %, for ≈ 15 MB more RSS.
	setGCPercent(400)
	dir := flagString(fs, "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	token, tokenFile, err := adminToken(dir, flagString(fs, "admin-token"))
	if err != nil {
		return err
	}
	retention, err := parseRetention(flagString(fs, "retention"))
	if err != nil {
		return err
	}
	lease := fs.Lookup("lease").Value.(flag.Getter).Get().(time.Duration)
	if lease <= 0 {
		return usagef("--lease must be positive")
	}
	db, err := store.Open(ctx, databaseDSN(fs, dir))
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer db.Close()
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		return err
	}
	def, err := defaultProject(ctx, db)
	if err != nil {
		return err
	}
	if err := db.Maintain(ctx, retention); err != nil {
		return fmt.Errorf("database: %w", err)
	}

	ln, err := net.Listen("tcp", flagString(fs, "addr"))
	if err != nil {
		return err
	}
	base := flagString(fs, "base-url")
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	syms := &process.Symbols{Store: db, Blobs: blobs, CacheDir: filepath.Join(dir, "symcaches")}
	upstream := flagString(fs, "debuginfod-urls")
	if upstream == "" {
		upstream = os.Getenv("DEBUGINFOD_URLS")
	}
	if urls := strings.Fields(upstream); len(urls) > 0 {
		syms.Upstream = &process.Upstream{URLs: urls}
	}
	proc := &process.Processor{Store: db, Symbols: syms, Logger: logger, Lease: lease}
	rate := fs.Lookup("rate-limit").Value.(flag.Getter).Get().(float64)
	srv := &api.Server{
		Store: db, Blobs: blobs, Symbols: syms, Processor: proc,
		AdminToken: token, BaseURL: base, ChunkDir: filepath.Join(dir, "chunks"),
		Limits: api.Limits{EventsPerS: rate}, Logger: logger,
		UI: ui.Handler(),
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}

	procCtx, stopProc := context.WithCancel(context.Background())
	procDone := make(chan struct{})
	go func() {
		defer close(procDone)
		proc.Run(procCtx)
	}()
	maintDone := make(chan struct{})
	go func() {
		defer close(maintDone)
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			select {
			case <-procCtx.Done():
				return
			case <-t.C:
			}
			if err := db.Maintain(procCtx, retention); err != nil && procCtx.Err() == nil {
				logger.Error("database maintenance", "err", err)
			}
		}
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()

	fmt.Fprintf(e.stdout, "backtrail serving at %s\n", base)
	fmt.Fprintf(e.stdout, "  web UI:       %s/ (sign in with the admin token)\n", base)
	fmt.Fprintf(e.stdout, "  project:      default\n  DSN:          %s\n", def.DSN(base))
	if tokenFile != "" {
		fmt.Fprintf(e.stdout, "  admin token:  in %s\n", tokenFile)
	} else {
		fmt.Fprintf(e.stdout, "  admin token:  as given\n")
	}
	if fs.Lookup("demo").Value.String() == "true" {
		go func() {
			if err := loadDemo(ctx, base, def.Key, token); err != nil {
				logger.Error("demo data", "err", err)
				return
			}
			fmt.Fprintf(e.stdout, "  demo data loaded: open %s/\n", base)
		}()
	}

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			stopProc()
			return err
		}
	}
	fmt.Fprintln(e.stdout, "backtrail: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	srv.Close()
	stopProc()
	<-procDone
	<-maintDone
	return nil
}

// defaultProject returns the project "default", creating it; a replica
// starting at the same time may create it first.
func defaultProject(ctx context.Context, db *store.DB) (*server.Project, error) {
	p, err := db.ProjectByName(ctx, "default")
	if server.ErrorCode(err) != server.ENOTFOUND {
		return p, err
	}
	p, err = db.CreateProject(ctx, "default")
	if server.ErrorCode(err) == server.ECONFLICT {
		return db.ProjectByName(ctx, "default")
	}
	return p, err
}

// adminToken returns the admin token: given, from the environment, or read
// from (or generated into) dir/admin-token. file is where it is stored, if
// it was not given.
func adminToken(dir, given string) (token, file string, err error) {
	if given != "" {
		return given, "", nil
	}
	if t := os.Getenv("BACKTRAIL_ADMIN_TOKEN"); t != "" {
		return t, "", nil
	}
	file = filepath.Join(dir, "admin-token")
	if b, err := os.ReadFile(file); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, file, nil
		}
	}
	var raw [24]byte
	rand.Read(raw[:])
	token = hex.EncodeToString(raw[:])
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		return "", "", err
	}
	return token, file, nil
}
