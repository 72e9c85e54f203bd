package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

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
by .gnu_debuglink or build-id under --debug-file-directory.

--output-style=JSON prints one JSON object per address with the same data.
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
	opts := symbolize.Options{Arch: str("arch", "default-arch"), Style: demangle.LLVM, Lazy: true}
	if d := str("debug-file-directory"); d != "" {
		opts.DebugDirs = []string{d}
	}
	m, err := symbolize.Open(obj, opts)
	if err != nil {
		return err
	}
	defer m.Close()
	relative := fs.Lookup("relative-address").Value.String() == "true"

	w := bufio.NewWriterSize(e.stdout, 64<<10)
	defer w.Flush()
	p := &symbolizePrinter{w: w, module: obj, json: style == "JSON", inlines: inlines, demangle: demangled}
	var frames []symbolize.Frame
	warned := false
	one := func(input string) {
		addr, ok := parseAddress(input)
		if !ok {
			p.bad(input)
			return
		}
		fileAddr := addr
		if relative {
			fileAddr = symbolize.RelativeAddress(addr, m.ImageVMAddr)
		}
		var err error
		if frames, err = m.Frames(fileAddr, frames[:0]); err != nil && !warned {
			fmt.Fprintf(e.stderr, "backtrail: %v\n", err)
			warned = true
		}
		p.print(addr, frames)
	}
	if len(args) > 0 {
		for _, a := range args {
			one(a)
		}
		return nil
	}
	r := bufio.NewReaderSize(e.stdin, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			one(strings.TrimSpace(line))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Interactive callers wait for each answer; piped input is
		// flushed when the buffer fills.
		if r.Buffered() == 0 {
			w.Flush()
		}
	}
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
	w        *bufio.Writer
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

func (p *symbolizePrinter) print(addr uint64, frames []symbolize.Frame) {
	if !p.inlines && len(frames) > 1 {
		// Without inlining llvm-symbolizer shows the outermost function
		// with the innermost location.
		top := frames[len(frames)-1]
		frames[0].Function, frames[0].RawFunction = top.Function, top.RawFunction
		frames[0].Entry, frames[0].HasEntry = top.Entry, top.HasEntry
		frames = frames[:1]
	}
	if p.json {
		p.printJSON(addr, frames)
		return
	}
	if len(frames) == 0 {
		p.w.WriteString("??\n??:0:0\n\n")
		return
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
		fmt.Fprintf(p.w, "%s\n%s:%d:%d\n", name, file, f.Line, f.Column)
	}
	p.w.WriteByte('\n')
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

func (p *symbolizePrinter) printJSON(addr uint64, frames []symbolize.Frame) {
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
	writeJSONLine(p.w, r)
}

func (p *symbolizePrinter) bad(input string) {
	if p.json {
		writeJSONLine(p.w, struct {
			Error      struct{ Message string }
			ModuleName string
		}{struct{ Message string }{"unable to parse arguments: " + input}, p.module})
		return
	}
	// llvm-symbolizer echoes input it cannot parse.
	fmt.Fprintf(p.w, "%s\n", input)
}

func writeJSONLine(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
