package dump

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Options configure Dump. The zero value means defaults.
type Options struct {
	// Freeze stops every thread before reading any, for a consistent
	// snapshot; by default each thread is paused only while it is read.
	Freeze bool
	// Stop stops every thread to read it, one at a time. By default a
	// thread blocked in the kernel is read without stopping it, when its
	// stack can be unwound from what /proc shows of it (see Thread.Peeked;
	// x86-64 only).
	Stop bool
	// MaxFrames caps the physical frames per thread (default 256).
	MaxFrames int
	// StackWindow is how many bytes of stack above the stack pointer are
	// copied per thread (default 256 KiB).
	StackWindow int
	// DebugDirs are searched for separate debug files (nil:
	// /usr/lib/debug).
	DebugDirs []string
	// Debuginfod lists debuginfod server URLs to fetch missing debug
	// information from, by build id.
	Debuginfod []string
	// CacheDir holds debug files by build id, in a .build-id tree: those
	// downloaded from debuginfod, and uncompressed copies of compressed
	// local ones, made on first use (default
	// $XDG_CACHE_HOME/backtrail/debug). Beside each (xx/yyyy.debug) it
	// keeps its symcache (xx/yyyy.symcache), built on first use for files
	// up to 64 MB, which later dumps open instead of indexing the debug
	// file. A cache that cannot be written is skipped.
	CacheDir string
	// NoSymbols skips symbolization: frames carry addresses and modules
	// only.
	NoSymbols bool
	// Workers bounds the goroutines that unwind and symbolize, and those
	// that read blocked threads without stopping them (default
	// GOMAXPROCS).
	Workers int
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

// Process is a dump of one process.
type Process struct {
	PID     int
	Name    string // the command name (comm)
	Exe     string // the executable's path as the process sees it
	Arch    string // "x86_64" or "arm64"
	Time    time.Time
	Threads []Thread
	Modules []Module // modules with executable mappings, by address
	// Notes are things the reader should know: threads that vanished, a Go
	// target, modules without symbols.
	Notes []string
	// MaxPause is the longest time one thread was stopped (default mode),
	// or how long the process was frozen (Freeze).
	MaxPause time.Duration
	// Elapsed is the wall time of the whole dump.
	Elapsed time.Duration
	// GoProgram says the executable is a Go program.
	GoProgram bool
}

// Thread is one thread's stack.
type Thread struct {
	TID       int
	Name      string
	State     string // the /proc state letter before the dump (R, S, D, T, …)
	Registers map[string]uint64
	Frames    []Frame
	Truncated bool   // MaxFrames was reached
	Stop      string // why unwinding stopped early, if it did
	// Pause is how long the dump kept the thread from running: from
	// PTRACE_INTERRUPT until its detach returned (with Freeze, until the
	// last thread was released). Held is the part after the thread had
	// stopped: the dump's own work; the rest is the time the kernel took
	// to schedule the thread into its stop.
	Pause, Held time.Duration
	// Peeked says the thread was read while it was blocked in the kernel,
	// without stopping it: Pause and Held are zero, and Registers holds
	// only the stack pointer, the program counter and the arguments of the
	// system call it is in.
	Peeked bool
}

// Frame is one frame: a physical frame, or an inlined call within one
// (listed before the frame it was inlined into, with the same PC).
type Frame struct {
	Index    int    // the physical frame number, #N in the text output
	PC       uint64 // the instruction (Exact) or the return address
	Module   string // the module's name, "" when no module holds PC
	Function string
	File     string
	Line     int
	Method   string // how the frame was found: context, cfi, signal, fp
	// The flags come last, together: between the words they padded a
	// frame to 104 bytes, and a dump of 1000 threads × 100 frames
	// allocates a hundred thousand frames in fresh pages.
	Exact   bool // PC is the instruction itself: frame 0 or a signal-interrupted frame
	Inlined bool // inlined into the next frame
}

// Module is a loaded image.
type Module struct {
	Name        string
	Path        string // as the process sees it
	Start, End  uint64 // extent of its mappings
	Bias        uint64 // load bias: address in the process − file address
	ImageVMAddr uint64
	ImageSize   uint64
	DebugID     string
	CodeID      string
	Arch        string
	DebugFile   string // where symbols came from, "" when none
	Symbols     bool   // the module could be symbolized
}

// ErrNotPermitted wraps ptrace permission failures; the message says what
// to do.
var ErrNotPermitted = errors.New("not permitted")

// ErrNoProcess is returned for a PID that does not exist.
var ErrNoProcess = errors.New("no such process")

// ErrZombie is returned for a process that has exited but was not reaped.
var ErrZombie = errors.New("process is a zombie")

// WriteText writes d in the style of eu-stack: a header per thread, then
// one line per frame, inlined frames marked.
//
//	PID 1234 - process server
//	TID 1234 (server):
//	#0  0x00007f3b2a8e8503 __GI___clock_nanosleep (clock_nanosleep.c:48) [libc.so.6]
//	#1  0x000055d1c0a011a9 leaf (parked.c:40) [parked] (inlined)
func (d *Process) WriteText(w io.Writer) error {
	// Appends rather than fmt: a dump of a thousand deep stacks has a
	// hundred thousand lines.
	b := make([]byte, 0, 64<<10)
	flush := func() error {
		_, err := w.Write(b)
		b = b[:0]
		return err
	}
	b = fmt.Appendf(b, "PID %d - process %s\n", d.PID, d.Name)
	for _, n := range d.Notes {
		b = append(append(append(b, "# "...), n...), '\n')
	}
	for i := range d.Threads {
		t := &d.Threads[i]
		b = append(b, "TID "...)
		b = strconv.AppendInt(b, int64(t.TID), 10)
		b = append(append(append(b, " ("...), t.Name...), "):\n"...)
		for _, f := range t.Frames {
			b = append(b, '#')
			n := len(b)
			b = strconv.AppendInt(b, int64(f.Index), 10)
			for len(b)-n < 2 {
				b = append(b, ' ')
			}
			var hex [16]byte
			for k, v := 15, f.PC; k >= 0; k, v = k-1, v>>4 {
				hex[k] = "0123456789abcdef"[v&0xf]
			}
			b = append(append(b, " 0x"...), hex[:]...)
			if f.Function != "" {
				b = append(append(b, ' '), f.Function...)
			} else {
				b = append(b, " ??"...)
			}
			if f.File != "" {
				b = append(append(append(b, " ("...), f.File...), ':')
				b = append(strconv.AppendInt(b, int64(f.Line), 10), ')')
			}
			if f.Module != "" {
				b = append(append(append(b, " ["...), f.Module...), ']')
			}
			if f.Inlined {
				b = append(b, " (inlined)"...)
			}
			b = append(b, '\n')
		}
		if t.Truncated {
			b = append(b, "... truncated\n"...)
		} else if t.Stop != "" {
			b = append(append(append(b, "# unwinding stopped: "...), t.Stop...), '\n')
		}
		if len(b) > 60<<10 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// goNote is what a Go target's user needs to know.
const goNote = "this is a Go program: its OS threads show the Go scheduler (runtime.futex, runtime.mcall, …), not goroutines; " +
	"for goroutines send SIGQUIT (with GOTRACEBACK=all), read /debug/pprof/goroutine?debug=2, " +
	"or use the backtrail SDK's watchdog snapshot"
