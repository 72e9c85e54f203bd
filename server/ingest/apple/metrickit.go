package apple

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/backtrail/backtrail/report"
)

// ParseMetricKit parses MetricKit JSON, an MXDiagnosticPayload or a bare
// MXCallStackTree, and returns one report per diagnostic. Call stack trees
// nest frames (binaryUUID, binaryName, offsetIntoBinaryTextSegment,
// address, sampleCount) in subFrames; threads get their heaviest path, and
// hang and dump reports keep every sampled path with its weight in
// Hang.Samples, for the server to draw a flame graph.
//
// data may also be one diagnostic (the jsonRepresentation of an
// MXCrashDiagnostic and the like: callStackTree and diagnosticMetaData),
// or a JSON array of any of these. Diagnostics map to reports as follows:
//
//	crashDiagnostics               → crash, Exception from exceptionType, signal, exceptionCode
//	hangDiagnostics                → hang, Hang.DurationMS from hangDuration
//	appLaunchDiagnostics           → hang, Hang.DurationMS from launchDuration
//	cpuExceptionDiagnostics        → dump, samples in Hang.Samples
//	diskWriteExceptionDiagnostics  → dump, samples in Hang.Samples
//	bare MXCallStackTree           → dump, samples in Hang.Samples
//
// Reports are in document order, the sections in the order above. Hang and
// dump reports carry every sampled path in Hang.Samples; crash reports
// carry none. A payload without diagnostics gives no reports and no error;
// a document that is neither a payload, a diagnostic nor a tree (an
// MXMetricPayload, say) fails with ErrUnsupported.
//
// MetricKit writes a call tree with the innermost frame as the root and
// its callers as subFrames (the per-thread tree of a crash starts at the
// crashing frame and ends at dyld's start), so a path from a root down is
// already innermost first. A path's weight is the sampleCount of its last
// frame less the sampleCounts of that frame's subFrames (at least 1 for a
// frame without subFrames). A thread's frames are its heaviest path, the
// one Instruments calls the heaviest stack trace: from the root with the
// most samples on to the subFrame with the most, the first on a tie (see
// mkConv.heaviest); Thread.Truncated is set if it was cut at MaxDepth. With callStackPerThread true each callStacks entry is a
// thread (ID = its index, Crashed = threadAttributed) and Hang.Samples
// hold the paths of the attributed threads, or of all threads if none is
// attributed; with false there is one thread, "aggregated", holding the
// heaviest path of all, and the samples hold every path. Samples have no
// time stamp and are in document order.
//
// Modules are the binaries the frames name, deduplicated by UUID, with the
// load address taken as address less offsetIntoBinaryTextSegment. A frame
// whose address is missing or 0 gets the load address plus its offset when
// another frame of the binary shows the load address.
//
// Event ids are derived from the SHA-256 of data, the diagnostic's section
// and index; time stamps come from the payload's timeStampEnd (or
// timeStampBegin), and are zero for a bare tree.
func ParseMetricKit(data []byte) ([]*report.Report, error) {
	data = trimBOM(data)
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 {
		return nil, fmt.Errorf("%w: metrickit: empty document", ErrInvalid)
	}
	var docs []json.RawMessage
	array := t[0] == '['
	if array {
		if err := json.Unmarshal(data, &docs); err != nil {
			return nil, jsonError("metrickit", err, data, 1)
		}
	} else {
		var one json.RawMessage
		if err := json.Unmarshal(data, &one); err != nil {
			return nil, jsonError("metrickit", err, data, 1)
		}
		docs = []json.RawMessage{one}
	}
	p := &mkParser{data: data, budget: maxCallSampleFrames}
	var out []*report.Report
	for i, doc := range docs {
		where := ""
		if array {
			where = fmt.Sprintf("[%d]", i)
		}
		rs, err := p.document(doc, where)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	if out == nil {
		out = []*report.Report{}
	}
	return out, nil
}

// maxCallSampleFrames bounds the frames in the samples of all reports one
// call returns, since a small tree can describe many long paths.
const maxCallSampleFrames = 4 * MaxSampleFrames

// mkSections are the diagnostic lists of an MXDiagnosticPayload.
var mkSections = []struct {
	key, name string
	kind      report.Kind
}{
	{"crashDiagnostics", "crash", report.KindCrash},
	{"hangDiagnostics", "hang", report.KindHang},
	{"appLaunchDiagnostics", "appLaunch", report.KindHang},
	{"cpuExceptionDiagnostics", "cpuException", report.KindDump},
	{"diskWriteExceptionDiagnostics", "diskWriteException", report.KindDump},
}

type mkParser struct {
	data   []byte
	budget int // sample frames left for this call
}

type mkTree struct {
	CallStacks []mkCallStack `json:"callStacks"`
	PerThread  *bool         `json:"callStackPerThread"`
}

type mkCallStack struct {
	ThreadAttributed bool       `json:"threadAttributed"`
	RootFrames       []*mkFrame `json:"callStackRootFrames"`
}

type mkFrame struct {
	BinaryUUID  text       `json:"binaryUUID"`
	BinaryName  text       `json:"binaryName"`
	Offset      *num       `json:"offsetIntoBinaryTextSegment"`
	Address     *num       `json:"address"`
	SampleCount num        `json:"sampleCount"`
	SubFrames   []*mkFrame `json:"subFrames"`
	parent      *mkFrame   // set by walk
}

func (p *mkParser) document(doc json.RawMessage, where string) ([]*report.Report, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("%w: metrickit%s: %v", ErrInvalid, where, err)
	}
	if _, ok := top["callStacks"]; ok {
		var tree mkTree
		if err := json.Unmarshal(doc, &tree); err != nil {
			return nil, fmt.Errorf("%w: metrickit%s: %v", ErrInvalid, where, err)
		}
		r, err := p.report(&tree, nil, report.KindDump, "callStackTree", where, time.Time{})
		if err != nil {
			return nil, err
		}
		return []*report.Report{r}, nil
	}
	payload := false
	for _, s := range mkSections {
		if _, ok := top[s.key]; ok {
			payload = true
		}
	}
	if !payload {
		if _, ok := top["callStackTree"]; ok {
			kind, name := inferKind(top)
			r, err := p.diagnostic(top, kind, name, where, time.Time{})
			if err != nil {
				return nil, err
			}
			return []*report.Report{r}, nil
		}
		return nil, fmt.Errorf("%w: metrickit%s: no callStacks, callStackTree or diagnostics (a metrics payload?)", ErrUnsupported, where)
	}
	var ts struct {
		Begin text `json:"timeStampBegin"`
		End   text `json:"timeStampEnd"`
	}
	if err := json.Unmarshal(doc, &ts); err != nil {
		return nil, fmt.Errorf("%w: metrickit%s: %v", ErrInvalid, where, err)
	}
	when := parseTime(string(ts.End))
	if when.IsZero() {
		when = parseTime(string(ts.Begin))
	}
	var out []*report.Report
	for _, s := range mkSections {
		raw, ok := top[s.key]
		if !ok {
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: metrickit%s.%s: %v", ErrInvalid, where, s.key, err)
		}
		for i, d := range list {
			w := fmt.Sprintf("%s.%s[%d]", where, s.key, i)
			var diag map[string]json.RawMessage
			if err := json.Unmarshal(d, &diag); err != nil {
				return nil, fmt.Errorf("%w: metrickit%s: %v", ErrInvalid, w, err)
			}
			r, err := p.diagnostic(diag, s.kind, s.name, w, when)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// inferKind tells what a lone diagnostic is from its metadata.
func inferKind(diag map[string]json.RawMessage) (report.Kind, string) {
	m := mkMeta(diag)
	switch {
	case m.has("exceptionType"), m.has("signal"), m.has("terminationReason"):
		return report.KindCrash, "crash"
	case m.has("hangDuration"):
		return report.KindHang, "hang"
	case m.has("launchDuration"):
		return report.KindHang, "appLaunch"
	case m.has("totalCPUTime"):
		return report.KindDump, "cpuException"
	case m.has("writesCaused"):
		return report.KindDump, "diskWriteException"
	}
	return report.KindDump, "callStackTree"
}

// meta looks fields up in diagnosticMetaData first and then in the
// diagnostic itself, where some producers flatten them.
type meta struct{ inner, outer map[string]json.RawMessage }

func mkMeta(diag map[string]json.RawMessage) meta {
	m := meta{outer: diag}
	_ = json.Unmarshal(diag["diagnosticMetaData"], &m.inner)
	return m
}

func (m meta) raw(k string) json.RawMessage {
	if v, ok := m.inner[k]; ok {
		return v
	}
	return m.outer[k]
}

func (m meta) has(k string) bool { return m.text(k) != "" }

// text returns a string, number or boolean field as text, else "".
func (m meta) text(k string) string {
	var t text
	if json.Unmarshal(m.raw(k), &t) != nil {
		return ""
	}
	return strings.TrimSpace(string(t))
}

// number returns a field that is a number or a string of one.
func (m meta) number(k string) (uint64, bool) {
	s := m.text(k)
	if v, ok := parseHex(s); ok {
		return v, true
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

func (p *mkParser) diagnostic(diag map[string]json.RawMessage, kind report.Kind, name, where string, when time.Time) (*report.Report, error) {
	var tree *mkTree
	if raw := diag["callStackTree"]; raw != nil && string(raw) != "null" {
		tree = new(mkTree)
		if err := json.Unmarshal(raw, tree); err != nil {
			return nil, fmt.Errorf("%w: metrickit%s.callStackTree: %v", ErrInvalid, where, err)
		}
	}
	if t := parseTime(mkMeta(diag).text("timeStamp")); !t.IsZero() {
		when = t
	}
	return p.report(tree, diag, kind, name, where, when)
}

// report builds the report of one diagnostic (diag nil for a bare tree).
func (p *mkParser) report(tree *mkTree, diag map[string]json.RawMessage, kind report.Kind, name, where string, when time.Time) (*report.Report, error) {
	m := mkMeta(diag)
	r := newReport(kind, "apple.metrickit", m.text("version"))
	r.EventID = eventID("", []byte("metrickit"), []byte(where), p.data)
	r.Timestamp = when
	var build string
	r.OS.Name, r.OS.Version, build = parseOS(m.text("osVersion"))
	r.Arch = goArch(m.text("platformArchitecture"))
	r.Release = release(m.text("bundleIdentifier"), m.text("appVersion"), m.text("appBuildVersion"))
	setTag(r, "apple.metrickit", name)
	setTag(r, "apple.model", m.text("deviceType"))
	setTag(r, "apple.os_build", build)
	setTag(r, "apple.termination", m.text("terminationReason"))
	setTag(r, "apple.vm_region", m.text("virtualMemoryRegionInfo"))
	setTag(r, "apple.cpu_time", m.text("totalCPUTime"))
	setTag(r, "apple.sampled_time", m.text("totalSampledTime"))
	setTag(r, "apple.writes_caused", m.text("writesCaused"))

	c := &mkConv{byUUID: make(map[string]int), budget: &p.budget}
	if tree != nil {
		c.convert(r, tree, kind != report.KindCrash)
	}
	switch kind {
	case report.KindCrash:
		r.Exception = mkException(m)
		if r.Exception != nil {
			if t := crashedThread(r); t != nil {
				r.Exception.ThreadID = t.ID
			}
		}
		if r.Exception == nil && len(r.Threads) == 0 {
			return nil, fmt.Errorf("%w: metrickit%s: a crash with no exception and no call stacks", ErrInvalid, where)
		}
	case report.KindHang:
		r.Hang = &report.Hang{Samples: c.samples}
		d := m.text("hangDuration")
		if name == "appLaunch" {
			d = m.text("launchDuration")
		}
		r.Hang.DurationMS, _ = parseDurationMS(d)
	case report.KindDump:
		if len(r.Threads) == 0 {
			return nil, fmt.Errorf("%w: metrickit%s: no call stacks", ErrInvalid, where)
		}
		r.Hang = &report.Hang{Samples: c.samples}
		if d, ok := parseDurationMS(m.text("totalSampledTime")); ok {
			r.Hang.DurationMS = d
		}
	}
	if c.samplesTruncated {
		setTag(r, "apple.samples_truncated", "true")
	}
	return r, nil
}

// mkException reads exceptionType, signal, exceptionCode and
// exceptionReason (an Objective-C exception's name and message).
func mkException(m meta) *report.Exception {
	typ := m.text("exceptionType")
	if n, ok := m.number("exceptionType"); ok {
		typ = machExceptionName(n)
	}
	sig := m.text("signal")
	if n, ok := m.number("signal"); ok {
		sig = signalName(n)
	}
	code := m.text("exceptionCode")
	if n, ok := m.number("exceptionCode"); ok {
		code = fmt.Sprintf("0x%016x", n)
	}
	var reason struct {
		Name     text `json:"exceptionName"`
		Type     text `json:"exceptionType"`
		Composed text `json:"composedMessage"`
	}
	var msg string
	if json.Unmarshal(m.raw("exceptionReason"), &reason) == nil {
		msg = firstOf(string(reason.Name), string(reason.Type))
		if reason.Composed != "" {
			if msg != "" {
				msg += ": "
			}
			msg += string(reason.Composed)
		}
	}
	return newException(typ, sig, code, msg)
}

// parseDurationMS reads MetricKit's measurements, such as "20 sec",
// "1,500 ms" or "2.5 min", in milliseconds. A bare number is in seconds.
func parseDurationMS(s string) (int64, bool) {
	s = strings.TrimSpace(strings.ReplaceAll(s, ",", ""))
	i := 0
	for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
		i++
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	var scale float64
	switch strings.ToLower(strings.TrimSpace(s[i:])) {
	case "", "s", "sec", "secs", "second", "seconds":
		scale = 1000
	case "ms", "msec", "msecs", "millisecond", "milliseconds":
		scale = 1
	case "us", "µs", "μs", "usec", "microsecond", "microseconds":
		scale = 0.001
	case "min", "mins", "minute", "minutes":
		scale = 60000
	case "h", "hr", "hrs", "hour", "hours":
		scale = 3600000
	default:
		return 0, false
	}
	ms := v * scale
	if ms >= math.MaxInt64 || ms != ms {
		return math.MaxInt64, true
	}
	return int64(ms), true
}

// mkConv turns one call stack tree into threads, modules and samples.
type mkConv struct {
	byUUID           map[string]int // module key → index in bases, names
	keys             []string
	names            []string
	bases            []uint64
	hasBase          []bool
	samples          []report.Sample
	sampleFrames     int
	samplesTruncated bool
	budget           *int // sample frames left for the whole call
}

// moduleKey identifies a frame's binary: its UUID in hex, the UUID text as
// given when it does not parse, or, without a UUID, its name after a NUL.
func moduleKey(f *mkFrame) string {
	if h, ok := parseUUID(string(f.BinaryUUID)); ok {
		return h
	}
	if u := strings.TrimSpace(string(f.BinaryUUID)); u != "" {
		return u
	}
	return "\x00" + strings.TrimSpace(string(f.BinaryName))
}

// collect records the binaries of f and its subFrames down to MaxDepth.
func (c *mkConv) collect(f *mkFrame, depth int) {
	if f.BinaryUUID != "" || f.BinaryName != "" {
		key := moduleKey(f)
		i, ok := c.byUUID[key]
		if !ok {
			i = len(c.keys)
			c.byUUID[key] = i
			c.keys = append(c.keys, key)
			c.names = append(c.names, "")
			c.bases = append(c.bases, 0)
			c.hasBase = append(c.hasBase, false)
		}
		if c.names[i] == "" {
			c.names[i] = strings.TrimSpace(string(f.BinaryName))
		}
		if !c.hasBase[i] && f.Address != nil && f.Offset != nil && *f.Address != 0 && *f.Address >= *f.Offset {
			c.bases[i], c.hasBase[i] = uint64(*f.Address-*f.Offset), true
		}
	}
	if depth >= MaxDepth {
		return
	}
	for _, s := range f.SubFrames {
		if s != nil {
			c.collect(s, depth+1)
		}
	}
}

// modules lists the binaries in the order they first appear.
func (c *mkConv) modules(r *report.Report) {
	for i, key := range c.keys {
		if len(r.Modules) >= MaxModules {
			if r.Truncated == nil {
				r.Truncated = new(report.Truncated)
			}
			r.Truncated.Modules = true
			break
		}
		m := report.Module{Type: "macho", Name: c.names[i]}
		if len(key) == 32 {
			if h, ok := parseUUID(key); ok {
				setUUID(&m, h)
			}
		}
		if c.hasBase[i] {
			m.ImageAddr = report.Addr(c.bases[i])
		}
		r.Modules = append(r.Modules, m)
	}
}

func (c *mkConv) frame(f *mkFrame) report.Frame {
	fr := report.Frame{Module: strings.TrimSpace(string(f.BinaryName))}
	i, known := c.byUUID[moduleKey(f)]
	if fr.Module == "" && known {
		fr.Module = c.names[i]
	}
	if f.Address != nil {
		fr.Addr = report.Addr(*f.Address)
	}
	if fr.Addr == 0 && f.Offset != nil && known && c.hasBase[i] {
		if a := c.bases[i] + uint64(*f.Offset); a >= c.bases[i] {
			fr.Addr = report.Addr(a)
		}
	}
	if fr.Addr == 0 {
		fr.Function = unknownFrame
	}
	return fr
}

// path returns the frames from the root down to end, innermost first.
func (c *mkConv) path(end *mkFrame) []report.Frame {
	n := 0
	for f := end; f != nil; f = f.parent {
		n++
	}
	frames := make([]report.Frame, n)
	for f := end; f != nil; f = f.parent {
		n--
		frames[n] = c.frame(f)
	}
	return frames
}

// heaviest returns the heaviest path from roots, innermost first: it
// starts at the root with the largest sampleCount and goes on to the
// subFrame with the largest sampleCount, the first one on a tie, until it
// reaches a frame without subFrames, or one where more samples ended than
// went on to any subFrame, or MaxDepth, where it reports truncated.
func (c *mkConv) heaviest(roots []*mkFrame) (frames []report.Frame, truncated bool) {
	f := heaviestOf(roots)
	for depth := 1; f != nil; depth++ {
		frames = append(frames, c.frame(f))
		next := heaviestOf(f.SubFrames)
		if next == nil {
			break
		}
		if depth >= MaxDepth {
			return frames, true
		}
		var sum uint64
		for _, s := range f.SubFrames {
			if s != nil {
				sum = satAdd(sum, uint64(s.SampleCount))
			}
		}
		if uint64(f.SampleCount) > sum && uint64(f.SampleCount)-sum > uint64(next.SampleCount) {
			break
		}
		f = next
	}
	return frames, false
}

// heaviestOf returns the first frame with the largest sampleCount.
func heaviestOf(fs []*mkFrame) *mkFrame {
	var h *mkFrame
	for _, f := range fs {
		if f != nil && (h == nil || f.SampleCount > h.SampleCount) {
			h = f
		}
	}
	return h
}

// walk visits f, at depth 1 for a root, and calls leaf for the end of
// every path with the samples that ended there.
func (c *mkConv) walk(f, parent *mkFrame, depth int, leaf func(end *mkFrame, weight uint64, truncated bool)) {
	f.parent = parent
	n := uint64(f.SampleCount)
	var subs int
	for _, s := range f.SubFrames {
		if s != nil {
			subs++
		}
	}
	if subs == 0 || depth >= MaxDepth {
		leaf(f, max(n, 1), subs > 0)
		return
	}
	var sum uint64
	for _, s := range f.SubFrames {
		if s != nil {
			sum = satAdd(sum, uint64(s.SampleCount))
			c.walk(s, f, depth+1, leaf)
		}
	}
	if n > sum {
		leaf(f, n-sum, false)
	}
}

// sample records the path ending at end, if the limits allow.
func (c *mkConv) sample(end *mkFrame, w uint64, truncated bool) {
	n := 0
	for f := end; f != nil; f = f.parent {
		n++
	}
	if len(c.samples) >= MaxSamples || c.sampleFrames+n > MaxSampleFrames || *c.budget < n {
		c.samplesTruncated = true
		return
	}
	c.sampleFrames += n
	*c.budget -= n
	c.samples = append(c.samples, report.Sample{
		Weight:    clampInt(w),
		Frames:    c.path(end),
		Truncated: truncated,
	})
}

// convert fills r's modules and threads from t and, when samples is set,
// collects the sampled paths.
func (c *mkConv) convert(r *report.Report, t *mkTree, samples bool) {
	for _, cs := range t.CallStacks {
		for _, root := range cs.RootFrames {
			if root != nil {
				c.collect(root, 1)
			}
		}
	}
	c.modules(r)
	perThread := t.PerThread == nil || *t.PerThread
	attributed := false
	for _, cs := range t.CallStacks {
		attributed = attributed || cs.ThreadAttributed
	}
	var all []*mkFrame // the roots of every call stack, for an aggregated tree
	for i, cs := range t.CallStacks {
		if samples && (!perThread || cs.ThreadAttributed || !attributed) {
			for _, root := range cs.RootFrames {
				if root != nil {
					c.walk(root, nil, 1, c.sample)
				}
			}
		}
		if !perThread {
			all = append(all, cs.RootFrames...)
			continue
		}
		if i >= MaxThreads {
			truncateThreads(r)
			continue
		}
		th := report.Thread{ID: uint64(i), Crashed: cs.ThreadAttributed}
		th.Frames, th.Truncated = c.heaviest(cs.RootFrames)
		r.Threads = append(r.Threads, th)
	}
	if !perThread {
		th := report.Thread{Name: "aggregated", Crashed: true}
		th.Frames, th.Truncated = c.heaviest(all)
		r.Threads = append(r.Threads, th)
	}
}
