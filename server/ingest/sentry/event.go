package sentry

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/backtrail/backtrail/report"
)

// Bounds on what Event puts in a report, so that its size follows the
// payload's and not the number of JSON values in it. Stacks keep their
// innermost frames and set Truncated.
const (
	maxFrames  = 250  // per stack
	maxThreads = 1000 // per report; the crashed thread is always kept
	maxModules = 4096 // per report
)

// redacted is the function name iOS crash reporters write for system
// symbols they may not show; the frame still needs symbolizing.
const redacted = "<redacted>"

// The parts of Sentry's event payload that Event reads ("Event Payloads" and
// its interfaces at develop.sentry.dev/sdk/data-model/event-payloads/).
// Fields that may take several shapes are kept raw and decoded by convert,
// which knows their path for error messages.
type eventJSON struct {
	EventID     json.RawMessage `json:"event_id"`
	Type        str             `json:"type"`
	Level       str             `json:"level"`
	Platform    str             `json:"platform"`
	Timestamp   timestamp       `json:"timestamp"`
	Release     str             `json:"release"`
	Dist        str             `json:"dist"`
	Environment str             `json:"environment"`
	ServerName  str             `json:"server_name"`
	Logger      str             `json:"logger"`
	Transaction str             `json:"transaction"`
	Message     message         `json:"message"`
	LogEntry    message         `json:"logentry"`
	Exception   json.RawMessage `json:"exception"`  // {"values": [...]} or [...]
	Threads     json.RawMessage `json:"threads"`    // {"values": [...]} or [...]
	Stacktrace  json.RawMessage `json:"stacktrace"` // legacy: the stack of a message
	DebugMeta   json.RawMessage `json:"debug_meta"`
	Contexts    json.RawMessage `json:"contexts"`
	SDK         json.RawMessage `json:"sdk"`
	Tags        json.RawMessage `json:"tags"`
	Fingerprint json.RawMessage `json:"fingerprint"`
}

type exceptionJSON struct {
	Type       str             `json:"type"`
	Value      str             `json:"value"`
	ThreadID   id              `json:"thread_id"`
	Mechanism  *mechanismJSON  `json:"mechanism"`
	Stacktrace *stacktraceJSON `json:"stacktrace"`
}

type mechanismJSON struct {
	Type      str  `json:"type"`
	Handled   flag `json:"handled"`
	Synthetic flag `json:"synthetic"`
	Meta      *struct {
		Signal        json.RawMessage `json:"signal"`
		MachException json.RawMessage `json:"mach_exception"`
	} `json:"meta"`
	// Older Cocoa SDKs (sentry-swift 1.x, as in the CrashProbe events) put
	// the signal and Mach exception at the top level.
	PosixSignal   json.RawMessage `json:"posix_signal"`
	MachException json.RawMessage `json:"mach_exception"`
}

type threadJSON struct {
	ID id `json:"id"`
	// UUID is the thread id as sentry-swift 1.x wrote it, in the CrashProbe
	// events; it is read when id is missing.
	UUID       id              `json:"uuid"`
	Name       str             `json:"name"`
	State      str             `json:"state"`
	Crashed    flag            `json:"crashed"`
	Current    flag            `json:"current"`
	Stacktrace *stacktraceJSON `json:"stacktrace"`
}

type stacktraceJSON struct {
	Frames    []*frameJSON   `json:"frames"`
	Registers map[string]num `json:"registers"`
}

type frameJSON struct {
	Function        str  `json:"function"`
	RawFunction     str  `json:"raw_function"`
	Symbol          str  `json:"symbol"`
	Module          str  `json:"module"`
	Package         str  `json:"package"`
	Filename        str  `json:"filename"`
	AbsPath         str  `json:"abs_path"`
	Lineno          num  `json:"lineno"`
	InApp           flag `json:"in_app"`
	InstructionAddr num  `json:"instruction_addr"`
	AddrMode        str  `json:"addr_mode"`
	Platform        str  `json:"platform"`
}

type imageJSON struct {
	Type        str `json:"type"`
	CodeFile    str `json:"code_file"`
	Name        str `json:"name"` // legacy "apple" images: the path
	DebugID     str `json:"debug_id"`
	UUID        str `json:"uuid"` // legacy "apple" images
	ID          str `json:"id"`   // legacy "symbolic" images
	CodeID      str `json:"code_id"`
	ImageAddr   num `json:"image_addr"`
	ImageSize   num `json:"image_size"`
	ImageVMAddr num `json:"image_vmaddr"`
	Arch        str `json:"arch"`
	CPUType     num `json:"cpu_type"` // legacy "apple" images
}

type contextsJSON struct {
	OS *struct {
		Name    str `json:"name"`
		Version str `json:"version"`
	} `json:"os"`
	Device *struct {
		Arch  str `json:"arch"`
		Model str `json:"model"`
	} `json:"device"`
	Runtime *struct {
		Name    str `json:"name"`
		Version str `json:"version"`
	} `json:"runtime"`
}

type sdkJSON struct {
	Name    str `json:"name"`
	Version str `json:"version"`
}

// Event converts one Sentry event payload, the body of an envelope's "event"
// item or of a /store/ request, into a crash report (docs/report-format.md):
//
//   - EventID is the payload's event_id (32 hex digits, or a UUID with
//     dashes, in any case) in lower case without dashes. A payload without
//     one gets the first 16 bytes of its SHA-256 in hex, so that converting
//     it again gives the same id (server/ingest derives the ids of stored
//     payloads the same way). Timestamp is the payload's timestamp (an RFC
//     3339 string or seconds since the epoch); it is zero if the payload has
//     none, and the caller then sets the time it received the event, as
//     Sentry does.
//   - Kind is always crash. Exception is the last of exception.values (the
//     one the event is about; Sentry lists chained exceptions oldest first).
//     Its Mechanism is "signal" when the mechanism carries a POSIX signal or
//     Mach exception, and otherwise Sentry's mechanism type ("generic",
//     "onunhandledrejection", …). Handled is mechanism.handled, or, when
//     absent, whether the level is not "fatal". An event without exceptions
//     gets Exception{Type: "message", Value: its logentry or message}.
//   - Threads are threads.values. The exception's stack becomes the frames of
//     the thread named by its thread_id, or else of the thread marked
//     crashed, or else of a new thread; that thread is marked Crashed and
//     named by Exception.ThreadID. A message's legacy top-level stacktrace is
//     placed the same way, and in a message event without a crashed thread
//     the current thread is the one marked Crashed.
//   - Frames are reversed to innermost first. Addr is instruction_addr, made
//     absolute for addr_mode "rel:N" by adding the image_addr of
//     debug_meta.images[N] (other modes drop the address). Function is
//     function, else raw_function, else symbol; for platforms "go" and
//     "java" it is qualified with the frame's module (sentry-go splits
//     "pkg/path.Func" into module and function). iOS's "<redacted>" counts
//     as no function. A frame with a file but no function or address gets
//     function "?"; a frame with none of them is dropped. File is abs_path,
//     else filename. Module is the base name of package (the image path of
//     native frames), else the name of the module whose range holds Addr,
//     else Sentry's module for platforms other than go and java.
//   - Modules are debug_meta.images of the native types macho (and legacy
//     "apple"), elf, pe and wasm; others (sourcemap, proguard, jvm, …) are not
//     loaded images and are left out. Name is the base name of code_file,
//     Path is code_file, and Arch uses GOARCH spelling.
//   - Platform is "native" when a frame has an address but no function, and
//     otherwise the event's platform as Sentry spells it ("go", "cocoa",
//     "javascript", "node", "python", …), or "other" if it has none.
//   - OS.Name is contexts.os.name in GOOS spelling for the systems Go knows
//     ("iOS" → "ios", "macOS" → "darwin", "Windows" → "windows"); other
//     names are kept as they are. Arch is contexts.device.arch, or else the
//     first module's arch, in GOARCH spelling. Runtime is contexts.runtime.
//   - Release, Environment, ServerName, SDK, Fingerprint (with "{{ default }}"
//     entries kept) and Tags (an object, or an array of pairs) are copied.
//     Tags also get "level" (default "error"), and when present "logger",
//     "transaction", "dist", "device" (contexts.device.model), "os.name"
//     (the name as sent, if OS.Name differs) and "message" (a message sent
//     together with an exception).
//
// Event fails with an error wrapping ErrInvalid, and naming the field, for
// data that is not an error event: invalid JSON, JSON other than an object,
// an event_id that is not a UUID, an event of another type ("transaction",
// "csp", …), or a field of the wrong kind where a container was expected
// (exception.values as a string, say). Scalars of the wrong kind are read
// leniently (a number where a string belongs becomes that string), or
// ignored.
//
// Event does not bound the size of payload; callers do (ParseEnvelope
// applies Limits.Event to event items, Store to its body). Its cost is
// linear in the size of payload.
func Event(payload []byte) (*report.Report, error) {
	return convert(payload, nil)
}

// Store converts the body of a request to Sentry's legacy store endpoint
// (/api/<project>/store/), after Body has undone its Content-Encoding. It
// also accepts the encodings of old SDKs (the raven clients): the JSON in
// base64, and zlib-compressed JSON, in base64 or not. A body, or an inflated one, over
// lim.Event bytes is an error wrapping ErrTooLarge. Otherwise Store is Event.
func Store(body []byte, lim Limits) (*report.Report, error) {
	max := lim.event()
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w: event of %d bytes, limit %d", ErrTooLarge, len(body), max)
	}
	data := bytes.TrimSpace(body)
	if len(data) > 0 && data[0] != '{' {
		if dec, err := base64.StdEncoding.DecodeString(string(data)); err == nil {
			data = dec
		}
		if len(data) >= 2 && isZlibHeader(data[0], data[1]) {
			z, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				return nil, fmt.Errorf("%w: zlib: %v", ErrBadBody, err)
			}
			data, err = readAtMost(z, max, 0, false)
			if err != nil {
				if errors.Is(err, ErrTooLarge) {
					return nil, err
				}
				return nil, fmt.Errorf("%w: zlib: %v", ErrBadBody, err)
			}
		}
	}
	return convert(data, nil)
}

// convert is Event, with the envelope's header (if any) supplying the event
// id and SDK when the payload has none.
func convert(payload []byte, hdr *EnvelopeHeader) (*report.Report, error) {
	trimmed := bytes.TrimLeft(payload, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%w event: empty payload", ErrInvalid)
	}
	var ev eventJSON
	if err := json.Unmarshal(payload, &ev); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w event: invalid JSON at offset %#x: %v", ErrInvalid, se.Offset, se)
		}
		if trimmed[0] == '{' { // cannot happen: every field of eventJSON reads any JSON
			return nil, fmt.Errorf("%w event: %v", ErrInvalid, err)
		}
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("%w event: payload is a JSON %s, not an object", ErrInvalid, jsonKind(trimmed))
	}

	r := &report.Report{
		Version:     report.Version,
		Kind:        report.KindCrash,
		Timestamp:   ev.Timestamp.t,
		Release:     string(ev.Release),
		Environment: string(ev.Environment),
		ServerName:  string(ev.ServerName),
	}

	// Identity and type.
	if len(ev.EventID) > 0 && string(ev.EventID) != "null" {
		var s string
		if json.Unmarshal(ev.EventID, &s) != nil {
			return nil, fmt.Errorf("%w event: field event_id: found %s, want string", ErrInvalid, jsonKind(ev.EventID))
		}
		id, ok := NormalizeEventID(s)
		if !ok {
			return nil, fmt.Errorf("%w event: field event_id: %q is not a UUID", ErrInvalid, s)
		}
		r.EventID = id
	}
	if r.EventID == "" && hdr != nil {
		r.EventID = hdr.EventID
	}
	if r.EventID == "" {
		sum := sha256.Sum256(payload)
		r.EventID = hex.EncodeToString(sum[:16])
	}
	switch t := string(ev.Type); t {
	case "", "error", "default":
	default:
		return nil, fmt.Errorf("%w event: field type: %q is not an error event", ErrInvalid, t)
	}

	// Containers, decoded strictly.
	var (
		exceptions []*exceptionJSON
		threads    []*threadJSON
		legacy     *stacktraceJSON
		debugMeta  struct {
			Images []*imageJSON `json:"images"`
		}
		contexts    contextsJSON
		sdk         sdkJSON
		tagMap      tags
		fingerprint []str
	)
	if err := decodeValues(ev.Exception, "exception", &exceptions); err != nil {
		return nil, err
	}
	if err := decodeValues(ev.Threads, "threads", &threads); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		raw  json.RawMessage
		path string
		v    any
	}{
		{ev.Stacktrace, "stacktrace", &legacy},
		{ev.DebugMeta, "debug_meta", &debugMeta},
		{ev.Contexts, "contexts", &contexts},
		{ev.SDK, "sdk", &sdk},
		{ev.Tags, "tags", &tagMap},
		{ev.Fingerprint, "fingerprint", &fingerprint},
	} {
		if err := decodeField(f.raw, f.path, f.v); err != nil {
			return nil, err
		}
	}

	// Modules, and the image addresses that "rel:N" frames refer to.
	c := &converter{platform: string(ev.Platform)}
	for _, im := range debugMeta.Images {
		var base num
		if im != nil {
			base = im.ImageAddr
			if m, ok := convertImage(im); ok {
				if len(r.Modules) == maxModules {
					if r.Truncated == nil {
						r.Truncated = &report.Truncated{}
					}
					r.Truncated.Modules = true
				} else {
					r.Modules = append(r.Modules, m)
				}
			}
		}
		c.imageAddrs = append(c.imageAddrs, base)
	}
	c.index(r.Modules)

	// Threads.
	haveCrashed := false
	for _, t := range threads {
		if t == nil {
			continue
		}
		if len(r.Threads) == maxThreads {
			if r.Truncated == nil {
				r.Truncated = &report.Truncated{}
			}
			r.Truncated.Threads = true
			// Keep looking for the crashed thread, which replaces the last.
			if t.Crashed.v && !haveCrashed {
				r.Threads[len(r.Threads)-1] = c.thread(t)
				haveCrashed = true
			}
			continue
		}
		r.Threads = append(r.Threads, c.thread(t))
		haveCrashed = haveCrashed || t.Crashed.v
	}

	// The exception, or the message.
	msg := string(ev.LogEntry)
	if msg == "" {
		msg = string(ev.Message)
	}
	level := strings.ToLower(string(ev.Level))
	if level == "" {
		level = "error"
	}
	exceptions = slices.DeleteFunc(exceptions, func(e *exceptionJSON) bool { return e == nil })
	if len(exceptions) > 0 {
		main := exceptions[len(exceptions)-1]
		ex := &report.Exception{Type: string(main.Type), Value: string(main.Value), Handled: level != "fatal"}
		synthetic := false
		if m := main.Mechanism; m != nil {
			ex.Mechanism = string(m.Type)
			if m.hasSignal() {
				ex.Mechanism = "signal"
			}
			if m.Handled.set {
				ex.Handled = m.Handled.v
			}
			synthetic = m.Synthetic.v
		}
		if ex.Type == "" && (synthetic || msg != "" && ex.Value == msg) {
			// A message sent with its stack as an exception without a type,
			// as @sentry/node sends captureMessage.
			ex.Type = "message"
		}
		// The stack: the main exception's, or the newest one that has one.
		stackFrom := main
		if !main.hasFrames() {
			for i := len(exceptions) - 1; i >= 0; i-- {
				if exceptions[i].hasFrames() {
					stackFrom = exceptions[i]
					break
				}
			}
		}
		tid := main.ThreadID
		if !tid.set() {
			tid = stackFrom.ThreadID
		}
		var st *stacktraceJSON
		if stackFrom.hasFrames() {
			st = stackFrom.Stacktrace
		} else if legacy != nil && len(legacy.Frames) > 0 {
			st = legacy
		}
		if i := c.attach(r, tid, st, false); i >= 0 {
			ex.ThreadID = r.Threads[i].ID
		}
		r.Exception = ex
		if msg != "" && msg != ex.Value {
			tagMap.set("message", msg)
		}
	} else {
		ex := &report.Exception{Type: "message", Value: msg, Handled: true}
		var st *stacktraceJSON
		if legacy != nil && len(legacy.Frames) > 0 {
			st = legacy
		}
		if i := c.attach(r, id{}, st, true); i >= 0 {
			ex.ThreadID = r.Threads[i].ID
		}
		r.Exception = ex
	}

	// Platform: "native" if any frame still needs symbolizing.
	r.Platform = report.Platform(c.platform)
	if r.Platform == "" {
		r.Platform = "other"
	}
	if c.unsymbolized {
		r.Platform = report.PlatformNative
	}

	// Producer and machine.
	r.SDK = report.SDK{Name: string(sdk.Name), Version: string(sdk.Version)}
	if r.SDK.Name == "" && hdr != nil {
		r.SDK = hdr.SDK
	}
	if r.SDK.Name == "" {
		r.SDK.Name = "unknown"
	}
	if o := contexts.OS; o != nil {
		name := strings.TrimSpace(string(o.Name))
		r.OS = report.OS{Name: goos(name), Version: strings.TrimSpace(string(o.Version))}
		if r.OS.Name != name {
			tagMap.set("os.name", name)
		}
	}
	if d := contexts.Device; d != nil {
		r.Arch = goarch(string(d.Arch))
		if d.Model != "" {
			tagMap.set("device", string(d.Model))
		}
	}
	if r.Arch == "" {
		for _, m := range r.Modules {
			if m.Arch != "" {
				r.Arch = m.Arch
				break
			}
		}
	}
	if rt := contexts.Runtime; rt != nil {
		r.Runtime = report.Runtime{Name: string(rt.Name), Version: string(rt.Version)}
	}

	// Grouping and tags.
	for _, f := range fingerprint {
		r.Fingerprint = append(r.Fingerprint, string(f))
	}
	tagMap.set("level", level)
	for _, kv := range [...]struct{ k, v str }{{"logger", ev.Logger}, {"transaction", ev.Transaction}, {"dist", ev.Dist}} {
		if kv.v != "" {
			tagMap.set(string(kv.k), string(kv.v))
		}
	}
	r.Tags = tagMap
	return r, nil
}

// decodeValues reads a list that Sentry writes either as {"values": [...]}
// or, in older SDKs and sentry-go, as the bare array.
func decodeValues[T any](raw json.RawMessage, path string, out *[]T) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		return decodeField(raw, path, out)
	}
	var o struct {
		Values []T `json:"values"`
	}
	if err := decodeField(raw, path, &o); err != nil {
		return err
	}
	*out = o.Values
	return nil
}

func (e *exceptionJSON) hasFrames() bool {
	return e.Stacktrace != nil && len(e.Stacktrace.Frames) > 0
}

func (m *mechanismJSON) hasSignal() bool {
	present := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	if present(m.PosixSignal) || present(m.MachException) {
		return true
	}
	return m.Meta != nil && (present(m.Meta.Signal) || present(m.Meta.MachException))
}

// converter holds what frame conversion needs from the whole event.
type converter struct {
	platform     string // the event's platform
	imageAddrs   []num  // image_addr of each debug_meta.images entry, by index
	byAddr       []int  // indexes of modules with a size, sorted by ImageAddr
	modules      []report.Module
	unsymbolized bool // some frame has an address but no function
}

// index prepares the lookup of modules by address.
func (c *converter) index(mods []report.Module) {
	c.modules = mods
	for i, m := range mods {
		if m.ImageSize > 0 {
			c.byAddr = append(c.byAddr, i)
		}
	}
	slices.SortStableFunc(c.byAddr, func(a, b int) int {
		return cmpAddr(mods[a].ImageAddr, mods[b].ImageAddr)
	})
}

func cmpAddr(a, b report.Addr) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// moduleAt returns the name of the module whose range holds a, or "".
func (c *converter) moduleAt(a report.Addr) string {
	i, _ := slices.BinarySearchFunc(c.byAddr, a, func(m int, a report.Addr) int {
		return cmpAddr(c.modules[m].ImageAddr, a)
	})
	// c.byAddr[i] is the first module starting at or after a.
	if i < len(c.byAddr) && c.modules[c.byAddr[i]].ImageAddr == a {
		return c.modules[c.byAddr[i]].Name
	}
	if i == 0 {
		return ""
	}
	m := c.modules[c.byAddr[i-1]]
	if uint64(a)-uint64(m.ImageAddr) < m.ImageSize {
		return m.Name
	}
	return ""
}

func (c *converter) thread(t *threadJSON) report.Thread {
	tid := t.ID
	if !tid.set() {
		tid = t.UUID
	}
	th := report.Thread{
		ID:      tid.n.v,
		Name:    string(t.Name),
		State:   string(t.State),
		Crashed: t.Crashed.v,
		Current: t.Current.v,
	}
	if th.Name == "" && tid.text != "" {
		th.Name = tid.text // a thread id that is not a number
	}
	if st := t.Stacktrace; st != nil {
		th.Frames, th.Truncated = c.frames(st.Frames)
		for name, v := range st.Registers {
			if v.set {
				if th.Registers == nil {
					th.Registers = make(map[string]report.Addr, len(st.Registers))
				}
				th.Registers[name] = report.Addr(v.v)
			}
		}
	}
	if th.Frames == nil {
		th.Frames = []report.Frame{} // "frames" is required in JSON (§5)
	}
	return th
}

// attach places the stack st of the exception or message (nil if it has
// none) on the thread named by tid, or on the crashed thread, or, for a
// message, on the current thread; failing those, it adds a new thread if
// there is a stack. It marks the thread crashed and returns its index, or
// -1 if no thread is about the event.
func (c *converter) attach(r *report.Report, tid id, st *stacktraceJSON, isMessage bool) int {
	target := -1
	if tid.set() {
		for i := range r.Threads {
			if t := &r.Threads[i]; (tid.n.set && t.ID == tid.n.v) || (tid.text != "" && t.Name == tid.text) {
				target = i
				break
			}
		}
	}
	if target < 0 {
		target = slices.IndexFunc(r.Threads, func(t report.Thread) bool { return t.Crashed })
	}
	if target < 0 && isMessage {
		target = slices.IndexFunc(r.Threads, func(t report.Thread) bool { return t.Current })
	}
	if target < 0 && st == nil {
		return -1
	}
	if target < 0 {
		t := report.Thread{ID: tid.n.v, Name: tid.text}
		if !tid.set() {
			t.ID = c.freeThreadID(r.Threads)
		}
		r.Threads = append(r.Threads, t)
		if len(r.Threads) > maxThreads {
			r.Threads[maxThreads-1] = t
			r.Threads = r.Threads[:maxThreads]
		}
		target = len(r.Threads) - 1
	}
	t := &r.Threads[target]
	t.Crashed = true
	if st != nil {
		t.Frames, t.Truncated = c.frames(st.Frames)
	}
	if t.Frames == nil {
		t.Frames = []report.Frame{}
	}
	return target
}

// freeThreadID returns 0 if no thread has it, or one more than the largest.
func (c *converter) freeThreadID(threads []report.Thread) uint64 {
	var hi uint64
	used := false
	for _, t := range threads {
		used = used || t.ID == 0
		hi = max(hi, t.ID)
	}
	if !used {
		return 0
	}
	return hi + 1
}

// frames converts Sentry's frames, outermost first, to report frames,
// innermost first, keeping the innermost maxFrames. truncated says whether
// outer frames were left out.
func (c *converter) frames(in []*frameJSON) (out []report.Frame, truncated bool) {
	out = make([]report.Frame, 0, min(len(in), maxFrames))
	for i := len(in) - 1; i >= 0; i-- {
		f, ok := c.frame(in[i])
		if !ok {
			continue
		}
		if len(out) == maxFrames {
			return out, true
		}
		out = append(out, f)
	}
	return out, false
}

func (c *converter) frame(f *frameJSON) (report.Frame, bool) {
	if f == nil {
		return report.Frame{}, false
	}
	platform := string(f.Platform)
	if platform == "" {
		platform = c.platform
	}
	var out report.Frame
	if a := f.InstructionAddr; a.set {
		switch mode := string(f.AddrMode); {
		case mode == "" || mode == "abs":
			out.Addr = report.Addr(a.v)
		case strings.HasPrefix(mode, "rel:"):
			if n, err := strconv.ParseUint(mode[len("rel:"):], 10, 32); err == nil && n < uint64(len(c.imageAddrs)) && c.imageAddrs[n].set {
				out.Addr = report.Addr(c.imageAddrs[n].v + a.v)
			}
		}
	}
	fn := string(f.Function)
	if fn == redacted {
		fn = ""
	}
	for _, alt := range []str{f.RawFunction, f.Symbol} {
		if fn == "" && alt != redacted {
			fn = string(alt)
		}
	}
	module := string(f.Module)
	switch platform {
	case "go", "java":
		if fn != "" && module != "" && !strings.HasPrefix(fn, module+".") {
			fn = module + "." + fn
		}
		module = ""
	}
	if p := string(f.Package); p != "" {
		module = baseName(p)
	} else if out.Addr != 0 && len(c.byAddr) > 0 {
		if m := c.moduleAt(out.Addr); m != "" {
			module = m
		}
	}
	out.Module = module
	out.Function = fn
	out.File = string(f.AbsPath)
	if out.File == "" {
		out.File = string(f.Filename)
	}
	if l := f.Lineno; l.set && l.v <= 1<<31-1 {
		out.Line = int(l.v)
	}
	out.InApp = f.InApp.v
	if out.Function == "" {
		if out.Addr != 0 {
			c.unsymbolized = true
		} else if out.File != "" {
			out.Function = "?"
		} else {
			return report.Frame{}, false
		}
	}
	return out, true
}

// convertImage converts one debug_meta.images entry to a module, or reports
// false for images that are not loaded code.
func convertImage(im *imageJSON) (report.Module, bool) {
	var m report.Module
	switch strings.ToLower(string(im.Type)) {
	case "macho", "apple":
		m.Type = "macho"
	case "elf":
		m.Type = "elf"
	case "pe":
		m.Type = "pe"
	case "wasm":
		m.Type = "wasm"
	default:
		return m, false
	}
	m.Path = string(im.CodeFile)
	if m.Path == "" {
		m.Path = string(im.Name)
	}
	m.Name = baseName(m.Path)
	for _, d := range []str{im.DebugID, im.UUID, im.ID} {
		if d != "" {
			m.DebugID = normalizeDebugID(string(d))
			break
		}
	}
	m.CodeID = strings.ToLower(string(im.CodeID))
	m.ImageAddr = report.Addr(im.ImageAddr.v)
	m.ImageSize = im.ImageSize.v
	m.ImageVMAddr = report.Addr(im.ImageVMAddr.v)
	m.Arch = goarch(string(im.Arch))
	if m.Arch == "" && im.CPUType.set {
		m.Arch = machoArch(im.CPUType.v)
	}
	return m, true
}

// baseName returns the last element of a Unix or Windows path.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// NormalizeEventID returns a Sentry event id, 32 hex digits or a UUID with
// dashes in any case, as 32 lower-case hex digits, and whether s was one.
func NormalizeEventID(s string) (string, bool) {
	switch len(s) {
	case 32:
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return "", false
		}
		s = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	default:
		return "", false
	}
	var b [16]byte
	if _, err := hex.Decode(b[:], []byte(s)); err != nil {
		return "", false
	}
	return hex.EncodeToString(b[:]), true
}

// normalizeDebugID writes a debug id as backtrail does (package debugfile):
// a lower-case UUID with dashes, followed by "-" and the age in hex when
// non-zero. Ids in other forms are kept, in lower case.
func normalizeDebugID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	raw := strings.ReplaceAll(s, "-", "")
	if len(raw) < 32 {
		return s
	}
	if _, err := hex.DecodeString(raw[:32]); err != nil {
		return s
	}
	out := raw[0:8] + "-" + raw[8:12] + "-" + raw[12:16] + "-" + raw[16:20] + "-" + raw[20:32]
	if age := strings.TrimLeft(raw[32:], "0"); age != "" {
		if _, err := strconv.ParseUint(age, 16, 32); err != nil {
			return s
		}
		out += "-" + age
	}
	return out
}

// goos returns an operating system name in GOOS spelling, for the systems
// Go knows by another name in Sentry's contexts; others are kept.
func goos(name string) string {
	switch strings.ToLower(name) {
	case "ios", "iphone os", "ipados":
		return "ios"
	case "macos", "mac os x", "mac os", "macosx", "os x", "darwin":
		return "darwin"
	case "windows":
		return "windows"
	case "linux", "debian", "ubuntu", "fedora", "centos", "centos linux", "centos stream", "red hat enterprise linux",
		"rhel", "rocky linux", "almalinux", "oracle linux", "oracle linux server", "amazon linux", "alpine",
		"alpine linux", "arch", "arch linux", "opensuse", "opensuse leap", "opensuse tumbleweed", "sles", "suse",
		"linux mint", "gentoo", "nixos", "void", "raspbian", "kali gnu/linux":
		return "linux" // Sentry's Node and Python SDKs send the distribution's name
	case "android":
		return "android"
	case "freebsd", "netbsd", "openbsd", "dragonfly", "illumos", "solaris", "aix", "plan9":
		return strings.ToLower(name)
	}
	return name
}

// goarch returns an architecture name in GOARCH spelling.
func goarch(a string) string {
	switch l := strings.ToLower(a); {
	case l == "":
		return ""
	case l == "x86_64" || l == "x86-64" || l == "amd64" || l == "x64" || l == "x86_64h":
		return "amd64"
	case l == "x86" || l == "i386" || l == "i486" || l == "i586" || l == "i686" || l == "386":
		return "386"
	case l == "arm64" || l == "arm64e" || l == "aarch64":
		return "arm64"
	case l == "arm64_32":
		return l
	case strings.HasPrefix(l, "arm"):
		return "arm"
	default:
		return l
	}
}

// machoArch returns the GOARCH spelling of a Mach-O cpu_type
// (<mach/machine.h>).
func machoArch(cpuType uint64) string {
	switch cpuType {
	case 7:
		return "386"
	case 0x01000007:
		return "amd64"
	case 12:
		return "arm"
	case 0x0100000c:
		return "arm64"
	case 0x0200000c:
		return "arm64_32"
	case 18:
		return "ppc"
	case 0x01000012:
		return "ppc64"
	}
	return ""
}
