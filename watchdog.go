package backtrail

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backtrail/backtrail/internal/backoff"
	"github.com/backtrail/backtrail/report"
)

// The hang watchdog. Code marks each iteration of an event loop (or the
// watchdog's HTTP middleware marks each request) with Begin and End; one
// goroutine per Watchdog looks at the marks:
//
//   - at rest it wakes every threshold/10 (at most 100 ms apart) and reads
//     one atomic per watched loop;
//   - once an iteration has run for half its threshold, it samples the
//     stack of the goroutine running it every SampleInterval into a ring,
//     as Matrix does for Android's main looper, so the report shows what
//     the goroutine did before the threshold, not just after;
//   - when the iteration crosses a threshold it reports: the samples, the
//     goroutine's trail, an aggregate of all goroutines and the duration so
//     far. It wakes at the threshold itself, so detection takes the
//     threshold plus the cost of one goroutine profile.
//
// A hang whose stack and threshold repeat an earlier report is suppressed
// for a window that doubles each time (SuppressBase, SuppressMax); the next
// report says how many were suppressed.

// WatchLabelKey is the pprof label the watchdog puts on a goroutine during
// a watched iteration or request, to find it in the goroutine profile.
const WatchLabelKey = "backtrail.watch"

// WatchdogOptions configure a Watchdog. Zero fields mean their defaults.
type WatchdogOptions struct {
	// Thresholds are the durations at which a running iteration is
	// reported, each crossed threshold once per iteration; default {2s}.
	Thresholds []time.Duration
	// SampleInterval is the period of stack samples once an iteration has
	// run for half the first threshold; default 50 ms, at most 1/4 of it.
	SampleInterval time.Duration
	// MaxSamples is the size of the sample ring; default 20.
	MaxSamples int
	// MaxSnapshotStacks bounds the distinct stacks in the all-goroutine
	// snapshot; default 100.
	MaxSnapshotStacks int
	// SuppressBase and SuppressMax bound the backoff window during which
	// repeats of a reported hang are suppressed; defaults 1 min and 1 h.
	SuppressBase, SuppressMax time.Duration
	// Client receives the reports; nil means the default client.
	Client *Client
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
	// Manual stops the watchdog from starting its goroutine; tests then
	// drive it with Check.
	Manual bool
}

// Watchdog watches loops and requests for hangs. It is safe for concurrent
// use; Close stops its goroutine.
type Watchdog struct {
	opts       WatchdogOptions
	thresholds []time.Duration
	interval   time.Duration
	rest       time.Duration
	suppress   backoff.Policy

	mu      sync.Mutex
	watches map[*watch]struct{}
	nextID  atomic.Uint64

	// Owned by the checking goroutine (or the caller of Check).
	checkMu     sync.Mutex
	suppression map[string]*suppression
	buf         bytes.Buffer

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type suppression struct {
	until      time.Time
	reports    int
	suppressed int
}

// watch is one loop or in-flight request.
type watch struct {
	id      uint64
	name    string
	request bool
	label   string

	start atomic.Int64  // unix nanoseconds the current iteration began; 0 when idle
	iter  atomic.Uint64 // iterations begun
	node  atomic.Pointer[trailNode]

	// Checker state.
	seen    uint64 // iteration the fields below describe
	tier    int    // thresholds already reported this iteration
	samples []hangSample
}

type hangSample struct {
	at  time.Time
	pcs []uintptr
}

// NewWatchdog returns a watchdog and starts its goroutine (unless
// opts.Manual).
func NewWatchdog(opts WatchdogOptions) *Watchdog {
	w := &Watchdog{
		opts:        opts,
		watches:     make(map[*watch]struct{}),
		suppression: make(map[string]*suppression),
		wake:        make(chan struct{}, 1),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	w.thresholds = slices.Clone(opts.Thresholds)
	slices.Sort(w.thresholds)
	w.thresholds = slices.DeleteFunc(w.thresholds, func(d time.Duration) bool { return d <= 0 })
	if len(w.thresholds) == 0 {
		w.thresholds = []time.Duration{2 * time.Second}
	}
	first := w.thresholds[0]
	w.interval = opts.SampleInterval
	if w.interval <= 0 {
		w.interval = 50 * time.Millisecond
	}
	w.interval = min(w.interval, first/4)
	w.rest = min(max(first/10, time.Millisecond), 100*time.Millisecond)
	w.suppress = backoff.Policy{Base: opts.SuppressBase, Max: opts.SuppressMax}
	if w.suppress.Base <= 0 {
		w.suppress.Base = time.Minute
	}
	if w.suppress.Max <= 0 {
		w.suppress.Max = time.Hour
	}
	if opts.Manual {
		close(w.done)
	} else {
		go w.run()
	}
	return w
}

func (w *Watchdog) now() time.Time {
	if w.opts.Now != nil {
		return w.opts.Now()
	}
	return time.Now()
}

func (w *Watchdog) client() *Client {
	if w.opts.Client != nil {
		return w.opts.Client
	}
	return CurrentClient()
}

// Close stops the watchdog's goroutine and waits for it.
func (w *Watchdog) Close() error {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	return nil
}

func (w *Watchdog) add(name string, request bool) *watch {
	wt := &watch{id: w.nextID.Add(1), name: name, request: request}
	wt.label = strconv.FormatUint(wt.id, 10)
	w.mu.Lock()
	w.watches[wt] = struct{}{}
	w.mu.Unlock()
	return wt
}

func (w *Watchdog) remove(wt *watch) {
	w.mu.Lock()
	delete(w.watches, wt)
	w.mu.Unlock()
}

// Loop is one watched event loop. Its methods are meant for the goroutine
// that runs the loop; they are cheap (two atomic stores and a label swap)
// and allocate nothing after the first iteration.
type Loop struct {
	w   *Watchdog
	wt  *watch
	ctx atomic.Pointer[loopCtx] // labels for the last trail seen, cached
}

type loopCtx struct {
	node *trailNode
	ctx  context.Context
}

// Loop starts watching a loop called name (used in reports).
func (w *Watchdog) Loop(name string) *Loop {
	return &Loop{w: w, wt: w.add(name, false)}
}

// Begin marks the start of an iteration. It labels the calling goroutine
// with WatchLabelKey (and its trail's LabelKey), replacing other labels
// until End.
func (l *Loop) Begin() {
	n := currentTrail()
	c := l.ctx.Load()
	if c == nil || c.node != n {
		base := background
		if n != nil {
			base = n.labels
		}
		c = &loopCtx{node: n, ctx: pprof.WithLabels(base, pprof.Labels(WatchLabelKey, l.wt.label))}
		l.ctx.Store(c)
	}
	pprof.SetGoroutineLabels(c.ctx)
	l.wt.node.Store(n)
	l.wt.iter.Add(1)
	l.wt.start.Store(l.w.now().UnixNano())
}

// End marks the end of an iteration and sets the goroutine's labels back
// to its trail's (or none).
func (l *Loop) End() {
	l.wt.start.Store(0)
	setLabels(l.wt.node.Load())
}

// Beat marks the end of one iteration and the start of the next, for loops
// that never wait between iterations.
func (l *Loop) Beat() { l.Begin() }

// Close stops watching the loop.
func (l *Loop) Close() {
	l.End()
	l.w.remove(l.wt)
}

// Handler returns middleware that watches each request to next: a request
// that runs past a threshold is reported as a hang named "METHOD /path".
// The request's goroutine carries WatchLabelKey (added to the labels of the
// request's context) while next runs.
func (w *Watchdog) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		wt := w.add(r.Method+" "+r.URL.Path, true)
		defer w.remove(wt)
		pprof.SetGoroutineLabels(pprof.WithLabels(r.Context(), pprof.Labels(WatchLabelKey, wt.label)))
		defer pprof.SetGoroutineLabels(r.Context())
		wt.node.Store(currentTrail())
		wt.iter.Store(1)
		wt.start.Store(w.now().UnixNano())
		next.ServeHTTP(rw, r)
	})
}

func (w *Watchdog) run() {
	defer close(w.done)
	t := time.NewTimer(w.rest)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		t.Reset(w.Check())
	}
}

// Check examines every watched loop and request once, samples and reports
// as needed, and returns how long until it needs to look again. The
// watchdog's goroutine calls it; with WatchdogOptions.Manual, tests do.
func (w *Watchdog) Check() time.Duration {
	w.checkMu.Lock()
	defer w.checkMu.Unlock()
	now := w.now()
	w.mu.Lock()
	watches := make([]*watch, 0, len(w.watches))
	for wt := range w.watches {
		watches = append(watches, wt)
	}
	w.mu.Unlock()

	sampleFrom := w.thresholds[0] / 2
	wait := w.rest
	var sampling, due []*watch
	for _, wt := range watches {
		start := wt.start.Load()
		if start == 0 {
			wt.seen, wt.tier, wt.samples = 0, 0, wt.samples[:0]
			continue
		}
		if it := wt.iter.Load(); it != wt.seen {
			wt.seen, wt.tier, wt.samples = it, 0, wt.samples[:0]
		}
		el := now.Sub(time.Unix(0, start))
		if el < sampleFrom {
			wait = min(wait, sampleFrom-el)
			continue
		}
		sampling = append(sampling, wt)
		if wt.tier < len(w.thresholds) && el >= w.thresholds[wt.tier] {
			due = append(due, wt)
		}
		next := w.interval
		if wt.tier < len(w.thresholds) {
			if d := w.thresholds[wt.tier] - el; d > 0 {
				next = min(next, d)
			}
		}
		wait = min(wait, next)
	}
	if len(sampling) == 0 {
		return max(wait, time.Millisecond)
	}
	groups, err := goroutineProfile(&w.buf)
	if err != nil {
		return w.interval
	}
	byLabel := make(map[string]*goroutineGroup, len(sampling))
	for i := range groups {
		if v, ok := groups[i].labels[WatchLabelKey]; ok {
			byLabel[v] = &groups[i]
		}
	}
	for _, wt := range sampling {
		g := byLabel[wt.label]
		if g == nil {
			continue // between iterations, or not yet labelled
		}
		wt.samples = append(wt.samples, hangSample{at: now, pcs: g.pcs})
		if max := w.maxSamples(); len(wt.samples) > max {
			wt.samples = append(wt.samples[:0], wt.samples[len(wt.samples)-max:]...)
		}
	}
	for _, wt := range due {
		el := now.Sub(time.Unix(0, wt.start.Load()))
		for wt.tier < len(w.thresholds) && el >= w.thresholds[wt.tier] {
			wt.tier++ // one report even if several thresholds passed at once
		}
		if wt.start.Load() == 0 || len(wt.samples) == 0 {
			continue // finished while we looked
		}
		w.report(wt, w.thresholds[wt.tier-1], el, groups, now)
	}
	return max(wait, time.Millisecond)
}

func (w *Watchdog) maxSamples() int {
	if w.opts.MaxSamples > 0 {
		return w.opts.MaxSamples
	}
	return 20
}

// report writes a hang report for wt unless an identical hang is within
// its suppression window.
func (w *Watchdog) report(wt *watch, threshold, el time.Duration, groups []goroutineGroup, now time.Time) {
	last := wt.samples[len(wt.samples)-1]
	top := makeStack(last.pcs, false)
	key := fmt.Sprintf("%s\x00%d\x00%016x", wt.name, threshold, top.hash)
	sup := w.suppression[key]
	if sup == nil {
		sup = &suppression{}
		w.suppression[key] = sup
	}
	if now.Before(sup.until) {
		sup.suppressed++
		return
	}
	suppressed := sup.suppressed
	sup.suppressed = 0
	sup.until = now.Add(w.suppress.Delay(sup.reports))
	sup.reports++

	c := w.client()
	r := c.newReport(report.KindHang)
	r.Timestamp = now.UTC()
	h := &report.Hang{
		DurationMS:  el.Milliseconds(),
		ThresholdMS: threshold.Milliseconds(),
		Suppressed:  suppressed,
	}
	if wt.request {
		h.Request = wt.name
	} else {
		h.Loop = wt.name
	}
	for i, s := range wt.samples {
		if i > 0 && slices.Equal(s.pcs, wt.samples[i-1].pcs) {
			h.Samples[len(h.Samples)-1].Weight++
			continue
		}
		st := makeStack(s.pcs, false)
		h.Samples = append(h.Samples, report.Sample{Timestamp: s.at.UTC(), Weight: 1, Frames: reportFrames(st.Frames()), Truncated: st.truncated})
	}
	r.Hang = h
	n := wt.node.Load()
	th := report.Thread{State: "hung", Crashed: true, Frames: reportFrames(top.Frames()), Labels: map[string]string{WatchLabelKey: wt.label}}
	if n != nil {
		th.Labels[LabelKey] = n.label
	}
	r.Threads = []report.Thread{th}
	setTrail(r, n)
	maxStacks := w.opts.MaxSnapshotStacks
	if maxStacks <= 0 {
		maxStacks = 100
	}
	r.Snapshot = snapshotReport(groups, maxStacks, now)
	r.Fingerprint = []string{"hang", wt.name, fmt.Sprintf("%016x", top.hash)}
	c.emit(r)
}
