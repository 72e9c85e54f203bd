package apple

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/backtrail/backtrail/report"
)

// ParseCrash parses a legacy text crash report, the format Xcode and
// CrashReporter write: a header block of fields such as "Incident
// Identifier:" and "Exception Type:", "Thread N:" and "Thread N Crashed:"
// blocks of frames "N   image   0xaddr symbol + offset", the register dump
// "Thread N crashed with ARM Thread State (64-bit):" and "Binary Images:"
// lines "0xstart - 0xend image arch <uuid> /path".
//
// The report is a crash (report.KindCrash). Lines this parser does not
// know, such as the VM region and external modification sections, are
// skipped. A line inside a thread block that starts with a frame number
// but has no hexadecimal address, a binary image line whose addresses or
// UUID do not parse, and a report with neither an exception nor a thread
// (a header alone) fail with an error wrapping ErrInvalid that names the
// line. Parsing is linear in len(data).
func ParseCrash(data []byte) (*report.Report, error) {
	return parseCrash(data, 1)
}

// parseCrash parses data whose first line is line number first of the
// file it came from.
func parseCrash(data []byte, first int) (*report.Report, error) {
	data = validUTF8(trimBOM(data))
	p := &crashParser{
		data:    data,
		fields:  make(map[string]string),
		names:   make(map[uint64]string),
		regs:    make(map[uint64]map[string]report.Addr),
		crashed: -1,
		line:    first - 1,
	}
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		p.line++
		if err := p.parseLine(string(bytes.TrimRight(line, "\r"))); err != nil {
			return nil, err
		}
	}
	return p.report()
}

// Sections of a crash report whose lines need context.
const (
	secNone    = iota
	secThread  // frames of a thread or backtrace
	secSkip    // frames of a thread beyond MaxThreads
	secRegs    // "Thread N crashed with ... Thread State"
	secImages  // "Binary Images:"
	secASI     // "Application Specific Information:"
	secUnknown // any other heading; its lines are skipped
)

// headerKeys are the header fields the parser keeps.
var headerKeys = map[string]bool{
	"Incident Identifier": true,
	"Hardware Model":      true,
	"Process":             true,
	"Identifier":          true,
	"Version":             true,
	"Code Type":           true,
	"Date/Time":           true,
	"OS Version":          true,
	"Report Version":      true,
	"Exception Type":      true,
	"Exception Codes":     true,
	"Exception Subtype":   true,
	"Exception Message":   true,
	"Crashed Thread":      true,
	"Triggered by Thread": true,
	"Termination Reason":  true,
}

type crashParser struct {
	data        []byte // the whole report, for a derived event id
	line        int
	sec         int
	fields      map[string]string // first value of each header key
	threads     []report.Thread
	pseudo      []bool            // threads[i] is a backtrace, not a thread
	cur         *report.Thread    // thread receiving frames in secThread
	names       map[uint64]string // "Thread N name:" lines
	regs        map[uint64]map[string]report.Addr
	regThread   uint64
	crashed     int64 // number of the "Thread N Crashed:" thread, or -1
	moreThreads bool  // threads were left out
	modules     []report.Module
	moreModules bool
	asi         strings.Builder
}

func (p *crashParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrInvalid, p.line, fmt.Sprintf(format, args...))
}

func (p *crashParser) parseLine(line string) error {
	trimmed := strings.TrimSpace(line)
	switch p.sec {
	case secThread, secSkip:
		if n := countDigits(trimmed); n > 0 && n < len(trimmed) && (trimmed[n] == ' ' || trimmed[n] == '\t') {
			f, err := parseFrame(trimmed)
			if err != nil {
				return p.errorf("%v", err)
			}
			if p.sec == secThread {
				addFrame(p.cur, f)
			}
			return nil
		}
		if strings.HasPrefix(trimmed, "(") && strings.HasSuffix(trimmed, ")") && p.sec == secThread {
			// "Last Exception Backtrace:" as a list of return addresses.
			for _, tok := range strings.Fields(trimmed[1 : len(trimmed)-1]) {
				addr, ok := parseHex(tok)
				if !ok {
					return p.errorf("backtrace address %.40q is not hexadecimal", tok)
				}
				addFrame(p.cur, report.Frame{Addr: report.Addr(addr)})
			}
			return nil
		}
	case secRegs:
		regs := p.regs[p.regThread]
		if regs == nil {
			regs = make(map[string]report.Addr)
		}
		if parseRegisters(trimmed, regs) > 0 {
			if len(p.regs) < MaxThreads {
				p.regs[p.regThread] = regs
			}
			return nil
		}
	case secImages:
		if strings.HasPrefix(trimmed, "0x") || strings.HasPrefix(trimmed, "0X") {
			m, err := parseImage(trimmed)
			if err != nil {
				return p.errorf("binary image: %v", err)
			}
			if len(p.modules) >= MaxModules {
				p.moreModules = true
			} else {
				p.modules = append(p.modules, m)
			}
			return nil
		}
		if trimmed == "" {
			return nil
		}
	case secASI:
		if trimmed != "" && !isHeading(line) {
			if p.asi.Len() < maxTag {
				if p.asi.Len() > 0 {
					p.asi.WriteByte('\n')
				}
				p.asi.WriteString(strings.TrimRight(line, " \t"))
			}
			return nil
		}
	case secUnknown:
		if trimmed != "" && !isHeading(line) {
			return nil
		}
	}
	p.sec = secNone
	if trimmed == "" {
		return nil
	}
	if strings.HasPrefix(line, "Thread ") {
		return p.threadHeading(line[len("Thread "):])
	}
	switch {
	case strings.HasPrefix(line, "Binary Images:"):
		p.sec = secImages
		return nil
	case strings.HasPrefix(line, "Application Specific Information:"):
		p.sec = secASI
		return nil
	case strings.HasPrefix(line, "Last Exception Backtrace:"),
		strings.HasPrefix(line, "Application Specific Backtrace"):
		p.startThread(0, strings.TrimSuffix(strings.TrimSpace(line), ":"), false)
		if p.sec == secThread {
			p.pseudo[len(p.pseudo)-1] = true
		}
		return nil
	}
	key, val, ok := strings.Cut(line, ":")
	if ok && line[0] != ' ' && line[0] != '\t' {
		val = strings.TrimSpace(val)
		if len(val) > maxTag {
			val = strings.ToValidUTF8(val[:maxTag], "")
		}
		if headerKeys[key] {
			if _, seen := p.fields[key]; !seen {
				p.fields[key] = val
			}
		} else if val == "" {
			p.sec = secUnknown // a heading such as "VM Region Summary:"
		}
	}
	return nil
}

// isHeading reports whether line starts a section whatever section it is
// in: a "Thread N" line or a known heading.
func isHeading(line string) bool {
	if strings.HasPrefix(line, "Thread ") && countDigits(line[len("Thread "):]) > 0 {
		return true
	}
	return strings.HasPrefix(line, "Binary Images:") ||
		strings.HasPrefix(line, "Last Exception Backtrace:") ||
		strings.HasPrefix(line, "Application Specific Backtrace")
}

// threadHeading handles a line that started with "Thread ": "Thread 0:",
// "Thread 0:: Dispatch queue: q", "Thread 5 Crashed:", "Thread 1 Crashed:
// name", "Thread 0 name:  Dispatch queue: q" and "Thread 0 crashed with
// ARM Thread State (64-bit):". Others, such as "Thread 0 instruction
// stream:", are ignored.
func (p *crashParser) threadHeading(rest string) error {
	n := countDigits(rest)
	if n == 0 {
		return nil
	}
	id, err := strconv.ParseUint(rest[:n], 10, 64)
	if err != nil {
		return p.errorf("thread number %.40q: %v", rest[:n], err)
	}
	rest = rest[n:]
	switch {
	case strings.HasPrefix(rest, " name:"):
		if len(p.names) < MaxThreads {
			p.names[id] = strings.TrimSpace(rest[len(" name:"):])
		}
	case strings.HasPrefix(rest, " crashed with"):
		p.sec, p.regThread = secRegs, id
	case strings.HasPrefix(rest, " Crashed"):
		tail := strings.TrimLeft(rest[len(" Crashed"):], ":")
		if p.crashed < 0 && id <= 1<<62 {
			p.crashed = int64(id)
		}
		p.startThread(id, tail, true)
	case strings.HasPrefix(rest, ":"):
		p.startThread(id, strings.TrimLeft(rest, ":"), false)
	default:
		p.sec = secUnknown
	}
	return nil
}

// startThread begins a thread block. label is what followed the heading's
// colon: a thread name or "Dispatch queue: q".
func (p *crashParser) startThread(id uint64, label string, crashed bool) {
	if len(p.threads) >= MaxThreads {
		p.moreThreads = true
		p.sec = secSkip
		return
	}
	t := report.Thread{ID: id, Crashed: crashed}
	name, queue := splitThreadLabel(label)
	if n, q := splitThreadLabel(p.names[id]); n != "" || q != "" {
		if name == "" {
			name = n
		}
		if queue == "" {
			queue = q
		}
	}
	t.Name = name
	if queue != "" {
		t.Labels = map[string]string{"dispatch_queue": queue}
		if t.Name == "" {
			t.Name = queue
		}
	}
	p.threads = append(p.threads, t)
	p.pseudo = append(p.pseudo, false)
	p.cur = &p.threads[len(p.threads)-1]
	p.sec = secThread
}

func splitThreadLabel(s string) (name, queue string) {
	s = strings.TrimSpace(s)
	if q, ok := strings.CutPrefix(s, "Dispatch queue:"); ok {
		return "", strings.TrimSpace(q)
	}
	return s, ""
}

// parseFrame parses a frame line "N  image  0xaddr symbol": the image name
// may hold spaces; the symbol may be "0xbase + offset", "name + offset",
// "name (file:line)" or "name + offset (file:line)".
func parseFrame(s string) (report.Frame, error) {
	var f report.Frame
	rest := strings.TrimLeft(s[countDigits(s):], " \t")
	image, addrTok, sym, ok := splitFrame(rest)
	if !ok {
		return f, fmt.Errorf("frame %.80q has no 0x address", s)
	}
	addr, ok := parseHex(addrTok)
	if !ok {
		return f, fmt.Errorf("frame address %.40q is not hexadecimal", addrTok)
	}
	f.Addr = report.Addr(addr)
	if image != "???" {
		f.Module = image
	}
	parseSymbol(sym, &f)
	return f, nil
}

// splitFrame splits "image 0xaddr symbol" at the first token after the
// image name that is a 0x address. Without one, a tab ends the image name,
// as in the reports of recent macOS versions, and the next token is taken
// as the address so that the caller can say what is wrong with it.
func splitFrame(s string) (image, addr, sym string, ok bool) {
	i := strings.IndexAny(s, " \t") // the image name is at least one token
	for i >= 0 && i < len(s) {
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		k := j
		for k < len(s) && s[k] != ' ' && s[k] != '\t' {
			k++
		}
		if _, hex := parseHex(s[j:k]); hex {
			return strings.TrimSpace(s[:i]), s[j:k], strings.TrimSpace(s[k:]), true
		}
		if k == j {
			break
		}
		i = k
	}
	if t := strings.IndexByte(s, '\t'); t > 0 && strings.TrimSpace(s[:t]) != "" {
		after := strings.TrimLeft(s[t+1:], " \t")
		if after != "" {
			tok, rest, _ := strings.Cut(after, " ")
			return strings.TrimSpace(s[:t]), tok, strings.TrimSpace(rest), true
		}
	}
	return "", "", "", false
}

// parseSymbol fills f's function, file and line from the text after a
// frame's address.
func parseSymbol(sym string, f *report.Frame) {
	sym = strings.TrimSpace(sym)
	if sym == "" {
		return
	}
	// "0x7fff61bc6000 + 3114": the image's load address and the offset.
	tok, rest, _ := strings.Cut(sym, " ")
	if _, ok := parseHex(tok); ok {
		rest = strings.TrimSpace(rest)
		if off, ok := strings.CutPrefix(rest, "+"); rest == "" || ok && countDigits(strings.TrimSpace(off)) == len(strings.TrimSpace(off)) {
			return
		}
	}
	if strings.HasSuffix(sym, ")") {
		if open := strings.LastIndex(sym, " ("); open >= 0 {
			if file, line, ok := parseFileLine(sym[open+2 : len(sym)-1]); ok {
				f.File, f.Line = file, line
				sym = strings.TrimSpace(sym[:open])
			}
		}
	}
	if i := strings.LastIndex(sym, " + "); i >= 0 {
		if off := sym[i+3:]; off != "" && countDigits(off) == len(off) {
			sym = strings.TrimSpace(sym[:i])
		}
	}
	if strings.HasSuffix(sym, ")") {
		if open := strings.LastIndex(sym, " (in "); open >= 0 {
			sym = strings.TrimSpace(sym[:open]) // atos: "name (in image)"
		}
	}
	if sym != "???" {
		f.Function = sym
	}
}

// parseFileLine reads "file:line" or "file:line:column".
func parseFileLine(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || countDigits(s[i+1:]) != len(s)-i-1 || i == len(s)-1 {
		return "", 0, false
	}
	if j := strings.LastIndexByte(s[:i], ':'); j > 0 && j < i-1 && countDigits(s[j+1:i]) == i-j-1 {
		i = j // file:line:column
	}
	end := i + 1 + countDigits(s[i+1:])
	n, err := strconv.ParseUint(s[i+1:end], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return s[:i], clampInt(n), true
}

// parseRegisters adds the "name: 0xvalue" pairs of a register dump line to
// regs and returns how many it found.
func parseRegisters(s string, regs map[string]report.Addr) int {
	f := strings.Fields(s)
	n := 0
	for i := 0; i+1 < len(f); i++ {
		name, ok := strings.CutSuffix(f[i], ":")
		if !ok || !isRegisterName(name) {
			continue
		}
		v, ok := parseHex(f[i+1])
		if !ok {
			continue
		}
		name = strings.ToLower(name)
		if _, dup := regs[name]; dup || len(regs) < MaxRegisters {
			regs[name] = report.Addr(v)
		}
		n++
		i++
	}
	return n
}

func isRegisterName(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// parseImage parses a "Binary Images:" line:
//
//	0x10864e000 - 0x10ee0ffff +YetAnotherMac x86_64 (400.9.4 - 1.0.0) <2d90...> /path
//	0x1017ff000 - 0x101885fff +com.AlphaSoft.iTubeDownloader (x86_64) <7B63...> /path
//	0x10211c000 - 0x1024b3fff App Namespace arm64  <debeff...> /path with spaces
func parseImage(s string) (report.Module, error) {
	m := report.Module{Type: "macho"}
	startTok, rest, _ := strings.Cut(s, " ")
	start, ok := parseHex(startTok)
	if !ok {
		return m, fmt.Errorf("start %.40q is not hexadecimal", startTok)
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t"), "-")
	if !ok {
		return m, fmt.Errorf("no '-' after start address %s", startTok)
	}
	endTok, rest, _ := strings.Cut(strings.TrimLeft(rest, " \t"), " ")
	end, ok := parseHex(endTok)
	if !ok {
		return m, fmt.Errorf("end %.40q is not hexadecimal", endTok)
	}
	if end < start {
		return m, fmt.Errorf("end %s is below start %s", endTok, startTok)
	}
	m.ImageAddr = report.Addr(start)
	m.ImageSize = end - start + 1 // 0 when the range is all of memory
	rest = strings.TrimPrefix(strings.TrimSpace(rest), "+")
	desc := rest
	if lt := strings.IndexByte(rest, '<'); lt >= 0 {
		gt := strings.IndexByte(rest[lt:], '>')
		if gt < 0 {
			return m, fmt.Errorf("UUID %.50q has no closing '>'", rest[lt:])
		}
		uuid := rest[lt+1 : lt+gt]
		h, ok := parseUUID(uuid)
		if !ok {
			return m, fmt.Errorf("UUID %.40q is not a UUID", uuid)
		}
		setUUID(&m, h)
		desc, m.Path = strings.TrimSpace(rest[:lt]), strings.TrimSpace(rest[lt+gt+1:])
	} else if i := strings.Index(rest, " /"); i >= 0 {
		desc, m.Path = strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i+1:])
	}
	if m.Path == "???" {
		m.Path = ""
	}
	m.Name, m.Arch = parseImageDesc(desc)
	if m.Name == "" {
		m.Name = baseName(m.Path)
	}
	return m, nil
}

// parseImageDesc splits "name arch (version)", "name (arch)" or "name
// arch" into the name and the architecture. The version is dropped.
func parseImageDesc(desc string) (name, arch string) {
	if strings.HasSuffix(desc, ")") {
		if i := strings.LastIndexByte(desc, '('); i >= 0 {
			if inner := desc[i+1 : len(desc)-1]; isArchName(inner) {
				arch = inner
			}
			desc = strings.TrimSpace(desc[:i])
		}
	}
	if i := strings.LastIndexAny(desc, " \t"); i >= 0 && isArchName(desc[i+1:]) {
		arch = desc[i+1:]
		desc = strings.TrimSpace(desc[:i])
	}
	if desc == "???" {
		desc = ""
	}
	return desc, arch
}

func isArchName(s string) bool {
	switch s {
	case "x86_64", "x86_64h", "i386", "arm64", "arm64e", "arm64_32", "armv6", "armv7", "armv7s", "armv7k", "armv7f", "arm", "ppc", "ppc64":
		return true
	}
	return false
}

// report assembles the report once every line is read.
func (p *crashParser) report() (*report.Report, error) {
	f := p.fields
	r := newReport(report.KindCrash, "apple.crash", f["Report Version"])
	r.Timestamp = parseTime(f["Date/Time"])
	var build string
	r.OS.Name, r.OS.Version, build = parseOS(f["OS Version"])
	codeType, _, _ := strings.Cut(f["Code Type"], " (")
	r.Arch = goArch(codeType)
	short, bundleVersion := splitVersion(f["Version"])
	r.Release = release(f["Identifier"], short, bundleVersion)

	crashed := p.crashed
	if crashed < 0 {
		for _, k := range []string{"Crashed Thread", "Triggered by Thread"} {
			v := f[k]
			if n := countDigits(v); n > 0 {
				if id, err := strconv.ParseUint(v[:n], 10, 64); err == nil && id <= 1<<62 {
					crashed = int64(id)
					break
				}
			}
		}
	}
	// Backtraces that are not threads ("Last Exception Backtrace") get ids
	// after the largest thread number.
	var next uint64
	for i, t := range p.threads {
		if !p.pseudo[i] && t.ID >= next && t.ID < 1<<63 {
			next = t.ID + 1
		}
	}
	for i := range p.threads {
		t := &p.threads[i]
		if p.pseudo[i] {
			t.ID, t.Crashed = next, false
			next++
			continue
		}
		if crashed >= 0 && t.ID == uint64(crashed) {
			t.Crashed = true
		}
		if regs := p.regs[t.ID]; regs != nil {
			t.Registers = regs
			delete(p.regs, t.ID) // a repeated thread number gets them once
		}
	}
	r.Threads = p.threads
	r.Modules = p.modules
	if p.moreThreads || p.moreModules {
		r.Truncated = &report.Truncated{Threads: p.moreThreads, Modules: p.moreModules}
	}
	typ, signal := splitExceptionType(f["Exception Type"])
	detail := f["Exception Subtype"]
	if detail == "" {
		detail = f["Exception Codes"]
	}
	r.Exception = newException(typ, signal, detail, f["Exception Message"])
	if t := crashedThread(r); t != nil && r.Exception != nil {
		r.Exception.ThreadID = t.ID
	}
	if r.Exception == nil && len(r.Threads) == 0 {
		return nil, fmt.Errorf("%w: line %d: no Exception Type and no thread: a crash report header alone", ErrInvalid, p.line)
	}
	r.EventID = eventID(f["Incident Identifier"], p.data)
	process, _, _ := strings.Cut(f["Process"], " [")
	setTag(r, "apple.process", process)
	setTag(r, "apple.model", f["Hardware Model"])
	setTag(r, "apple.os_build", build)
	setTag(r, "apple.version", f["Version"])
	setTag(r, "apple.termination", f["Termination Reason"])
	setTag(r, "apple.asi", p.asi.String())
	if strings.Contains(f["Code Type"], "(Translated)") {
		setTag(r, "apple.translated", "true")
	}
	return r, nil
}

// splitExceptionType splits "EXC_BAD_ACCESS (SIGSEGV)" into the Mach
// exception and the signal, and "SIGSEGV" into an empty type and the
// signal.
func splitExceptionType(s string) (typ, signal string) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1 : len(s)-1])
	}
	if strings.HasPrefix(s, "SIG") {
		return "", s
	}
	return s, ""
}

// splitVersion splits the Version field into the short version
// (CFBundleShortVersionString) and the bundle version (CFBundleVersion).
// macOS writes "short (bundle)" and older iOS "bundle (short)"; when only
// one of the two holds a dot it is taken as the short version.
func splitVersion(v string) (short, bundle string) {
	v = strings.TrimSpace(v)
	if v == "???" {
		return "", ""
	}
	a, b, ok := strings.Cut(v, " (")
	if !ok || !strings.HasSuffix(b, ")") {
		return v, ""
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b[:len(b)-1])
	if !strings.Contains(a, ".") && strings.Contains(b, ".") {
		return b, a
	}
	return a, b
}
