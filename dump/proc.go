package dump

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Perms      string // "r-xp"
	Offset     uint64
	Dev        string
	Inode      uint64
	Path       string // "" for anonymous memory; "[stack]", "[vdso]", …; " (deleted)" removed
	Deleted    bool
}

// Exec reports whether the mapping is executable.
func (m *Mapping) Exec() bool { return len(m.Perms) > 2 && m.Perms[2] == 'x' }

// Readable reports whether the mapping is readable.
func (m *Mapping) Readable() bool { return len(m.Perms) > 0 && m.Perms[0] == 'r' }

// File reports whether the mapping is backed by a file.
func (m *Mapping) File() bool { return m.Inode != 0 && strings.HasPrefix(m.Path, "/") }

// ParseMaps parses the contents of /proc/PID/maps. Malformed lines are
// skipped; the result is sorted by address.
func ParseMaps(r io.Reader) ([]Mapping, error) { return parseMaps(r, 0) }

// parseMaps is ParseMaps with room for n mappings from the start: a
// thousand threads' stacks and guard pages are two thousand lines, and
// the slice grown by doubling made 160 page faults, where the parse took
// 6–7 ms, most of the time between listing the threads and reading the
// first one (bench/dump.md, eleventh round).
func parseMaps(r io.Reader, n int) ([]Mapping, error) {
	out := make([]Mapping, 0, n)
	// A process with a thousand threads has thousands of lines, with a
	// handful of distinct permissions, devices and paths: one string
	// each, and no allocation per line.
	strs := map[string]string{}
	intern := func(b []byte) string {
		if s, ok := strs[string(b)]; ok {
			return s
		}
		s := string(b)
		strs[s] = s
		return s
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m, ok := parseMapsLine(sc.Bytes(), intern); ok {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Mapping) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	return out, sc.Err()
}

func parseMapsLine(line []byte, intern func([]byte) string) (Mapping, bool) {
	var m Mapping
	// start-end perms offset dev inode [path]
	var f [5][]byte
	rest := line
	for i := range f {
		rest = bytes.TrimLeft(rest, " ")
		k := bytes.IndexByte(rest, ' ')
		if k < 0 {
			k = len(rest)
		}
		f[i], rest = rest[:k], rest[k:]
		if len(f[i]) == 0 {
			return m, false
		}
	}
	lo, hi, ok := bytes.Cut(f[0], []byte("-"))
	if !ok {
		return m, false
	}
	var ok1, ok2, ok3, ok4 bool
	m.Start, ok1 = parseUint(lo, 16)
	m.End, ok2 = parseUint(hi, 16)
	m.Offset, ok3 = parseUint(f[2], 16)
	m.Inode, ok4 = parseUint(f[4], 10)
	if !ok1 || !ok2 || !ok3 || !ok4 || m.End <= m.Start {
		return m, false
	}
	m.Perms, m.Dev = intern(f[1]), intern(f[3])
	// The path is the rest of the line after the inode and its padding;
	// it may contain spaces.
	if path := bytes.TrimLeft(rest, " "); len(path) > 0 {
		if p, ok := bytes.CutSuffix(path, []byte(" (deleted)")); ok {
			path, m.Deleted = p, true
		}
		m.Path = intern(path)
	}
	return m, true
}

// parseUint parses a number of /proc in base 10 or 16 without the
// allocation of strconv's string argument.
func parseUint(b []byte, base uint64) (uint64, bool) {
	if len(b) == 0 || base == 16 && len(b) > 16 || base == 10 && len(b) > 19 {
		// Longer numbers may overflow: strconv checks.
		v, err := strconv.ParseUint(string(b), int(base), 64)
		return v, err == nil
	}
	var v uint64
	for _, c := range b {
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		v = v*base + d
	}
	return v, true
}

// findMapping returns the mapping holding addr, or nil.
func findMapping(maps []Mapping, addr uint64) *Mapping {
	i, _ := slices.BinarySearchFunc(maps, addr, func(m Mapping, a uint64) int {
		if m.Start <= a {
			return -1
		}
		return 1
	})
	if i > 0 && addr < maps[i-1].End {
		return &maps[i-1]
	}
	return nil
}

// procStat holds the fields of /proc/PID/stat the dump uses.
type procStat struct {
	Comm  string
	State byte
	PPID  int
	// Threads is the process's number of threads (field 20), 0 if absent.
	Threads int
	CPU     int // the CPU the thread last ran on (field 39), -1 if absent
	// RTPriority is the real-time priority (field 40): 1 to 99 under
	// SCHED_FIFO and SCHED_RR, 0 otherwise or if absent.
	RTPriority int
}

// statThreads, statCPU and statRTPriority are the indexes of the
// num_threads, processor and rt_priority fields among those after the
// command name (the state is 0).
const (
	statThreads    = 20 - 3
	statCPU        = 39 - 3
	statRTPriority = 40 - 3
)

// parseStat parses /proc/PID/stat or /proc/PID/task/TID/stat. The command
// name is in parentheses and may itself contain ") ". Only the fields it
// needs are split off: a dump parses one stat file per thread.
func parseStat(b []byte) (procStat, error) {
	s := procStat{CPU: -1}
	i := bytes.IndexByte(b, '(')
	j := bytes.LastIndexByte(b, ')')
	if i < 0 || j < i || j+4 > len(b) {
		return s, fmt.Errorf("malformed stat %q", string(b)) // a copy: b stays on the caller's stack
	}
	s.Comm = string(b[i+1 : j])
	// ") S 123 …": the state letter, the parent's pid, … the CPU.
	rest := b[j+1:]
	n := 0
	for ; n <= statRTPriority; n++ {
		rest = bytes.TrimLeft(rest, " ")
		k := bytes.IndexAny(rest, " \n")
		if k < 0 {
			k = len(rest)
		}
		f := rest[:k]
		rest = rest[k:]
		if len(f) == 0 {
			break
		}
		switch n {
		case 0:
			s.State = f[0]
		case 1:
			s.PPID, _ = strconv.Atoi(string(f))
		case statThreads:
			s.Threads, _ = strconv.Atoi(string(f))
		case statCPU:
			if cpu, err := strconv.Atoi(string(f)); err == nil {
				s.CPU = cpu
			}
		case statRTPriority:
			s.RTPriority, _ = strconv.Atoi(string(f))
		}
	}
	if n < 2 {
		return s, fmt.Errorf("malformed stat %q", string(b))
	}
	return s, nil
}

// statusField returns a field of /proc/PID/status, e.g. "Uid" or
// "TracerPid".
func statusField(pid int, name string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// filePath returns a path through which the file of mapping m of pid can
// be opened: the path inside the process's root (/proc/PID/root, which
// sees through containers' mount namespaces), else the mapping's
// /proc/PID/map_files entry (which works for deleted files too).
func filePath(pid int, m *Mapping) string {
	if !m.Deleted {
		p := filepath.Join(fmt.Sprintf("/proc/%d/root", pid), m.Path)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	p := fmt.Sprintf("/proc/%d/map_files/%x-%x", pid, m.Start, m.End)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// sortTIDs orders thread ids as the output lists them: the main thread
// (whose id is the process id) first, then the others by id.
func sortTIDs(tids []int, pid int) {
	slices.SortFunc(tids, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case a == pid:
			return -1
		case b == pid:
			return 1
		case a < b:
			return -1
		}
		return 1
	})
}
