package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// bucket is the resolution of the acknowledgement timeline.
const bucket = 100 * time.Millisecond

// retryGrace is how long after the load ends a worker keeps retrying an
// event the server has not acknowledged.
const retryGrace = 60 * time.Second

// A driver sends the load: k workers, each with its own HTTP/1.1
// keep-alive connection, posting reports to /api/v1/reports. Closed loop:
// each worker sends its next event when the previous one is answered.
// Open loop: events are scheduled at a fixed rate whatever the answers,
// and a worker takes the next scheduled one when it is free, so latency
// measured from the schedule includes the wait for a free connection
// (no coordinated omission).
type driver struct {
	mode   string
	rate   float64
	k      int
	urls   []string // one ingest URL per replica; worker i uses i mod len
	key    string
	bodies []eventBody
	nonce  uint64 // the run's event id prefix

	next   atomic.Uint64 // event counter: the id suffix
	acked  atomic.Int64
	t0     time.Time // load start
	w0, w1 time.Time // measurement window: warm-up ends, load ends
	acks   []atomic.Int64

	workers    []*worker
	scheduled  int64 // open loop: events due in the load
	dispatched int64 // open loop: events handed to a connection
}

// worker is one connection's state; only its goroutine touches it until
// the load is over.
type worker struct {
	d      *driver
	url    string
	client *http.Client
	rng    *rand.Rand

	lat  []int32  // µs: accept latency of each acknowledged attempt in the window
	e2e  []int32  // µs: from the scheduled (open) or first (closed) send to the acknowledgement, in the window
	ids  []uint64 // counters of acknowledged events
	win  int      // acknowledged in the window
	sent int
	// dups counts acknowledgements saying the event was already stored:
	// a retry of an event whose first attempt was committed before the
	// answer was lost.
	dups, retries, failed int
	errs                  map[string]int
	firstErr              string
}

func newDriver(mode string, rate float64, k int, urls []string, key string, bodies []eventBody, seed uint64, length time.Duration) *driver {
	d := &driver{mode: mode, rate: rate, k: k, urls: urls, key: key, bodies: bodies,
		acks: make([]atomic.Int64, int((length+retryGrace)/bucket)+2)}
	rng := rand.New(rand.NewPCG(seed, 0x10ad))
	d.nonce = rng.Uint64()
	for i := range k {
		tr := &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxConnsPerHost:     1,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		}
		d.workers = append(d.workers, &worker{d: d, url: urls[i%len(urls)] + "/api/v1/reports",
			client: &http.Client{Transport: tr, Timeout: 30 * time.Second},
			rng:    rand.New(rand.NewPCG(seed, uint64(i)+1)), errs: map[string]int{}})
	}
	return d
}

// eventID returns the id of event n: the run's nonce and the counter, as
// 32 hex digits.
func (d *driver) eventID(n uint64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], d.nonce)
	binary.BigEndian.PutUint64(b[8:], n)
	return hex.EncodeToString(b[:])
}

// setClock starts the load's clock: the load starts now, the measurement
// window after warmup, and the load ends duration later. Call it before
// anything reads the clock, and run right after it.
func (d *driver) setClock(warmup, duration time.Duration) {
	d.t0 = time.Now()
	d.w0 = d.t0.Add(warmup)
	d.w1 = d.w0.Add(duration)
}

// run sends the load set by setClock and returns when every worker has
// finished its last event (or given up on it).
func (d *driver) run(ctx context.Context) {
	var wg sync.WaitGroup
	switch d.mode {
	case "open":
		tickets := make(chan time.Time, 4*d.k)
		for _, w := range d.workers {
			wg.Go(func() {
				for at := range tickets {
					w.event(ctx, at)
				}
			})
		}
		// Dispatch until the window ends: events still due then were
		// never sent, because every connection was busy (the server
		// answered slower than the rate).
		interval := time.Duration(float64(time.Second) / d.rate)
		total := int64(d.w1.Sub(d.t0) / interval)
		deadline := time.NewTimer(time.Until(d.w1))
		var n int64
	schedule:
		for n < total {
			due := min(int64(time.Since(d.t0)/interval)+1, total)
			for ; n < due; n++ {
				select {
				case tickets <- d.t0.Add(time.Duration(n) * interval):
				case <-deadline.C:
					break schedule
				case <-ctx.Done():
					break schedule
				}
			}
			select {
			case <-time.After(time.Millisecond):
			case <-deadline.C:
				break schedule
			case <-ctx.Done():
				break schedule
			}
		}
		deadline.Stop()
		d.scheduled, d.dispatched = total, n
		close(tickets)
	default:
		for _, w := range d.workers {
			wg.Go(func() {
				for ctx.Err() == nil && time.Now().Before(d.w1) {
					w.event(ctx, time.Now())
				}
			})
		}
	}
	wg.Wait()
}

// event sends one new event until the server acknowledges it, retrying
// network errors, 408, 429 and 5xx answers the way the SDKs do (with the
// same event id, so a retry of a stored event is answered as a
// duplicate), and gives up retryGrace after the load has ended.
func (w *worker) event(ctx context.Context, scheduled time.Time) {
	d := w.d
	n := d.next.Add(1)
	b := &d.bodies[w.rng.IntN(len(d.bodies))]
	body := make([]byte, len(b.data))
	copy(body, b.data)
	id := d.eventID(n)
	copy(body[b.idOff:], id)
	w.sent++
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			w.retries++
			if time.Now().After(d.w1.Add(retryGrace)) || ctx.Err() != nil {
				w.failed++
				return
			}
			backoff := min(10*time.Millisecond<<min(attempt, 10), time.Second)
			time.Sleep(backoff/2 + time.Duration(w.rng.Int64N(int64(backoff/2))))
		}
		req, err := http.NewRequestWithContext(ctx, "POST", w.url, bytes.NewReader(body))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Authorization", "Bearer "+d.key)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := w.client.Do(req)
		var answer []byte
		if err == nil {
			answer, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		end := time.Now()
		if err != nil {
			w.fail(errClass(err), err.Error())
			continue
		}
		if resp.StatusCode/100 != 2 {
			w.fail(fmt.Sprintf("HTTP %d", resp.StatusCode), string(answer))
			switch resp.StatusCode {
			case http.StatusRequestTimeout, http.StatusTooManyRequests:
				continue
			}
			if resp.StatusCode >= 500 {
				continue
			}
			w.failed++
			return
		}
		var a struct {
			IDs       []string `json:"ids"`
			Duplicate []bool   `json:"duplicate"`
		}
		if err := json.Unmarshal(answer, &a); err != nil || len(a.IDs) != 1 || a.IDs[0] != id {
			w.fail("bad answer", string(answer))
			w.failed++
			return
		}
		if len(a.Duplicate) == 1 && a.Duplicate[0] {
			w.dups++
		}
		w.ids = append(w.ids, n)
		d.acked.Add(1)
		if i := int(end.Sub(d.t0) / bucket); i < len(d.acks) {
			d.acks[i].Add(1)
		}
		if !end.Before(d.w0) && end.Before(d.w1) {
			w.win++
			w.lat = append(w.lat, int32(end.Sub(start)/time.Microsecond))
			w.e2e = append(w.e2e, int32(end.Sub(scheduled)/time.Microsecond))
		}
		return
	}
}

func (w *worker) fail(class, detail string) {
	w.errs[class]++
	if w.firstErr == "" {
		if len(detail) > 200 {
			detail = detail[:200] + "…"
		}
		w.firstErr = class + ": " + detail
	}
}

// errClass names a network error for the error table.
func errClass(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed (EOF)"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "network error"
}

// loadStats is the driver's result once the load is over.
type loadStats struct {
	Sent, Acked, InWindow, Dups, Retries, Failed int64
	Scheduled, Dispatched                        int64            `json:",omitempty"`
	Errors                                       map[string]int64 `json:",omitempty"`
	FirstError                                   string           `json:",omitempty"`
	Latency, EndToEnd                            percentiles
	ids                                          []uint64
}

type percentiles struct {
	N                        int
	P50, P90, P99, P999, Max time.Duration
}

func percentilesOf(us []int32) percentiles {
	if len(us) == 0 {
		return percentiles{}
	}
	sort.Slice(us, func(i, j int) bool { return us[i] < us[j] })
	at := func(q float64) time.Duration {
		i := int(q * float64(len(us)))
		if i >= len(us) {
			i = len(us) - 1
		}
		return time.Duration(us[i]) * time.Microsecond
	}
	return percentiles{len(us), at(0.50), at(0.90), at(0.99), at(0.999), time.Duration(us[len(us)-1]) * time.Microsecond}
}

func (d *driver) stats() *loadStats {
	s := &loadStats{Errors: map[string]int64{}, Scheduled: d.scheduled, Dispatched: d.dispatched}
	var lat, e2e []int32
	for _, w := range d.workers {
		s.Sent += int64(w.sent)
		s.Acked += int64(len(w.ids))
		s.InWindow += int64(w.win)
		s.Dups += int64(w.dups)
		s.Retries += int64(w.retries)
		s.Failed += int64(w.failed)
		for k, v := range w.errs {
			s.Errors[k] += int64(v)
		}
		if s.FirstError == "" {
			s.FirstError = w.firstErr
		}
		lat = append(lat, w.lat...)
		e2e = append(e2e, w.e2e...)
		s.ids = append(s.ids, w.ids...)
	}
	s.Latency, s.EndToEnd = percentilesOf(lat), percentilesOf(e2e)
	return s
}

// ackedBy returns the events acknowledged from the load start until t.
func (d *driver) ackedBy(t time.Time) int64 {
	var n int64
	last := int(t.Sub(d.t0) / bucket)
	for i := 0; i < len(d.acks) && i < last; i++ {
		n += d.acks[i].Load()
	}
	return n
}

// closeIdle closes the workers' connections.
func (d *driver) closeIdle() {
	for _, w := range d.workers {
		w.client.CloseIdleConnections()
	}
}
