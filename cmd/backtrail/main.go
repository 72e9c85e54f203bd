// Command backtrail symbolicates addresses, inspects debug files, builds
// symcaches, dumps live processes and runs the backtrail server.
//
// Each subcommand lives in its own file; this file holds the command table,
// which is also the source of the help text (see help_test.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
)

// command is one entry of the command table.
type command struct {
	name  string // may contain a space for two-word commands ("debugfile info")
	args  string // usage after the name
	short string
	long  string
	flags func(fs *flag.FlagSet) // registers flags; nil for none
	run   func(ctx context.Context, env *env, fs *flag.FlagSet, args []string) error
}

// env is what a command may touch, so tests can run commands in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// isTerminal reports whether stderr is a terminal, for progress bars.
	isTerminal bool
}

// usageError makes main print usage and exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, isTerminal: isTerminal(os.Stderr)}
	// BACKTRAIL_CPUPROFILE names a file for a CPU profile of the whole
	// command, for the benchmarks under bench/; it is not a flag so that
	// every command has it without the command table knowing.
	if path := os.Getenv("BACKTRAIL_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			defer func() {
				pprof.StopCPUProfile()
				f.Close()
			}()
		}
	}
	code := run(ctx, e, os.Args[1:])
	stop()
	if code != 0 {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, _ := lookup(args[1:]); c != nil {
				printCommandHelp(e.stdout, c)
				return 0
			}
		}
		printHelp(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, rest := lookup(args)
	if c == nil {
		fmt.Fprintf(e.stderr, "backtrail: unknown command %q\nRun 'backtrail help' for usage.\n", strings.Join(args[:min(len(args), 2)], " "))
		return 2
	}
	fs := flag.NewFlagSet("backtrail "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if c.flags != nil {
		c.flags(fs)
	}
	positional, err := parseInterspersed(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(e.stdout, c)
		return 0
	}
	if err == nil {
		err = c.run(ctx, e, fs, positional)
	}
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) || isFlagError(err) {
			fmt.Fprintf(e.stderr, "backtrail %s: %v\nusage: backtrail %s %s\n", c.name, err, c.name, c.args)
			return 2
		}
		fmt.Fprintf(e.stderr, "backtrail: %v\n", err)
		return 1
	}
	return 0
}

// flagError marks errors from flag parsing, which are usage errors.
type flagError struct{ error }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}

// parseInterspersed parses flags that may appear between positional
// arguments, as llvm-symbolizer and c++filt allow. "--" ends flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, flagError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// lookup finds the command named by the first one or two words of args.
func lookup(args []string) (*command, []string) {
	if len(args) >= 2 {
		for _, c := range commands {
			if c.name == args[0]+" "+args[1] {
				return c, args[2:]
			}
		}
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c, args[1:]
		}
	}
	return nil, nil
}

func sortedCommands() []*command {
	cs := append([]*command(nil), commands...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	return cs
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "backtrail captures, symbolicates and collects stack traces.\n\nUsage:\n\n\tbacktrail <command> [arguments]\n\nCommands:\n\n")
	for _, c := range sortedCommands() {
		fmt.Fprintf(w, "\t%-18s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, "\nRun 'backtrail help <command>' for details.\n")
}

func printCommandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: backtrail %s %s\n\n%s\n", c.name, c.args, strings.TrimSpace(c.long))
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	if c.flags == nil {
		return
	}
	c.flags(fs)
	fmt.Fprintf(w, "\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			name = "=" + name
		}
		fmt.Fprintf(w, "  --%s%s\n    \t%s", f.Name, name, usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// hugePagesHelp ends the help of the commands that call hugeHeap.
const hugePagesHelp = `The heap then goes in 2 MB pages where the kernel gives them on request
(transparent_hugepage "madvise"): a page fault of fresh memory serves 2 MB
rather than 4 KB. GODEBUG=disablethp=1 turns this off.`

// bigFile reports whether r is a regular file of more than n bytes.
func bigFile(r io.Reader, n int64) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular() && fi.Size() > n
}

// setGCPercent sets the collector's GOGC to percent unless the user chose
// one in the environment. Commands set it for their own memory profile:
// the reason is at each call.
func setGCPercent(percent int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}

// collectFrom defers garbage collection until the heap first reaches
// limit bytes, then collects as before, unless the user set GOGC or
// GOMEMLIMIT. A command that reads tables, answers and exits otherwise
// spends much of its time collecting a heap that is all live: symbolizing
// one address from a 1 GB DWARF file took 0.26–0.29 s with the default
// collector, 0.18–0.19 s with collectFrom(128 MB) (peak RSS 217–230 MB
// against 243–250 MB; llvm-symbolizer 0.19–0.29 s, 196 MB). Long runs
// pass limit and then collect as the default would.
func collectFrom(limit int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	percent := debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	// The first collection, as the heap nears the limit, finds this
	// object unreachable and queues its finalizer.
	sentinel := new(struct {
		_ [16]byte
		_ *byte
	})
	runtime.SetFinalizer(sentinel, func(any) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}
