package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/symbolize"
)

func init() {
	register(&command{
		name:  "symbolize",
		args:  "--obj PATH [--inlines] [--arch ARCH] [--output-style=LLVM|JSON] [ADDR ...]",
		short: "print function, file and line of addresses (llvm-symbolizer compatible)",
		long: `
Symbolize prints, for each address, the function, file, line and column of
every frame at that address, innermost (inlined) first, exactly as
llvm-symbolizer --obj=PATH prints them: one FUNCTION line and one
FILE:LINE:COLUMN line per frame, "??" and "??:0:0" when unknown, then an
empty line. Addresses are file addresses of the object, in hex with 0x or in
decimal; with no ADDR arguments they are read from standard input, one per
line.

PATH may be an ELF or Mach-O file, a .dSYM bundle, a Go binary (stripped
binaries are read through their pclntab) or a symcache. A binary without
debug information uses its separate debug file when one is found next to it,
by .gnu_debuglink or build-id under --debug-file-directory. A binary built
with -gsplit-dwarf (DWARF 5 or GNU's DWARF 4 extension) keeps only skeleton
units; their functions and inline chains are read from PATH.dwp (or the
package --dwp names) when it exists, else from each unit's .dwo file, named by the skeleton (joined to its
compilation directory when relative), or by that name, or its base name,
next to the binary. A .dwo of another build (its id differs) is not used; a
unit whose split file is not found keeps its line numbers, with names from
the symbol table, as llvm-symbolizer does, and a warning says which.
"symcache build" and "dump" find split files the same way.

--output-style=JSON prints one JSON object per address with the same data.

Many addresses, from a regular file over 1 MB on standard input, make the
heap grow to hundreds of megabytes.
` + hugePagesHelp + `
`,
		flags: func(fs *flag.FlagSet) {
			fs.String("obj", "", "object `file` to symbolize against")
			fs.String("exe", "", "alias for --obj")
			fs.String("e", "", "alias for --obj")
			fs.Bool("inlines", true, "print all inlined frames (the default)")
			fs.Bool("i", true, "alias for --inlines")
			fs.Bool("no-inlines", false, "print only the outermost function with the innermost location")
			fs.String("arch", "", "architecture of a fat Mach-O file")
			fs.String("default-arch", "", "alias for --arch")
			fs.String("output-style", "LLVM", "LLVM or JSON")
			fs.Bool("demangle", true, "demangle function names")
			fs.Bool("C", true, "alias for --demangle")
			fs.Bool("no-demangle", false, "print function names as recorded")
			fs.Bool("relative-address", false, "addresses are relative to the image base")
			fs.String("debug-file-directory", "", "`dir` to search for separate debug files")
			fs.String("dwp", "", "split DWARF package `file` (default: PATH.dwp)")
		},
		run: runSymbolize,
	})
}

func runSymbolize(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	str := func(names ...string) string {
		for _, n := range names {
			if v := fs.Lookup(n).Value.String(); v != "" {
				return v
			}
		}
		return ""
	}
	obj := str("obj", "exe", "e")
	if obj == "" {
		return usagef("--obj is required")
	}
	style := strings.ToUpper(str("output-style"))
	if style != "LLVM" && style != "JSON" {
		return usagef("--output-style must be LLVM or JSON, not %q", style)
	}
	inlines := fs.Lookup("no-inlines").Value.String() != "true" &&
		fs.Lookup("inlines").Value.String() == "true" && fs.Lookup("i").Value.String() == "true"
	demangled := fs.Lookup("no-demangle").Value.String() != "true" &&
		fs.Lookup("demangle").Value.String() == "true" && fs.Lookup("C").Value.String() == "true"
	if len(args) == 0 && bigFile(e.stdin, 1<<20) {
		// Many addresses: the heap in huge pages (see hugeHeap), before
		// collectFrom, whose setting the collection there would undo.
		// A million addresses from a symcache took 2.1–2.4 s instead of
		// 2.6–2.8, with 4,500 page faults instead of 48,000 (bench/
		// symcache.md, run Y); a few addresses would pay the few
		// milliseconds of its collection for nothing.
		hugeHeap(512 << 20)
	}
	collectFrom(128 << 20)
	opts := symbolize.Options{Arch: str("arch", "default-arch"), Style: demangle.LLVM, Lazy: true}
	if d := str("debug-file-directory"); d != "" {
		opts.DebugDirs = []string{d}
	}
	opts.DWP = str("dwp")
	m, err := symbolize.Open(obj, opts)
	if err != nil {
		return err
	}
	defer m.Close()
	defer func() { warnSplit(e.stderr, m.SplitDWARFErrors()) }()
	s := &symbolizer{
		m:        m,
		relative: fs.Lookup("relative-address").Value.String() == "true",
		p:        symbolizePrinter{module: obj, json: style == "JSON", inlines: inlines, demangle: demangled},
		stderr:   e.stderr,
	}
	if len(args) > 0 {
		b := &batch{}
		for _, a := range args {
			b.in = append(b.in, a...)
			b.ends = append(b.ends, len(b.in))
		}
		s.run(b, &scratch{})
		_, err := e.stdout.Write(b.out)
		return err
	}
	return s.stream(ctx, e.stdin, e.stdout)
}

// symbolizer answers batches of input lines; run is safe for concurrent
// use.
type symbolizer struct {
	m        *symbolize.Module
	relative bool
	p        symbolizePrinter
	stderr   io.Writer
	warn     sync.Once
}

// batch is a run of input lines, symbolized by one worker and printed in
// input order.
type batch struct {
	in    []byte // the lines, one after the other
	ends  []int  // where each line ends in in
	out   []byte // the answers
	flush bool   // input paused after the batch: the reader may be waiting
	done  chan struct{}
}

// Lines per batch: enough to spread the work over the workers, few enough
// that the output of the batches in flight stays in the tens of megabytes
// for C++ with deep inlining (about 2 KB per address).
const batchLines = 1024

// scratch is a worker's reusable memory for run.
type scratch struct {
	addrs, fileAddrs []uint64
	lineAddr         []int // per line of a batch: its index in addrs, -1 when it is not an address
	frames           []symbolize.Frame
	ends             []int
}

// run symbolizes the lines of b into b.out: it parses them all, looks up
// their addresses together (Module.FramesBatch) and prints the answers in
// order.
func (s *symbolizer) run(b *batch, sc *scratch) {
	sc.addrs, sc.fileAddrs, sc.lineAddr = sc.addrs[:0], sc.fileAddrs[:0], sc.lineAddr[:0]
	start := 0
	for _, end := range b.ends {
		addr, ok := parseAddress(string(bytes.TrimSpace(b.in[start:end])))
		start = end
		if !ok {
			sc.lineAddr = append(sc.lineAddr, -1)
			continue
		}
		sc.lineAddr = append(sc.lineAddr, len(sc.addrs))
		sc.addrs = append(sc.addrs, addr)
		if s.relative {
			addr = symbolize.RelativeAddress(addr, s.m.ImageVMAddr)
		}
		sc.fileAddrs = append(sc.fileAddrs, addr)
	}
	var err error
	sc.frames, sc.ends, err = s.m.FramesBatch(sc.fileAddrs, sc.frames[:0], sc.ends[:0])
	if err != nil {
		s.warn.Do(func() { fmt.Fprintf(s.stderr, "backtrail: %v\n", err) })
	}
	b.out = b.out[:0]
	start = 0
	for k, end := range b.ends {
		line := b.in[start:end]
		start = end
		i := sc.lineAddr[k]
		if i < 0 {
			b.out = s.p.appendBad(b.out, string(bytes.TrimSpace(line)))
			continue
		}
		from := 0
		if i > 0 {
			from = sc.ends[i-1]
		}
		b.out = s.p.append(b.out, sc.addrs[i], sc.frames[from:sc.ends[i]])
	}
}

// stream symbolizes the lines of r, one address per line, and prints the
// answers to w in input order. Batches are symbolized in parallel, one
// worker per CPU: a symcache lookup takes microseconds, while demangling
// a function's name the first time and printing a deep inline chain take
// more. When the input pauses, what was read is answered and flushed at
// once, for interactive callers.
func (s *symbolizer) stream(ctx context.Context, r io.Reader, w io.Writer) error {
	workers := runtime.GOMAXPROCS(0)
	free := make(chan *batch, 2*workers+2) // bounds the batches in flight
	for range cap(free) {
		free <- &batch{done: make(chan struct{}, 1)}
	}
	todo := make(chan *batch, cap(free))
	order := make(chan *batch, cap(free))
	for range workers {
		go func() {
			var sc scratch
			for b := range todo {
				s.run(b, &sc)
				b.done <- struct{}{}
			}
		}()
	}
	var readErr error
	go func() {
		defer close(order)
		defer close(todo)
		br := bufio.NewReaderSize(r, 64<<10)
		b := <-free
		b.in, b.ends = b.in[:0], b.ends[:0]
		for {
			line, err := br.ReadSlice('\n')
			b.in = append(b.in, line...)
			if err == bufio.ErrBufferFull {
				continue // a line longer than the buffer
			}
			last := 0
			if len(b.ends) > 0 {
				last = b.ends[len(b.ends)-1]
			}
			if len(b.in) > last {
				b.ends = append(b.ends, len(b.in))
			}
			paused := br.Buffered() == 0
			if len(b.ends) > 0 && (len(b.ends) == batchLines || paused || err != nil) {
				b.flush = paused || err != nil
				order <- b
				todo <- b
				b = <-free
				b.in, b.ends = b.in[:0], b.ends[:0]
			}
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				return
			}
			if err := ctx.Err(); err != nil {
				readErr = err
				return
			}
		}
	}()
	bw := bufio.NewWriterSize(w, 256<<10)
	var writeErr error
	for b := range order {
		<-b.done
		if writeErr == nil {
			_, writeErr = bw.Write(b.out)
			if b.flush && writeErr == nil {
				writeErr = bw.Flush()
			}
		}
		free <- b
	}
	if writeErr == nil {
		writeErr = bw.Flush()
	}
	if readErr != nil {
		return readErr
	}
	return writeErr
}

// parseAddress parses an address the way llvm-symbolizer does: hex with
// 0x, octal with a leading 0, binary with 0b, else decimal. Only the first
// word of the line counts.
func parseAddress(s string) (uint64, bool) {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	if s == "" || strings.Contains(s, "_") {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 0, 64)
	return v, err == nil
}

type symbolizePrinter struct {
	module   string
	json     bool
	inlines  bool
	demangle bool
}

func (p *symbolizePrinter) name(f *symbolize.Frame) string {
	n := f.Function
	if !p.demangle {
		n = f.RawFunction
	}
	return n
}

// append appends the answer for addr to out.
func (p *symbolizePrinter) append(out []byte, addr uint64, frames []symbolize.Frame) []byte {
	if !p.inlines && len(frames) > 1 {
		// Without inlining llvm-symbolizer shows the outermost function
		// with the innermost location.
		top := frames[len(frames)-1]
		frames[0].Function, frames[0].RawFunction = top.Function, top.RawFunction
		frames[0].Entry, frames[0].HasEntry = top.Entry, top.HasEntry
		frames = frames[:1]
	}
	if p.json {
		return p.appendJSON(out, addr, frames)
	}
	if len(frames) == 0 {
		return append(out, "??\n??:0:0\n\n"...)
	}
	for i := range frames {
		f := &frames[i]
		name, file := p.name(f), f.File
		if f.RawFunction == "" {
			name = "??"
		}
		if file == "" {
			file = "??"
		}
		out = append(out, name...)
		out = append(out, '\n')
		out = append(out, file...)
		out = append(out, ':')
		out = strconv.AppendUint(out, uint64(f.Line), 10)
		out = append(out, ':')
		out = strconv.AppendUint(out, uint64(f.Column), 10)
		out = append(out, '\n')
	}
	return append(out, '\n')
}

// jsonFrame mirrors llvm-symbolizer's JSON output fields, in its order.
type jsonFrame struct {
	Column        uint32
	Discriminator uint32
	FileName      string
	FunctionName  string
	Line          uint32
	StartAddress  string
	StartFileName string
	StartLine     uint32
}

type jsonResult struct {
	Address    string
	ModuleName string
	Symbol     []jsonFrame
}

func (p *symbolizePrinter) appendJSON(out []byte, addr uint64, frames []symbolize.Frame) []byte {
	r := jsonResult{Address: fmt.Sprintf("%#x", addr), ModuleName: p.module, Symbol: make([]jsonFrame, 0, max(len(frames), 1))}
	for i := range frames {
		f := &frames[i]
		jf := jsonFrame{Column: f.Column, Discriminator: f.Discriminator, FileName: f.File,
			FunctionName: p.name(f), Line: f.Line, StartFileName: f.DeclFile, StartLine: f.DeclLine}
		if f.HasEntry {
			jf.StartAddress = fmt.Sprintf("%#x", f.Entry)
		}
		r.Symbol = append(r.Symbol, jf)
	}
	if len(frames) == 0 {
		r.Symbol = append(r.Symbol, jsonFrame{})
	}
	buf := bytes.NewBuffer(out)
	writeJSONLine(buf, r)
	return buf.Bytes()
}

// appendBad appends the answer for input that is not an address.
func (p *symbolizePrinter) appendBad(out []byte, input string) []byte {
	if p.json {
		buf := bytes.NewBuffer(out)
		writeJSONLine(buf, struct {
			Error      struct{ Message string }
			ModuleName string
		}{struct{ Message string }{"unable to parse arguments: " + input}, p.module})
		return buf.Bytes()
	}
	// llvm-symbolizer echoes input it cannot parse.
	return append(append(out, input...), '\n')
}

func writeJSONLine(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// warnSplit tells, on w, which units of a binary built with -gsplit-dwarf
// were read without their split DWARF, as gdb warns of a missing .dwo:
// their frames have line numbers but no inline calls.
func warnSplit(w io.Writer, errs []error) {
	const most = 5
	for i, err := range errs {
		if i == most {
			fmt.Fprintf(w, "backtrail: warning: %d more units without their split DWARF\n", len(errs)-most)
			break
		}
		fmt.Fprintf(w, "backtrail: warning: %v: its unit has no inline frames\n", err)
	}
}
