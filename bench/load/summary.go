package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// result is one run's measurements.
type result struct {
	When                  time.Time
	Command               string
	Machine               string
	Commit                string
	LoadBefore, LoadAfter string
	Target                string
	Mode                  string
	Rate                  float64 `json:",omitempty"`
	K                     int
	Servers               int
	DB                    string
	ServeArgs             string `json:",omitempty"`
	Duration, Warmup      time.Duration
	Seed                  uint64
	Frames, Threads       int
	BodyBytes             int
	PrimeTime             time.Duration // first event, including the symcache build

	Load *loadStats
	// Rates in the measurement window. Processed is from the queue
	// samples: acknowledged − pending.
	AcceptedPerS, ProcessedPerS float64
	BacklogAtWindowStart        int64
	BacklogAtWindowEnd          int64
	BacklogAtEnd                int64 // when the last worker finished
	Drained                     bool
	DrainTime                   time.Duration
	DrainPerS                   float64 // backlog at the end / drain time
	// CPU in the window, in cores (CPU seconds per second).
	ServerCores, ClientCores, MachineCores float64
	Cores                                  int
	// Server CPU from the load start until drained, per acknowledged event.
	CPUPerEvent  time.Duration
	RSS          rssStats
	DBBytes      int64
	PG           *pgCost      `json:",omitempty"` // with --db postgres://…
	Kills        []killRecord `json:",omitempty"`
	Verify       *verification
	Timeline     []timelineRow
	Profile      *profile      `json:",omitempty"`
	ProfileTime  time.Duration `json:",omitempty"`
	ProfileError string        `json:",omitempty"`
}

type rssStats struct {
	Min, Max, Last, HWM int64
	// Quarters of the window: the largest RSS in each.
	Quarters [4]int64
	// Plateau: the largest RSS in the last quarter is within 5 % + 4 MB
	// of the largest in the first half.
	Plateau bool
	// SlopeMBPerMin is the least-squares slope of RSS over the second half
	// of the window.
	SlopeMBPerMin float64
}

type timelineRow struct {
	T              time.Duration
	Phase          string
	AcceptedPerS   float64
	ProcessedPerS  float64
	Pending        int64
	RSS            int64
	ServerCores    float64
	ClientCores    float64
	MachineBusyPct float64
}

func (r *result) compute(d *driver, s *sampler, loadEnd, drained time.Time) {
	res, pend := s.snapshot()
	w0, w1 := d.w0.Sub(d.t0), d.w1.Sub(d.t0)
	r.AcceptedPerS = float64(r.Load.InWindow) / r.Duration.Seconds()
	r.Cores = numCPU()
	if p0, ok := pendAt(pend, w0); ok {
		p1, _ := pendAt(pend, w1)
		r.BacklogAtWindowStart, r.BacklogAtWindowEnd = p0.pending, p1.pending
		if dt := (p1.t - p0.t).Seconds(); dt > 0 {
			r.ProcessedPerS = float64((p1.acked-p1.pending)-(p0.acked-p0.pending)) / dt
		}
	}
	if r.Drained && r.DrainTime > 0 {
		r.DrainPerS = float64(r.BacklogAtEnd) / r.DrainTime.Seconds()
	}
	if len(res) == 0 {
		return
	}
	a, b := resAt(res, w0), resAt(res, w1)
	if dt := (b.t - a.t).Seconds(); dt > 0 {
		r.ServerCores = (b.serverCPU - a.serverCPU) / dt
		r.ClientCores = (b.clientCPU - a.clientCPU) / dt
		r.MachineCores = (b.busy - a.busy) / dt
	}
	last := res[len(res)-1]
	if r.Load.Acked > 0 {
		r.CPUPerEvent = time.Duration((last.serverCPU - res[0].serverCPU) / float64(r.Load.Acked) * 1e9)
	}

	// Memory over the window.
	var win []resSample
	for _, x := range res {
		if x.t >= w0 && x.t <= w1 && x.rss > 0 {
			win = append(win, x)
		}
	}
	r.RSS.Min = math.MaxInt64
	for _, x := range res {
		if x.rss > 0 {
			r.RSS.Min = min(r.RSS.Min, x.rss)
			r.RSS.Max = max(r.RSS.Max, x.rss)
			r.RSS.HWM = max(r.RSS.HWM, x.hwm)
			r.RSS.Last = x.rss
		}
	}
	if r.RSS.Min == math.MaxInt64 {
		r.RSS.Min = 0
	}
	if len(win) >= 8 {
		for _, x := range win {
			q := min(int(float64(x.t-w0)/float64(w1-w0)*4), 3)
			r.RSS.Quarters[q] = max(r.RSS.Quarters[q], x.rss)
		}
		q := r.RSS.Quarters
		r.RSS.Plateau = float64(q[3]) <= float64(max(q[0], q[1]))*1.05+4e6
		half := win[len(win)/2:]
		var sx, sy, sxx, sxy float64
		for _, x := range half {
			t, y := x.t.Minutes(), float64(x.rss)/1e6
			sx, sy, sxx, sxy = sx+t, sy+y, sxx+t*t, sxy+t*y
		}
		n := float64(len(half))
		if den := n*sxx - sx*sx; den != 0 {
			r.RSS.SlopeMBPerMin = (n*sxy - sx*sy) / den
		}
	}

	// Timeline: about 12 rows from the load start until drained.
	end := drained.Sub(d.t0)
	step := max(time.Second, (end / 12).Round(time.Second))
	for t := time.Duration(0); t < end+step; t += step {
		t1 := min(t+step, end)
		if t1 <= t {
			break
		}
		row := timelineRow{T: t1}
		switch {
		case t1 <= w0:
			row.Phase = "warm-up"
		case t < loadEnd.Sub(d.t0):
			row.Phase = "load"
		default:
			row.Phase = "drain"
		}
		row.AcceptedPerS = float64(d.ackedBy(d.t0.Add(t1))-d.ackedBy(d.t0.Add(t))) / (t1 - t).Seconds()
		if p0, ok := pendAt(pend, t); ok {
			p1, _ := pendAt(pend, t1)
			if dt := (p1.t - p0.t).Seconds(); dt > 0 {
				row.ProcessedPerS = float64((p1.acked-p1.pending)-(p0.acked-p0.pending)) / dt
			}
			row.Pending = p1.pending
		}
		x0, x1 := resAt(res, t), resAt(res, t1)
		row.RSS = x1.rss
		if dt := (x1.t - x0.t).Seconds(); dt > 0 {
			row.ServerCores = (x1.serverCPU - x0.serverCPU) / dt
			row.ClientCores = (x1.clientCPU - x0.clientCPU) / dt
			if x1.all > x0.all {
				row.MachineBusyPct = 100 * (x1.busy - x0.busy) / (x1.all - x0.all)
			}
		}
		r.Timeline = append(r.Timeline, row)
	}
}

func (r *result) title() string {
	s := fmt.Sprintf("%s loop, K=%d", r.Mode, r.K)
	if r.Mode == "open" {
		s = fmt.Sprintf("open loop at %.0f/s, K=%d", r.Rate, r.K)
	}
	if r.Servers > 1 {
		s += fmt.Sprintf(", %d servers", r.Servers)
	}
	if len(r.Kills) > 0 {
		s += fmt.Sprintf(", kill -9 ×%d", len(r.Kills))
	}
	return s + fmt.Sprintf(", %s (+%s warm-up)", r.Duration, r.Warmup)
}

func (r *result) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n### %s — %s\n\n", r.When.Format("2006-01-02 15:04 UTC"), r.title())
	p("    %s\n\n", r.Command)
	p("- machine: %s; load average %s before, %s after\n", r.Machine, r.LoadBefore, r.LoadAfter)
	p("- server: %s, %d process(es), database %s", r.Commit, r.Servers, r.DB)
	if r.ServeArgs != "" {
		p(", serve args `%s`", r.ServeArgs)
	}
	p("\n- events: native crashes, %d thread(s) × %d frames of bare addresses, %d B average body, in %s; first event (symcache build) took %s; seed %d\n",
		r.Threads, r.Frames, r.BodyBytes, r.Target, r.PrimeTime.Round(time.Millisecond), r.Seed)
	l := r.Load
	p("\n| measure | value |\n| --- | --- |\n")
	p("| accepted (2xx) in the window | %d, **%.0f/s** |\n", l.InWindow, r.AcceptedPerS)
	p("| processed (symbolicated, grouped) in the window | **%.0f/s** (backlog %d → %d) |\n", r.ProcessedPerS, r.BacklogAtWindowStart, r.BacklogAtWindowEnd)
	drain := "did not drain"
	if r.Drained {
		drain = fmt.Sprintf("%.1f s for %d events (%.0f/s with no ingest)", r.DrainTime.Seconds(), r.BacklogAtEnd, r.DrainPerS)
	}
	p("| drain after the load | %s |\n", drain)
	p("| accept latency p50 / p90 / p99 / p99.9 / max | %s / %s / **%s** / %s / %s (%d requests) |\n",
		ms(l.Latency.P50), ms(l.Latency.P90), ms(l.Latency.P99), ms(l.Latency.P999), ms(l.Latency.Max), l.Latency.N)
	if r.Mode == "open" || l.Retries > 0 {
		p("| end-to-end latency (from %s, with retries) p50 / p99 / max | %s / %s / %s |\n",
			map[bool]string{true: "schedule", false: "first send"}[r.Mode == "open"], ms(l.EndToEnd.P50), ms(l.EndToEnd.P99), ms(l.EndToEnd.Max))
	}
	errs := "none"
	if len(l.Errors) > 0 {
		var es []string
		for k, v := range l.Errors {
			es = append(es, fmt.Sprintf("%s ×%d", k, v))
		}
		sort.Strings(es)
		errs = strings.Join(es, ", ") + fmt.Sprintf("; %d retries, %d events given up; first: `%s`", l.Retries, l.Failed, strings.ReplaceAll(l.FirstError, "`", "'"))
	}
	p("| errors | %s |\n", errs)
	if r.Mode == "open" {
		p("| events scheduled / never sent (all connections busy) | %d / %d |\n", l.Scheduled, l.Scheduled-l.Dispatched)
	}
	p("| events sent / acknowledged / duplicates | %d / %d / %d |\n", l.Sent, l.Acked, l.Dups)
	p("| server CPU in the window | %.2f of %d cores; %.0f µs per event (load start to drained) |\n", r.ServerCores, r.Cores, float64(r.CPUPerEvent)/1e3)
	p("| client CPU / whole machine busy | %.2f cores / %.2f cores |\n", r.ClientCores, r.MachineCores)
	sum := ""
	if r.Servers > 1 {
		sum = fmt.Sprintf(", summed over %d servers", r.Servers)
	}
	p("| server RSS min / max / last (VmHWM)%s | %s / %s / %s (%s) |\n", sum, mb(r.RSS.Min), mb(r.RSS.Max), mb(r.RSS.Last), mb(r.RSS.HWM))
	plateau := "no"
	if r.RSS.Plateau {
		plateau = "yes"
	}
	p("| RSS max per window quarter; plateau | %s / %s / %s / %s; %s (slope over the second half %+.1f MB/min) |\n",
		mb(r.RSS.Quarters[0]), mb(r.RSS.Quarters[1]), mb(r.RSS.Quarters[2]), mb(r.RSS.Quarters[3]), plateau, r.RSS.SlopeMBPerMin)
	p("| database size | %s (%.0f B per event) |\n", mb(r.DBBytes), float64(r.DBBytes)/float64(max(1, l.Acked)))
	for _, k := range r.Kills {
		if k.Error != "" {
			p("| kill -9 of server %d at %.1f s | restart failed: %s |\n", k.Server, k.At.Seconds(), k.Error)
			continue
		}
		p("| kill -9 of server %d at %.1f s | %d acknowledged before; back in %s |\n", k.Server, k.At.Seconds(), k.AckedBefore, k.Downtime.Round(time.Millisecond))
	}
	if v := r.Verify; v != nil {
		how := "all"
		if v.Sampled {
			how = "a random sample of"
		}
		p("| issues; sum of issue counts vs acknowledged | %d; %d vs %d (%+d) |\n", v.Issues, v.Counted, v.Acked, v.Counted-v.Acked)
		p("| acknowledged ids looked up (%s %d) | %d processed, **%d lost**, %d unprocessed, %d failed |\n", how, v.Checked, v.OK, v.Lost, v.Unprocessed, v.Failed)
		for _, x := range v.Bad {
			p("| bad id | `%s` |\n", x)
		}
	}
	if r.PG != nil {
		r.PG.markdown(p)
	}
	p("\nTimeline (rates over each interval; processed = acknowledged − pending):\n\n")
	p("| t (s) | phase | accepted/s | processed/s | pending | RSS | server cores | client cores | machine busy |\n")
	p("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, t := range r.Timeline {
		p("| %.0f | %s | %.0f | %.0f | %d | %s | %.2f | %.2f | %.0f %% |\n", t.T.Seconds(), t.Phase, t.AcceptedPerS, t.ProcessedPerS,
			t.Pending, mb(t.RSS), t.ServerCores, t.ClientCores, t.MachineBusyPct)
	}
	if r.ProfileError != "" {
		p("\nProfile failed: %s\n", r.ProfileError)
	}
	if pr := r.Profile; pr != nil && pr.Samples > 0 {
		p("\n%s", pr.markdown(r.ProfileTime, r.CPUPerEvent))
	}
	return b.String()
}

// markdown renders the attribution: stage by kind of work, in percent of
// the server's samples, then the hottest innermost functions.
func (pr *profile) markdown(d time.Duration, perEvent time.Duration) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	kindTotal := make([]int, len(pr.Kinds))
	for _, row := range pr.Matrix {
		for k, n := range row {
			kindTotal[k] += n
		}
	}
	var cols []int
	for k, n := range kindTotal {
		if float64(n) >= 0.01*float64(pr.Samples) {
			cols = append(cols, k)
		}
	}
	sort.Slice(cols, func(i, j int) bool { return kindTotal[cols[i]] > kindTotal[cols[j]] })
	pct := func(n int) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf("%.1f", 100*float64(n)/float64(pr.Samples))
	}
	p("Where the server's CPU goes (perf record -F 499 -g, %s of the window, %d samples; %% of samples; the µs column "+
		"scales the share by the %.0f µs of server CPU per event):\n\n", d, pr.Samples, float64(perEvent)/1e3)
	p("| stage | %% | µs/event |")
	for _, k := range cols {
		p(" %s |", pr.Kinds[k])
	}
	p(" rest |\n| --- | ---: | ---: |%s ---: |\n", strings.Repeat(" ---: |", len(cols)))
	type row struct {
		i, n int
	}
	var rows []row
	for i, r := range pr.Matrix {
		n := 0
		for _, x := range r {
			n += x
		}
		if n > 0 {
			rows = append(rows, row{i, n})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].n > rows[j].n })
	for _, rw := range rows {
		p("| %s | %s | %.0f |", pr.Stages[rw.i], pct(rw.n), float64(perEvent)/1e3*float64(rw.n)/float64(pr.Samples))
		rest := rw.n
		for _, k := range cols {
			p(" %s |", pct(pr.Matrix[rw.i][k]))
			rest -= pr.Matrix[rw.i][k]
		}
		p(" %s |\n", pct(rest))
	}
	p("| **all** | 100 | %.0f |", float64(perEvent)/1e3)
	rest := pr.Samples
	for _, k := range cols {
		p(" **%s** |", pct(kindTotal[k]))
		rest -= kindTotal[k]
	}
	p(" %s |\n", pct(rest))
	p("\nInnermost backtrail function on the stack (the project's own code the time is spent under, callees included):\n\n")
	p("| %% | µs/event | function |\n| ---: | ---: | --- |\n")
	for _, t := range pr.Own[:min(len(pr.Own), 20)] {
		p("| %s | %.0f | `%s` |\n", pct(t.Samples), float64(perEvent)/1e3*float64(t.Samples)/float64(pr.Samples), t.Sym)
	}
	p("\nHottest innermost functions (self time):\n\n| %% | function |\n| ---: | --- |\n")
	for _, t := range pr.Top[:min(len(pr.Top), 15)] {
		p("| %s | `%s` |\n", pct(t.Samples), t.Sym)
	}
	return b.String()
}

// growthTable shows how throughput and latency change with concurrency.
func growthTable(rs []*result) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n### Growth with concurrency — %s\n\n", rs[0].When.Format("2006-01-02 15:04 UTC"))
	p("| K | mode | accepted/s | processed/s | backlog growth/s | p50 | p90 | p99 | max | errors | server cores | µs CPU/event | RSS max | drain | load avg after |\n")
	p("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range rs {
		var errs int64
		for _, n := range r.Load.Errors {
			errs += n
		}
		growth := float64(r.BacklogAtWindowEnd-r.BacklogAtWindowStart) / r.Duration.Seconds()
		p("| %d | %s | %.0f | %.0f | %+.0f | %s | %s | %s | %s | %d | %.2f | %.0f | %s | %.1f s | %s |\n", r.K, r.Mode, r.AcceptedPerS, r.ProcessedPerS, growth,
			ms(r.Load.Latency.P50), ms(r.Load.Latency.P90), ms(r.Load.Latency.P99), ms(r.Load.Latency.Max), errs,
			r.ServerCores, float64(r.CPUPerEvent)/1e3, mb(r.RSS.Max), r.DrainTime.Seconds(), r.LoadAfter)
	}
	return b.String()
}

func ms(d time.Duration) string {
	switch {
	case d == 0:
		return "–"
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func mb(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }
