// Command tour shows each feature of the backtrail SDK in one run: trails
// across hand-offs, a panic in a worker pool reported with its submitter, a
// stalled loop caught by the watchdog, and audited sensitive calls. Every
// report goes to a spool directory, which the tour lists at the end.
//
//	go run ./examples/tour [-spool DIR]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/backtrail/backtrail"
	"github.com/backtrail/backtrail/report"
)

func main() {
	spool := flag.String("spool", "", "spool directory (default: a new temporary directory)")
	flag.Parse()
	if *spool == "" {
		dir, err := os.MkdirTemp("", "backtrail-tour-")
		if err != nil {
			log.Fatal(err)
		}
		*spool = dir
	}
	// No Endpoint: reports stay in the spool. RecoverPanics keeps the tour
	// running after the demonstration panic; by default it would crash.
	if err := backtrail.Init(backtrail.Options{SpoolDir: *spool, Release: "tour@1.0", RecoverPanics: true}); err != nil {
		log.Fatal(err)
	}
	defer backtrail.Close()

	p := newPool(2)
	trails(p)
	panics(p)
	p.close()
	hang()
	audit()
	list()
	fmt.Printf("\nreports are in %s\n", *spool)
}

// pool is an ordinary worker pool: jobs arrive on a channel with nothing of
// their submitter's context.
type pool struct {
	jobs chan func()
	wg   sync.WaitGroup
}

func newPool(n int) *pool {
	p := &pool{jobs: make(chan func())}
	for range n {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for job := range p.jobs {
				job()
			}
		}()
	}
	return p
}

func (p *pool) close() { close(p.jobs); p.wg.Wait() }

func section(title string) { fmt.Printf("\n== %s\n", title) }

// trails hands work off three times and prints the trail the last piece of
// work sees.
func trails(p *pool) {
	section("trails: Go → pool (Wrap) → AfterFunc")
	done := make(chan []backtrail.Stack)
	backtrail.Go(func() { // hop 3
		p.jobs <- backtrail.Wrap(func() { // hop 2
			backtrail.AfterFunc(10*time.Millisecond, func() { // hop 1
				done <- backtrail.Trail()
			})
		})
	})
	for i, s := range <-done {
		f := s.Frames()[0]
		fmt.Printf("  hop %d submitted at %s (%s:%d)\n", i+1, f.Function, filepath.Base(f.File), f.Line)
	}
}

// panics submits a job that panics in a pool worker.
func panics(p *pool) {
	section("panic in a pool worker")
	p.jobs <- backtrail.Wrap(func() {
		var m map[string]int
		m["x"]++ // panics: assignment to entry in nil map
	})
	time.Sleep(10 * time.Millisecond)
	fmt.Println("  recorded; see the crash report below: its trail names panics() as the submitter")
}

// hang runs a watched loop whose third iteration stalls.
func hang() {
	section("watchdog: a loop iteration stalls for 600 ms (threshold 300 ms)")
	w := backtrail.NewWatchdog(backtrail.WatchdogOptions{Thresholds: []time.Duration{300 * time.Millisecond}})
	defer w.Close()
	l := w.Loop("event-loop")
	defer l.Close()
	for i := range 4 {
		l.Begin()
		if i == 2 {
			slowHandler()
		}
		l.End()
	}
	fmt.Println("  done; the hang report below has the stack sampled during the stall")
}

//go:noinline
func slowHandler() { time.Sleep(600 * time.Millisecond) }

// audit opens files from two call sites and prints the counts per site.
func audit() {
	section("audit: file opens counted per call site")
	exe, _ := os.Executable()
	for range 3 {
		if f, err := backtrail.AuditOpen(exe); err == nil { // site A
			f.Close()
		}
	}
	if f, err := backtrail.AuditOpen(exe); err == nil { // site B
		f.Close()
	}
	for _, r := range backtrail.AuditSnapshot() {
		f := firstInApp(r.Stack.Frames())
		fmt.Printf("  %-10s %d× from %s:%d\n", r.Kind, r.Count, f.Function, f.Line)
	}
	if err := backtrail.ReportAudit(); err != nil {
		log.Fatal(err)
	}
}

func firstInApp(frames []backtrail.Frame) backtrail.Frame {
	for _, f := range frames {
		if f.InApp {
			return f
		}
	}
	return frames[0]
}

// list prints a summary of every spooled report.
func list() {
	section("spooled reports")
	reports, err := backtrail.CurrentClient().Pending()
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range reports {
		fmt.Printf("  %s %s\n", r.Kind, r.EventID)
		switch r.Kind {
		case report.KindCrash:
			fmt.Printf("    %s: %s\n", r.Exception.Type, r.Exception.Value)
			fmt.Printf("    at %s\n", topInApp(r.Threads[0].Frames))
			for i, h := range r.Trail {
				fmt.Printf("    trail[%d] submitted by %s:%d\n", i, h.Site.Function, h.Site.Line)
			}
		case report.KindHang:
			samples := 0
			for _, s := range r.Hang.Samples {
				samples += s.Weight
			}
			fmt.Printf("    loop %q ran %d ms (threshold %d ms), %d samples\n", r.Hang.Loop, r.Hang.DurationMS, r.Hang.ThresholdMS, samples)
			fmt.Printf("    stalled in %s\n", topInApp(r.Threads[0].Frames))
			fmt.Printf("    snapshot: %d goroutines in %d distinct stacks\n", r.Snapshot.Total, len(r.Snapshot.Stacks))
		case report.KindAudit:
			for _, e := range r.Audit.Entries {
				fmt.Printf("    %s ×%d at %s\n", e.Kind, e.Count, topInApp(e.Frames))
			}
		}
	}
}

func topInApp(frames []report.Frame) string {
	for _, f := range frames {
		if f.InApp {
			return fmt.Sprintf("%s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
		}
	}
	if len(frames) > 0 {
		return frames[0].Function
	}
	return "?"
}
