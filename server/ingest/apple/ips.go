package apple

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/backtrail/backtrail/report"
)

// ParseIPS parses an .ips report: a header line of JSON whose bug_type says
// what follows, and a body.
//
// The first line is the JSON header; its bug_type (or, without one, the
// body's) chooses how the rest is read:
//
//	309  crash report, JSON body (iOS 15, macOS 12 and later)    → crash
//	385  non-fatal exception (ExcUserFault), JSON body like 309  → crash, Exception.Handled
//	     (without exception and threads, as for resource reports: ErrUnsupported)
//	109  crash report, text body (iOS 14 and earlier), as ParseCrash → crash
//	288  stackshot: a body with processByPid (every process's
//	     threads) or with threads like 309                       → hang
//
// Any other bug_type (210 kernel panic, 298 jetsam event, 151 and the
// rest) fails with an error wrapping ErrUnsupported that names it. Broken
// JSON fails with an error wrapping ErrInvalid that names the line, and a
// type mismatch names the field.
func ParseIPS(data []byte) (*report.Report, error) {
	data = trimBOM(data)
	headerLine, body, _ := bytes.Cut(data, []byte{'\n'})
	if len(bytes.TrimSpace(headerLine)) == 0 {
		return nil, fmt.Errorf("%w: ips: line 1: no JSON header", ErrInvalid)
	}
	var h ipsHeader
	if err := json.Unmarshal(headerLine, &h); err != nil {
		return nil, jsonError("ips header", err, headerLine, 1)
	}
	bugType := strings.TrimSpace(string(h.BugType))
	if bugType == "109" {
		r, err := parseCrash(body, 2)
		if err != nil {
			return nil, err
		}
		r.SDK.Name = "apple.ips"
		if id, ok := parseUUID(string(h.IncidentID)); ok && id != nilUUID {
			r.EventID = id
		}
		setTag(r, "apple.bug_type", bugType)
		return r, nil
	}
	var b ipsBody
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&b); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: ips: line 2: no JSON body after the header", ErrInvalid)
		}
		return nil, jsonError("ips body", err, body, 2)
	}
	if bugType == "" {
		bugType = strings.TrimSpace(string(b.BugType))
	}
	p := ipsParser{h: &h, b: &b, data: data, bugType: bugType}
	switch bugType {
	case "309":
		return p.crash(false)
	case "385":
		return p.crash(true)
	case "288":
		if b.ProcessByPid != nil {
			return p.stackshot()
		}
		if b.Threads != nil {
			return p.hang()
		}
		return nil, fmt.Errorf("%w: ips bug_type 288 (stackshot) without processByPid or threads", ErrUnsupported)
	case "":
		return nil, fmt.Errorf("%w: ips: no bug_type in header or body", ErrUnsupported)
	}
	return nil, fmt.Errorf("%w: ips bug_type %.20q (%s)", ErrUnsupported, bugType, bugTypeName(bugType))
}

// bugTypeName describes the bug types that are known but not read.
func bugTypeName(t string) string {
	switch t {
	case "210":
		return "kernel panic"
	case "298":
		return "jetsam event"
	}
	return "unknown"
}

type ipsHeader struct {
	BugType      text `json:"bug_type"`
	Timestamp    text `json:"timestamp"`
	AppName      text `json:"app_name"`
	Name         text `json:"name"`
	AppVersion   text `json:"app_version"`
	BuildVersion text `json:"build_version"`
	BundleID     text `json:"bundleID"`
	OSVersion    text `json:"os_version"`
	IncidentID   text `json:"incident_id"`
}

type ipsBody struct {
	BugType     text `json:"bug_type"`
	Version     text `json:"version"`
	CaptureTime text `json:"captureTime"`
	Incident    text `json:"incident"`
	CPUType     text `json:"cpuType"`
	ProcName    text `json:"procName"`
	ModelCode   text `json:"modelCode"`
	BundleInfo  struct {
		ID      text `json:"CFBundleIdentifier"`
		Short   text `json:"CFBundleShortVersionString"`
		Version text `json:"CFBundleVersion"`
	} `json:"bundleInfo"`
	OSVersion json.RawMessage `json:"osVersion"`
	Exception *struct {
		Type    text `json:"type"`
		Signal  text `json:"signal"`
		Codes   text `json:"codes"`
		Subtype text `json:"subtype"`
		Message text `json:"message"`
	} `json:"exception"`
	Termination *struct {
		Namespace text `json:"namespace"`
		Code      *num `json:"code"`
		Indicator text `json:"indicator"`
	} `json:"termination"`
	ASI                    json.RawMessage `json:"asi"`
	FaultingThread         *num            `json:"faultingThread"`
	Threads                []ipsThread     `json:"threads"`
	UsedImages             []ipsImage      `json:"usedImages"`
	LastExceptionBacktrace []ipsFrame      `json:"lastExceptionBacktrace"`
	LegacyInfo             struct {
		ImageExtraInfo []ipsImage `json:"imageExtraInfo"`
	} `json:"legacyInfo"`
	// Stackshots (bug_type 288).
	ProcessByPid map[string]*ssProcess `json:"processByPid"`
	BinaryImages []ipsImage            `json:"binaryImages"`
}

type ipsThread struct {
	ID          *num                       `json:"id"`
	Name        text                       `json:"name"`
	Queue       text                       `json:"queue"`
	Triggered   bool                       `json:"triggered"`
	ThreadState map[string]json.RawMessage `json:"threadState"`
	Frames      []ipsFrame                 `json:"frames"`
}

// ipsFrame is a frame object, or the pair [imageIndex, imageOffset] of
// version 1 bodies and stackshots.
type ipsFrame struct {
	ImageIndex  *num `json:"imageIndex"`
	ImageOffset num  `json:"imageOffset"`
	Symbol      text `json:"symbol"`
	SourceFile  text `json:"sourceFile"`
	SourceLine  num  `json:"sourceLine"`
	Inline      bool `json:"inline"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *ipsFrame) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		var pair []num
		if err := json.Unmarshal(b, &pair); err != nil {
			return err
		}
		if len(pair) < 2 {
			return fmt.Errorf("frame %.40s is not [imageIndex, imageOffset]", b)
		}
		*f = ipsFrame{ImageIndex: &pair[0], ImageOffset: pair[1]}
		return nil
	}
	type plain ipsFrame
	return json.Unmarshal(b, (*plain)(f))
}

// ipsImage is an image object, or the array [uuid, base, source, ...] of
// version 1 bodies and stackshots.
type ipsImage struct {
	Base num  `json:"base"`
	Size num  `json:"size"`
	UUID text `json:"uuid"`
	Name text `json:"name"`
	Path text `json:"path"`
	Arch text `json:"arch"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *ipsImage) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		var a []json.RawMessage
		if err := json.Unmarshal(b, &a); err != nil {
			return err
		}
		*m = ipsImage{}
		if len(a) > 0 {
			if err := json.Unmarshal(a[0], &m.UUID); err != nil {
				return err
			}
		}
		if len(a) > 1 {
			if err := json.Unmarshal(a[1], &m.Base); err != nil {
				return err
			}
		}
		return nil
	}
	type plain ipsImage
	return json.Unmarshal(b, (*plain)(m))
}

// ssProcess is one process of a stackshot.
type ssProcess struct {
	Pid        *num                 `json:"pid"`
	Name       text                 `json:"procname"`
	ThreadByID map[string]*ssThread `json:"threadById"`
}

type ssThread struct {
	ID           *num       `json:"id"`
	Name         text       `json:"name"`
	Queue        text       `json:"dispatch_queue_label"`
	State        []text     `json:"state"`
	UserFrames   []ipsFrame `json:"userFrames"`
	KernelFrames []ipsFrame `json:"kernelFrames"`
}

type ipsParser struct {
	h       *ipsHeader
	b       *ipsBody
	data    []byte
	bugType string
	images  []ipsImage // as frames index them
}

// base fills in what every kind of .ips report shares.
func (p *ipsParser) base(kind report.Kind) *report.Report {
	h, b := p.h, p.b
	r := newReport(kind, "apple.ips", string(b.Version))
	r.EventID = eventID(firstOf(string(b.Incident), string(h.IncidentID)), p.data)
	r.Timestamp = parseTime(string(b.CaptureTime))
	if r.Timestamp.IsZero() {
		r.Timestamp = parseTime(string(h.Timestamp))
	}
	osName, osVersion, build := p.os()
	r.OS = report.OS{Name: osName, Version: osVersion}
	r.Arch = goArch(string(b.CPUType))
	r.Release = release(
		firstOf(string(b.BundleInfo.ID), string(h.BundleID)),
		firstOf(string(b.BundleInfo.Short), string(h.AppVersion)),
		firstOf(string(b.BundleInfo.Version), string(h.BuildVersion)))
	setTag(r, "apple.bug_type", p.bugType)
	setTag(r, "apple.process", firstOf(string(b.ProcName), string(h.AppName), string(h.Name)))
	setTag(r, "apple.model", string(b.ModelCode))
	setTag(r, "apple.os_build", build)
	if t := b.Termination; t != nil && t.Namespace != "" {
		v := "Namespace " + string(t.Namespace)
		if t.Code != nil {
			v += fmt.Sprintf(", Code %#x", uint64(*t.Code))
		}
		if t.Indicator != "" {
			v += ", " + string(t.Indicator)
		}
		setTag(r, "apple.termination", v)
	}
	setTag(r, "apple.asi", asiText(b.ASI))
	return r
}

// os reads osVersion, an object {"train": "macOS 13.0", "build": "22A380"}
// or a string, falling back to the header's os_version.
func (p *ipsParser) os() (name, version, build string) {
	var o struct {
		Train text `json:"train"`
		Build text `json:"build"`
	}
	var s text
	switch {
	case json.Unmarshal(p.b.OSVersion, &o) == nil && o.Train != "":
		name, version, build = parseOS(string(o.Train))
		if o.Build != "" {
			build = string(o.Build)
		}
	case json.Unmarshal(p.b.OSVersion, &s) == nil && s != "":
		name, version, build = parseOS(string(s))
	default:
		name, version, build = parseOS(string(p.h.OSVersion))
	}
	return name, version, build
}

// asiText flattens "asi" ({"libsystem_c.dylib": ["abort() called"]}) into
// "libsystem_c.dylib: abort() called" lines, sorted by image.
func asiText(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		var lines []text
		if json.Unmarshal(m[k], &lines) != nil {
			var one text
			if json.Unmarshal(m[k], &one) != nil {
				continue
			}
			lines = []text{one}
		}
		for _, l := range lines {
			if b.Len() >= maxTag {
				return b.String()
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(k + ": " + string(l))
		}
	}
	return b.String()
}

// modules turns images into modules, filling gaps from extra
// (legacyInfo.imageExtraInfo of version 1 bodies).
func (p *ipsParser) modules(r *report.Report, images, extra []ipsImage) {
	p.images = images
	for i := range images {
		img := &images[i]
		if i < len(extra) {
			e := &extra[i]
			if img.Name == "" {
				img.Name = e.Name
			}
			if img.Path == "" {
				img.Path = e.Path
			}
			if img.Size == 0 {
				img.Size = e.Size
			}
			if img.Arch == "" {
				img.Arch = e.Arch
			}
		}
		if img.Name == "" {
			img.Name = text(baseName(string(img.Path)))
		}
		if len(r.Modules) >= MaxModules {
			if r.Truncated == nil {
				r.Truncated = new(report.Truncated)
			}
			r.Truncated.Modules = true
			continue
		}
		m := report.Module{
			Type:      "macho",
			Name:      string(img.Name),
			Path:      string(img.Path),
			ImageAddr: report.Addr(img.Base),
			ImageSize: uint64(img.Size),
			Arch:      string(img.Arch),
		}
		if h, ok := parseUUID(string(img.UUID)); ok {
			setUUID(&m, h)
		}
		r.Modules = append(r.Modules, m)
	}
}

// frames appends fs to t, resolving image indexes. where names the list
// for errors, as "threads[2].frames".
func (p *ipsParser) frames(t *report.Thread, fs []ipsFrame, where string) error {
	for i := range fs {
		if len(t.Frames) >= MaxFrames {
			t.Truncated = true
			return nil
		}
		f := &fs[i]
		fr := report.Frame{
			Function: string(f.Symbol),
			File:     string(f.SourceFile),
			Line:     clampInt(uint64(f.SourceLine)),
			Inlined:  f.Inline,
		}
		if f.ImageIndex != nil {
			idx := uint64(*f.ImageIndex)
			if idx >= uint64(len(p.images)) {
				return fmt.Errorf("%w: ips: %s[%d].imageIndex %d is out of range (%d images)", ErrInvalid, where, i, idx, len(p.images))
			}
			img := &p.images[idx]
			addr := uint64(img.Base) + uint64(f.ImageOffset)
			if addr < uint64(img.Base) {
				return fmt.Errorf("%w: ips: %s[%d]: image base %#x + imageOffset %#x overflows", ErrInvalid, where, i, uint64(img.Base), uint64(f.ImageOffset))
			}
			fr.Addr = report.Addr(addr)
			fr.Module = string(img.Name)
		}
		nameUnknown(&fr)
		t.Frames = append(t.Frames, fr)
	}
	return nil
}

// threads converts the body's threads; kind crash marks the faulting one.
func (p *ipsParser) threads(r *report.Report, kind report.Kind) error {
	b := p.b
	crashed := -1
	if kind == report.KindCrash {
		if b.FaultingThread != nil && uint64(*b.FaultingThread) < uint64(len(b.Threads)) {
			crashed = int(*b.FaultingThread)
		} else {
			for i := range b.Threads {
				if b.Threads[i].Triggered {
					crashed = i
					break
				}
			}
		}
	}
	for i := range b.Threads {
		if len(r.Threads) >= MaxThreads {
			truncateThreads(r)
			break
		}
		it := &b.Threads[i]
		t := report.Thread{ID: uint64(i), Crashed: i == crashed}
		if it.ID != nil {
			t.ID = uint64(*it.ID)
		}
		t.Name = firstOf(string(it.Name), string(it.Queue))
		if it.Queue != "" {
			t.Labels = map[string]string{"dispatch_queue": string(it.Queue)}
		}
		if err := p.frames(&t, it.Frames, fmt.Sprintf("threads[%d].frames", i)); err != nil {
			return err
		}
		t.Registers = ipsRegisters(it.ThreadState)
		r.Threads = append(r.Threads, t)
	}
	if len(b.LastExceptionBacktrace) > 0 && len(r.Threads) < MaxThreads {
		t := report.Thread{Name: "Last Exception Backtrace"}
		for _, o := range r.Threads {
			if o.ID >= t.ID && o.ID < 1<<63 {
				t.ID = o.ID + 1
			}
		}
		if err := p.frames(&t, b.LastExceptionBacktrace, "lastExceptionBacktrace"); err != nil {
			return err
		}
		r.Threads = append(r.Threads, t)
	}
	return nil
}

func truncateThreads(r *report.Report) {
	if r.Truncated == nil {
		r.Truncated = new(report.Truncated)
	}
	r.Truncated.Threads = true
}

// ipsRegisters reads a threadState: {"pc": {"value": 4310456564}, "x":
// [{"value": 42}, ...], "flavor": "ARM_THREAD_STATE64", ...}. Entries
// without a numeric value, such as flavor, are skipped.
func ipsRegisters(state map[string]json.RawMessage) map[string]report.Addr {
	if len(state) == 0 {
		return nil
	}
	type reg struct {
		Value *num `json:"value"`
	}
	keys := make([]string, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	regs := make(map[string]report.Addr)
	for _, k := range keys {
		if len(regs) >= MaxRegisters {
			break
		}
		name := strings.ToLower(k)
		if !isRegisterName(name) {
			continue
		}
		if name == "x" {
			var xs []reg
			if json.Unmarshal(state[k], &xs) == nil {
				for i, x := range xs {
					if x.Value != nil && len(regs) < MaxRegisters {
						regs["x"+strconv.Itoa(i)] = report.Addr(*x.Value)
					}
				}
			}
			continue
		}
		var v reg
		if json.Unmarshal(state[k], &v) == nil && v.Value != nil {
			regs[name] = report.Addr(*v.Value)
		}
	}
	if len(regs) == 0 {
		return nil
	}
	return regs
}

// crash reads a 309 (or, non-fatal, 385) report.
func (p *ipsParser) crash(nonFatal bool) (*report.Report, error) {
	b := p.b
	r := p.base(report.KindCrash)
	p.modules(r, b.UsedImages, b.LegacyInfo.ImageExtraInfo)
	if err := p.threads(r, report.KindCrash); err != nil {
		return nil, err
	}
	if e := b.Exception; e != nil {
		detail := firstOf(string(e.Subtype), string(e.Codes))
		r.Exception = newException(string(e.Type), string(e.Signal), detail, string(e.Message))
	}
	if r.Exception != nil {
		r.Exception.Handled = nonFatal
		if t := crashedThread(r); t != nil {
			r.Exception.ThreadID = t.ID
		}
	}
	if r.Exception == nil && len(r.Threads) == 0 {
		if nonFatal {
			return nil, fmt.Errorf("%w: ips bug_type 385 without exception or threads", ErrUnsupported)
		}
		return nil, fmt.Errorf("%w: ips bug_type %s: no exception and no threads", ErrInvalid, p.bugType)
	}
	return r, nil
}

// hang reads a stackshot whose body has threads like a crash report.
func (p *ipsParser) hang() (*report.Report, error) {
	r := p.base(report.KindHang)
	r.Hang = &report.Hang{}
	p.modules(r, p.b.UsedImages, p.b.LegacyInfo.ImageExtraInfo)
	if err := p.threads(r, report.KindHang); err != nil {
		return nil, err
	}
	return r, nil
}

// stackshot reads a 288 body with processByPid: every process's threads,
// in pid and then thread id order, kernel frames (innermost) before user
// frames. Thread labels name the process and pid.
func (p *ipsParser) stackshot() (*report.Report, error) {
	b := p.b
	r := p.base(report.KindHang)
	r.Hang = &report.Hang{}
	p.modules(r, b.BinaryImages, nil)
	for _, pk := range sortedKeys(b.ProcessByPid) {
		proc := b.ProcessByPid[pk]
		if proc == nil {
			continue
		}
		pid := pk
		if proc.Pid != nil {
			pid = strconv.FormatUint(uint64(*proc.Pid), 10)
		}
		for _, tk := range sortedKeys(proc.ThreadByID) {
			st := proc.ThreadByID[tk]
			if st == nil {
				continue
			}
			if len(r.Threads) >= MaxThreads {
				truncateThreads(r)
				return r, nil
			}
			t := report.Thread{Name: firstOf(string(st.Name), string(st.Queue))}
			if st.ID != nil {
				t.ID = uint64(*st.ID)
			} else if id, err := strconv.ParseUint(tk, 10, 64); err == nil {
				t.ID = id
			}
			t.Labels = map[string]string{"pid": pid}
			if proc.Name != "" {
				t.Labels["process"] = string(proc.Name)
			}
			if st.Queue != "" {
				t.Labels["dispatch_queue"] = string(st.Queue)
			}
			var state []string
			for _, s := range st.State {
				state = append(state, string(s))
			}
			t.State = strings.Join(state, " ")
			where := fmt.Sprintf("processByPid[%.20q].threadById[%.20q]", pk, tk)
			if err := p.frames(&t, st.KernelFrames, where+".kernelFrames"); err != nil {
				return nil, err
			}
			if err := p.frames(&t, st.UserFrames, where+".userFrames"); err != nil {
				return nil, err
			}
			r.Threads = append(r.Threads, t)
		}
	}
	return r, nil
}

// sortedKeys returns m's keys in numeric order, keys that are not numbers
// last in string order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, errA := strconv.ParseUint(keys[i], 10, 64)
		b, errB := strconv.ParseUint(keys[j], 10, 64)
		switch {
		case errA == nil && errB == nil && a != b:
			return a < b
		case (errA == nil) != (errB == nil):
			return errA == nil
		}
		return keys[i] < keys[j]
	})
	return keys
}

// firstOf returns the first non-empty string.
func firstOf(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
