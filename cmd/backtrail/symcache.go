package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/internal/progress"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

func init() {
	register(&command{
		name:  "symcache build",
		args:  "[--arch ARCH] [--threads N] [--json] PATH -o OUT",
		short: "build a symcache from a debug file",
		long: `
Symcache build converts the debug information of PATH (ELF, Mach-O, .dSYM
bundle, Go binary) into a symcache: a compact, memory-mapped index from
addresses to functions, files, lines and inline frames (docs/symcache.md).
Compilation units are converted in parallel on --threads cores (default: all).
A binary without DWARF uses its separate debug file when one is found; one
built with -gsplit-dwarf is read with its .dwp package (PATH.dwp, or --dwp)
or .dwo files, found as symbolize finds them, and a warning names the units
whose split DWARF is missing.

On a terminal a progress bar shows the units converted. --json prints, when
the symcache is written, what symcache info --json prints about it, with the
input's path and the build's duration in seconds.

A build allocates up to hundreds of megabytes.
` + hugePagesHelp + `
`,
		flags: func(fs *flag.FlagSet) {
			fs.String("o", "", "output `file`")
			fs.Bool("json", false, "print a JSON summary of the built symcache")
			fs.String("arch", "", "architecture of a fat Mach-O file")
			fs.Int("threads", 0, "units converted in parallel (0: all cores)")
			fs.String("debug-file-directory", "", "`dir` to search for separate debug files")
			fs.String("dwp", "", "split DWARF package `file` (default: PATH.dwp)")
		},
		run: runSymcacheBuild,
	})
	register(&command{
		name:  "symcache info",
		args:  "[--json] FILE",
		short: "show what a symcache holds",
		long: `
Symcache info prints a symcache's identifiers, architecture, language and
producer (of the object's first compilation unit), the number of files,
functions, locations and address ranges, and its size. It checks all of the
file first, and fails on a corrupt one; lookups (symbolize --obj, the
server) check only the parts they read.
`,
		flags: func(fs *flag.FlagSet) {
			fs.Bool("json", false, "print JSON")
		},
		run: runSymcacheInfo,
	})
}

func runSymcacheBuild(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	out := fs.Lookup("o").Value.String()
	if len(args) != 1 || out == "" {
		return usagef("need one PATH and -o OUT")
	}
	asJSON := fs.Lookup("json").Value.String() == "true"
	if st, err := os.Stat(out); asJSON && err == nil && !st.Mode().IsRegular() {
		return usagef("--json reads the symcache back: -o must name a file, not %s", out)
	}
	// A build's peak memory is mostly the builder's tables, live to
	// the end, and the default GOGC lets the heap grow to twice
	// them. At 50 the peak RSS of the 50–500 MB corpora fell by
	// 12–15 % for 0–6 % more CPU.
	setGCPercent(50)
	// Its heap in huge pages (see hugeHeap): a build of 334 MB of DWARF
	// took 2.1 s instead of 2.7–3.2, with 10,500 page faults instead of
	// 48,000 and 4 % more peak RSS (bench/symcache.md, run Y). The piece
	// is only address space until used.
	hugeHeap(512 << 20)
	start := time.Now()
	f, err := debugfile.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	o, err := f.Object(fs.Lookup("arch").Value.String())
	if err != nil {
		return err
	}
	dbg := o
	dwp := fs.Lookup("dwp").Value.String()
	f.FollowSplitDWARF(f.Path, dwp)
	opened := []*debugfile.File{f}
	if !o.Features.DebugInfo {
		var dirs []string
		if d := fs.Lookup("debug-file-directory").Value.String(); d != "" {
			dirs = []string{d}
		}
		if p := debugfile.FindCompanion(f.Path, o, dirs); p != "" {
			df, err := debugfile.Open(p)
			if err != nil {
				return err
			}
			defer df.Close()
			df.FollowSplitDWARF(f.Path, dwp)
			opened = append(opened, df)
			if dbg, err = df.Object(o.Arch); err != nil {
				return err
			}
		}
	}
	threads := fs.Lookup("threads").Value.(flag.Getter).Get().(int)
	bar := progress.New(e.stderr, e.isTerminal, "units", 0)
	opts := symbolize.BuildOptions{Workers: threads}
	if bar != nil {
		opts.Progress = func(done, total int) {
			bar.SetTotal(int64(total))
			bar.Set(int64(done))
		}
	}
	w, done, err := createOutput(out)
	if err != nil {
		bar.Finish()
		return err
	}
	err = symbolize.WriteObject(w, o, dbg, opts)
	bar.Finish()
	if err := done(err); err != nil {
		return err
	}
	for _, f := range opened {
		warnSplit(e.stderr, f.SplitDWARFErrors())
	}
	if !asJSON {
		return nil
	}
	sum, err := summarize(out, false)
	if err != nil {
		return err
	}
	writeJSONLine(e.stdout, struct {
		symcacheSummary
		Source  string  `json:"source"`
		Seconds float64 `json:"seconds"`
	}{sum, args[0], time.Since(start).Seconds()})
	return nil
}

// createOutput opens path for writing a file that readers must never see
// half-written: a temporary file beside it, renamed over path by done
// when writing succeeded (and removed otherwise). A device or pipe
// (-o /dev/null) is written in place instead, never replaced.
func createOutput(path string) (f *os.File, done func(error) error, err error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, nil, err
		}
		return f, func(err error) error {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".symcache-*")
	if err != nil {
		return nil, nil, err
	}
	return tmp, func(err error) error {
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
		return err
	}, nil
}

func runSymcacheInfo(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if len(args) != 1 {
		return usagef("need one FILE")
	}
	v, err := summarize(args[0], true)
	if err != nil {
		return err
	}
	if fs.Lookup("json").Value.String() == "true" {
		writeJSONLine(e.stdout, v)
		return nil
	}
	fmt.Fprintf(e.stdout, "%s\n  version:    %d\n  debug_id:   %s\n  code_id:    %s\n  arch:       %s\n  name:       %s\n  language:   %s\n  producer:   %s\n  files:      %d\n  functions:  %d\n  locations:  %d\n  ranges:     %d\n  size:       %d bytes\n",
		v.Path, v.Version, v.DebugID, v.CodeID, v.Arch, v.Name, v.Language, v.Producer, v.Files, v.Functions, v.Locations, v.Ranges, v.Size)
	return nil
}

// symcacheSummary is what symcache info prints about a symcache.
type symcacheSummary struct {
	Path      string `json:"path"`
	Version   int    `json:"version"`
	DebugID   string `json:"debug_id"`
	CodeID    string `json:"code_id,omitempty"`
	Arch      string `json:"arch"`
	Name      string `json:"name,omitempty"`
	Language  string `json:"language"`
	Producer  string `json:"producer,omitempty"`
	Files     int    `json:"files"`
	Functions int    `json:"functions"`
	Locations int    `json:"locations"`
	Ranges    int    `json:"ranges"`
	Size      int    `json:"size"`
}

// summarize opens the symcache at path and summarizes it, after checking
// all of it when check is set. The strings are copied: a symcache's point
// into its mapping, which Close unmaps.
func summarize(path string, check bool) (symcacheSummary, error) {
	sc, err := symcache.Open(path)
	if err != nil {
		return symcacheSummary{}, err
	}
	defer sc.Close()
	if check {
		if err := sc.Check(); err != nil {
			return symcacheSummary{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	info := sc.Info()
	files, funcs, locs, ranges := sc.Counts()
	id := debugfile.DebugID{UUID: info.DebugID, Age: info.DebugAge}
	return symcacheSummary{path, symcache.Version, id.String(), strings.Clone(info.CodeID), strings.Clone(info.Arch),
		strings.Clone(info.Name), info.Language.String(), strings.Clone(info.Producer), files, funcs, locs, ranges,
		sc.Size()}, nil
}
