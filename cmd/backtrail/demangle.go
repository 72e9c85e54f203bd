package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/backtrail/backtrail/demangle"
)

func init() {
	register(&command{
		name:  "demangle",
		args:  "[--style=full|llvm|short] [-p] [-_] [--json] [NAME ...]",
		short: "demangle C++, Rust and Swift names (c++filt-like)",
		long: `
Demangle prints the demangled form of each NAME — Itanium C++ (_Z…), Rust
(legacy _ZN…17h…E and v0 _R…) and Swift ($s…, _T0…, …) — one per line. With
no NAME it reads standard input and, like c++filt, demangles every mangled
name found in the text, leaving the rest as it is; so it can filter logs and
stack traces. A name that is not mangled, or cannot be demangled, is printed
unchanged.

--style=full (the default) writes names as c++filt and swift-demangle do,
--style=llvm as llvm-cxxfilt and llvm-symbolizer do, and --style=short (or
-p) only the qualified name, without parameters.
`,
		flags: func(fs *flag.FlagSet) {
			fs.String("style", "full", "full, llvm or short")
			fs.Bool("p", false, "do not print parameters (as --style=short)")
			fs.Bool("_", false, "strip a leading underscore first (Mach-O symbol names)")
			fs.Bool("strip-underscore", false, "alias for -_")
			fs.Bool("json", false, "print one JSON object per name: {\"name\", \"demangled\", \"scheme\"}")
		},
		run: runDemangle,
	})
}

func runDemangle(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	style := demangle.Full
	switch s := flagString(fs, "style"); s {
	case "full":
	case "llvm":
		style = demangle.LLVM
	case "short":
		style = demangle.Short
	default:
		return usagef("--style must be full, llvm or short, not %q", s)
	}
	if flagString(fs, "p") == "true" {
		style = demangle.Short
	}
	strip := flagString(fs, "_") == "true" || flagString(fs, "strip-underscore") == "true"
	asJSON := flagString(fs, "json") == "true"
	stripped := func(name string) string {
		if strip && len(name) > 1 && name[0] == '_' {
			return name[1:]
		}
		return name
	}
	one := func(name string) string {
		n := stripped(name)
		out := demangle.Demangle(n, style)
		if out == n {
			return name
		}
		return out
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	emit := func(name string) {
		if asJSON {
			writeJSONLine(w, map[string]string{"name": name, "demangled": one(name), "scheme": strings.ToLower(demangle.SchemeOf(stripped(name)).String())})
			return
		}
		fmt.Fprintln(w, one(name))
	}
	if len(args) > 0 {
		for _, a := range args {
			emit(a)
		}
		return nil
	}
	r := bufio.NewReaderSize(e.stdin, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			if asJSON {
				for _, tok := range strings.Fields(line) {
					emit(tok)
				}
			} else {
				w.WriteString(demangleText(line, one))
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if r.Buffered() == 0 {
			w.Flush()
		}
	}
}

// demangleText replaces every symbol-like word of text (letters, digits,
// '_', '$', '.') by its demangled form, as c++filt does.
func demangleText(text string, one func(string) string) string {
	var sb strings.Builder
	i := 0
	for i < len(text) {
		if !isSymbolByte(text[i]) {
			sb.WriteByte(text[i])
			i++
			continue
		}
		j := i
		for j < len(text) && isSymbolByte(text[j]) {
			j++
		}
		sb.WriteString(one(text[i:j]))
		i = j
	}
	return sb.String()
}

func isSymbolByte(c byte) bool {
	return c == '_' || c == '$' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
