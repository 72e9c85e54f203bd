package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backtrail/backtrail/internal/testenv"
)

// clockTick is USER_HZ, the unit of CPU times in /proc: 100 on every
// Linux configuration Go runs on.
const clockTick = 100

// A sampler records, every 200 ms, the servers' memory (VmRSS, VmHWM from
// /proc/PID/status) and CPU time (/proc/PID/stat), the client's own CPU
// time and the machine's busy time (/proc/stat); and every 250 ms the
// queue length from /healthz together with the acknowledged count, from
// which processed = acknowledged − pending. (Events stored but not yet
// acknowledged make processed an overestimate by at most the number of
// connections.)
type sampler struct {
	cl *cluster
	d  *driver
	t0 time.Time

	mu   sync.Mutex // guards res and pend
	res  []resSample
	pend []pendSample

	// CPU accounting across restarts, per replica; only the resource
	// goroutine touches it.
	lastPID   []int64
	lastTicks []int64
	cpuTicks  int64

	stop chan struct{}
	wg   sync.WaitGroup
}

type resSample struct {
	t         time.Duration // since t0
	rss, hwm  int64         // bytes, summed over the running replicas
	serverCPU float64       // seconds, cumulative over all replicas and restarts
	clientCPU float64       // seconds, cumulative
	busy, all float64       // machine CPU seconds from /proc/stat, cumulative
	acked     int64
}

type pendSample struct {
	t       time.Duration
	pending int64
	acked   int64
}

func newSampler(cl *cluster, d *driver) *sampler {
	return &sampler{cl: cl, d: d, lastPID: make([]int64, len(cl.servers)), lastTicks: make([]int64, len(cl.servers)), stop: make(chan struct{})}
}

func (s *sampler) start(ctx context.Context, t0 time.Time) {
	s.t0 = t0
	s.wg.Go(func() {
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			s.sampleResources()
			select {
			case <-tk.C:
			case <-s.stop:
				s.sampleResources()
				return
			}
		}
	})
	s.wg.Go(func() {
		tk := time.NewTicker(250 * time.Millisecond)
		defer tk.Stop()
		for {
			n, err := s.cl.anyPending(ctx)
			if err == nil {
				p := pendSample{time.Since(s.t0), n, s.d.acked.Load()}
				s.mu.Lock()
				s.pend = append(s.pend, p)
				s.mu.Unlock()
			}
			select {
			case <-tk.C:
			case <-s.stop:
				return
			}
		}
	})
}

func (s *sampler) close() {
	close(s.stop)
	s.wg.Wait()
}

func (s *sampler) sampleResources() {
	r := resSample{t: time.Since(s.t0), acked: s.d.acked.Load()}
	for i, p := range s.cl.servers {
		pid := p.pid.Load()
		if pid == 0 {
			continue
		}
		rss, hwm := procMem(pid)
		r.rss += rss
		r.hwm += hwm
		ticks, ok := procTicks(pid)
		if !ok {
			continue
		}
		if pid == s.lastPID[i] {
			s.cpuTicks += ticks - s.lastTicks[i]
		} else {
			s.cpuTicks += ticks // a new process: all its time is new
		}
		s.lastPID[i], s.lastTicks[i] = pid, ticks
	}
	r.serverCPU = float64(s.cpuTicks) / clockTick
	r.clientCPU = testenv.CPUTime().Seconds()
	r.busy, r.all = machineCPU()
	s.mu.Lock()
	s.res = append(s.res, r)
	s.mu.Unlock()
}

// procMem reads VmRSS and VmHWM of a process, in bytes.
func procMem(pid int64) (rss, hwm int64) {
	b, err := os.ReadFile("/proc/" + strconv.FormatInt(pid, 10) + "/status")
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	return rss, hwm
}

// procTicks reads a process's user plus system CPU time in clock ticks
// (fields 14 and 15 of /proc/PID/stat).
func procTicks(pid int64) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.FormatInt(pid, 10) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, state
	if len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st, true
}

// machineCPU returns the busy and total CPU seconds of the machine since
// boot, from the first line of /proc/stat (idle and iowait are not busy).
func machineCPU() (busy, all float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	for i, x := range f[1:] {
		v, _ := strconv.ParseFloat(x, 64)
		if i >= 8 { // guest times are already in user and nice
			break
		}
		all += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy / clockTick, all / clockTick
}

// snapshot returns copies of the samples.
func (s *sampler) snapshot() ([]resSample, []pendSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]resSample(nil), s.res...), append([]pendSample(nil), s.pend...)
}

// resAt returns the resource sample nearest to t.
func resAt(rs []resSample, t time.Duration) resSample {
	best := rs[0]
	for _, r := range rs {
		if abs(r.t-t) < abs(best.t-t) {
			best = r
		}
	}
	return best
}

// pendAt returns the queue sample nearest to t.
func pendAt(ps []pendSample, t time.Duration) (pendSample, bool) {
	if len(ps) == 0 {
		return pendSample{}, false
	}
	best := ps[0]
	for _, p := range ps {
		if abs(p.t-t) < abs(best.t-t) {
			best = p
		}
	}
	return best, true
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// loadAvg returns /proc/loadavg's three averages.
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func numCPU() int { return runtime.NumCPU() }
