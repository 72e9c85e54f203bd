package backtrail_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backtrail/backtrail"
	"github.com/backtrail/backtrail/report"
)

// reportSink collects reports through BeforeSend, with their arrival time.
type reportSink struct {
	ch chan sunk
}

type sunk struct {
	r  *report.Report
	at time.Time
}

func newSink() *reportSink { return &reportSink{ch: make(chan sunk, 64)} }

func (s *reportSink) before(r *report.Report) *report.Report {
	s.ch <- sunk{r, time.Now()}
	return r
}

func (s *reportSink) next(t *testing.T, within time.Duration) sunk {
	t.Helper()
	select {
	case x := <-s.ch:
		return x
	case <-time.After(within):
		t.Fatalf("no report within %v", within)
		return sunk{}
	}
}

func (s *reportSink) none(t *testing.T) {
	t.Helper()
	select {
	case x := <-s.ch:
		t.Fatalf("unexpected %s report: %+v", x.r.Kind, x.r.Hang)
	default:
	}
}

//go:noinline
func stallOn(ch chan struct{}) { <-ch }

// TestWatchdogDetectsStall: a loop iteration that stalls is reported within
// 1.2× the threshold, with the stalling function on top of the hung
// goroutine's stack and its trail.
func TestWatchdogDetectsStall(t *testing.T) {
	const threshold = 200 * time.Millisecond
	sink := newSink()
	c := newClient(t, backtrail.Options{BeforeSend: sink.before})
	w := backtrail.NewWatchdog(backtrail.WatchdogOptions{Thresholds: []time.Duration{threshold}, Client: c})
	defer w.Close()

	// The machine is shared and may be busy: take the best of five tries
	// for the latency bound, but check every report's content.
	best := time.Hour
	for try := 0; try < 5 && best > threshold*12/10; try++ {
		release := make(chan struct{})
		began := make(chan time.Time)
		name := "ui-" + itoa(try) // a repeat of the same hang would be suppressed
		c.Go(func() {
			l := w.Loop(name)
			defer l.Close()
			for i := 0; i < 3; i++ { // quick iterations are not hangs
				l.Begin()
				l.End()
			}
			began <- time.Now()
			l.Begin()
			stallOn(release)
			l.End()
		})
		t0 := <-began
		got := sink.next(t, 10*threshold)
		close(release)
		latency := got.at.Sub(t0)
		best = min(best, latency)
		r := got.r
		if r.Kind != report.KindHang || r.Hang.Loop != name || r.Hang.ThresholdMS != 200 || r.Hang.DurationMS < 200 {
			t.Fatalf("report %s %+v", r.Kind, r.Hang)
		}
		if err := r.Validate(); err != nil {
			t.Error(err)
		}
		if top := firstInApp(r.Threads[0].Frames); top != "github.com/backtrail/backtrail_test.stallOn" {
			t.Errorf("hung goroutine's top in-app frame is %s, want stallOn", top)
		}
		weight := 0
		for _, smp := range r.Hang.Samples {
			weight += smp.Weight
		}
		if weight < 2 && latency <= threshold*12/10 {
			// A watchdog woken late by a busy machine may take only one.
			t.Errorf("%d samples; sampling should start at half the threshold", weight)
		}
		if len(r.Trail) != 1 || r.Trail[0].Site == nil || r.Trail[0].Site.Function != "github.com/backtrail/backtrail_test.TestWatchdogDetectsStall" {
			t.Errorf("trail %+v", r.Trail)
		}
		if r.Snapshot == nil || r.Snapshot.Total < 2 {
			t.Errorf("snapshot %+v", r.Snapshot)
		}
	}
	if best > threshold*12/10 {
		t.Errorf("hang reported %v after it began, want at most %v", best, threshold*12/10)
	}
	t.Logf("detected after %v (threshold %v)", best, threshold)
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// stallingLoop runs iterations of a watched loop on its own goroutine, each
// stalled until the test releases it.
type stallingLoop struct {
	begin, release, ended chan struct{}
}

func startStallingLoop(w *backtrail.Watchdog, name string) *stallingLoop {
	s := &stallingLoop{make(chan struct{}), make(chan struct{}), make(chan struct{})}
	l := w.Loop(name)
	go func() {
		for range s.begin {
			l.Begin()
			s.ended <- struct{}{} // Begin is done
			stallOn(s.release)
			l.End()
			s.ended <- struct{}{}
		}
		l.Close()
	}()
	return s
}

// Begin starts an iteration and returns once the loop's goroutine is
// parked in stallOn: sampled before that, on a busy machine, its stack
// would differ from one iteration to the next, and a repeated hang would
// not be recognized.
func (s *stallingLoop) Begin() {
	s.begin <- struct{}{}
	<-s.ended
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "[chan receive") && strings.Contains(g, ".stallOn(") && strings.Contains(g, "startStallingLoop.func") {
				return
			}
		}
	}
	panic("the stalling loop's goroutine did not park in stallOn within 10 s")
}

func (s *stallingLoop) End() { s.release <- struct{}{}; <-s.ended }

// TestWatchdogSuppression drives a manual watchdog with a fake clock: the
// same hang again is suppressed for a window that doubles, and the next
// report counts what was suppressed. Tiers report once each.
func TestWatchdogSuppression(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	sink := newSink()
	c := newClient(t, backtrail.Options{BeforeSend: sink.before, Now: clock.Now})
	w := backtrail.NewWatchdog(backtrail.WatchdogOptions{
		Thresholds: []time.Duration{2 * time.Second, 5 * time.Second},
		Client:     c, Now: clock.Now, Manual: true,
	})
	defer w.Close()
	loop := startStallingLoop(w, "worker")
	defer close(loop.begin)
	t0 := clock.Now()
	at := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

	// hang runs one iteration from start to start+dur seconds, checking at
	// half a second and then every second, and returns the reports.
	hang := func(start, dur float64) []*report.Report {
		clock.Set(at(start))
		loop.Begin()
		var got []*report.Report
		for s := 0.5; s <= dur; s += 0.5 {
			clock.Set(at(start + s))
			w.Check()
		drain:
			for {
				select {
				case x := <-sink.ch:
					got = append(got, x.r)
				default:
					break drain
				}
			}
		}
		loop.End()
		w.Check()
		return got
	}
	type want struct {
		start, dur float64
		thresholds []int64 // of the reports, in order
		suppressed []int
	}
	for i, tt := range []want{
		{0, 1.5, nil, nil},                  // below the threshold
		{10, 2.5, []int64{2000}, []int{0}},  // reported; suppressed until 72.5 (1 min window)
		{20, 2.5, nil, nil},                 // suppressed
		{30, 6, []int64{5000}, []int{0}},    // 2 s tier suppressed, 5 s tier new
		{80, 2.5, []int64{2000}, []int{2}},  // window over: reported with 2 suppressed; next window 2 min, to 202
		{100, 2.5, nil, nil},                // suppressed
		{190, 2.5, nil, nil},                // suppressed: 192 < 202
		{300, 2.5, []int64{2000}, []int{2}}, // reported with 2 suppressed
	} {
		got := hang(tt.start, tt.dur)
		if len(got) != len(tt.thresholds) {
			t.Fatalf("iteration %d at %vs: %d reports, want %d", i, tt.start, len(got), len(tt.thresholds))
		}
		for k, r := range got {
			if r.Hang.ThresholdMS != tt.thresholds[k] || r.Hang.Suppressed != tt.suppressed[k] {
				t.Errorf("iteration %d report %d: threshold %d suppressed %d, want %d %d",
					i, k, r.Hang.ThresholdMS, r.Hang.Suppressed, tt.thresholds[k], tt.suppressed[k])
			}
			if firstInApp(r.Threads[0].Frames) != "github.com/backtrail/backtrail_test.stallOn" {
				t.Errorf("iteration %d: top frame %s", i, firstInApp(r.Threads[0].Frames))
			}
		}
	}
}

// TestWatchdogHTTP: the middleware reports a slow request by method and path.
func TestWatchdogHTTP(t *testing.T) {
	sink := newSink()
	c := newClient(t, backtrail.Options{BeforeSend: sink.before})
	w := backtrail.NewWatchdog(backtrail.WatchdogOptions{Thresholds: []time.Duration{100 * time.Millisecond}, Client: c})
	defer w.Close()
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(http.ResponseWriter, *http.Request) { stallOn(release) })
	mux.HandleFunc("/fast", func(http.ResponseWriter, *http.Request) {})
	srv := httptest.NewServer(w.Handler(mux))
	defer srv.Close()
	for range 3 {
		resp, err := http.Get(srv.URL + "/fast")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	done := make(chan struct{})
	go func() {
		resp, err := http.Get(srv.URL + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		close(done)
	}()
	got := sink.next(t, 2*time.Second)
	for got.r.Hang != nil && got.r.Hang.Request == "GET /fast" {
		got = sink.next(t, 2*time.Second) // a fast request the busy machine slowed down
	}
	close(release)
	<-done
	if h := got.r.Hang; h == nil || h.Request != "GET /slow" || h.Loop != "" {
		t.Fatalf("hang %+v", got.r.Hang)
	}
	if top := firstInApp(got.r.Threads[0].Frames); top != "github.com/backtrail/backtrail_test.stallOn" {
		t.Errorf("top in-app frame %s", top)
	}
	sink.none(t)
}
