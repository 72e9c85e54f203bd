// Package spool is a durable, bounded queue of opaque records, one file per
// record, that survives kill -9 at any moment losing at most the record being
// written.
//
// # Durability
//
// Put writes a record to a temporary file in the spool directory, fsyncs it,
// renames it to its final name and fsyncs the directory. A reader therefore
// sees either the whole record or nothing: rename is atomic on POSIX file
// systems, and temporary names are never listed. Temporary files left by a
// killed writer are removed by Open once they are a minute old. A file that is
// nonetheless damaged (a file system that reorders writes after power loss,
// or a hand edit) fails Options.Valid on Read and is removed.
//
// # Bounds
//
// After each Put the spool drops records older than MaxAge, then the oldest
// records until at most MaxCount records and MaxBytes bytes remain. Record
// names sort in creation order, so "oldest" needs no metadata.
//
// A Spool is safe for concurrent use, and several processes may share a
// directory: names carry the process id, and removing a record another
// process already removed is not an error.
package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Errors returned by Put and Read.
var (
	ErrTooLarge = errors.New("spool: record larger than MaxBytes")
	ErrCorrupt  = errors.New("spool: damaged record removed")
)

// Defaults for zero Options fields.
const (
	DefaultMaxCount = 100
	DefaultMaxBytes = 16 << 20
	DefaultMaxAge   = 7 * 24 * time.Hour
)

// Options bound a spool. The zero value of each field means its default.
type Options struct {
	MaxCount int           // records kept; default DefaultMaxCount
	MaxBytes int64         // total bytes kept; default DefaultMaxBytes
	MaxAge   time.Duration // age at which a record is dropped; default DefaultMaxAge

	// Valid reports whether a record read back is whole. Nil accepts any
	// non-empty record. The SDK passes a JSON check.
	Valid func([]byte) bool

	// Now is the clock; nil means time.Now. Record ages come from their names,
	// which Put stamps with Now.
	Now func() time.Time
}

// Entry describes one stored record.
type Entry struct {
	Name string    // file name within the spool, e.g. "r-01740830400123456789-4242-000001.json"
	Size int64     // bytes
	Time time.Time // when it was put, from the name
}

// Spool is a directory of records, or an in-memory imitation of one.
type Spool struct {
	dir  string
	opts Options
	seq  atomic.Uint64

	mu  sync.Mutex        // serialises Trim, and guards mem
	mem map[string][]byte // records of a memory spool; nil for a directory
}

const (
	recPrefix = "r-"
	recSuffix = ".json"
	tmpPrefix = ".tmp-"
	tmpMaxAge = time.Minute // older temporary files belong to dead writers
)

// Open opens or creates the spool directory dir and removes temporary files
// that writers killed mid-record left behind.
func Open(dir string, opts Options) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s := &Spool{dir: dir, opts: opts}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	now := s.now()
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > tmpMaxAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return s, nil
}

// NewMemory returns a spool that keeps records in memory, with the same
// bounds and ordering as a directory spool but no durability. The SDK uses it
// when no spool directory is configured.
func NewMemory(opts Options) *Spool {
	return &Spool{opts: opts, mem: make(map[string][]byte)}
}

// Dir returns the spool directory, or "" for a memory spool.
func (s *Spool) Dir() string { return s.dir }

func (s *Spool) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Spool) maxCount() int {
	if s.opts.MaxCount > 0 {
		return s.opts.MaxCount
	}
	return DefaultMaxCount
}

func (s *Spool) maxBytes() int64 {
	if s.opts.MaxBytes > 0 {
		return s.opts.MaxBytes
	}
	return DefaultMaxBytes
}

func (s *Spool) maxAge() time.Duration {
	if s.opts.MaxAge > 0 {
		return s.opts.MaxAge
	}
	return DefaultMaxAge
}

// Put stores data as a new record and then enforces the bounds, which may
// drop older records. When Put returns nil the record is on stable storage.
func (s *Spool) Put(data []byte) (Entry, error) {
	if int64(len(data)) > s.maxBytes() {
		return Entry{}, fmt.Errorf("%w (%d > %d bytes)", ErrTooLarge, len(data), s.maxBytes())
	}
	if len(data) == 0 {
		return Entry{}, errors.New("spool: empty record")
	}
	t := s.now()
	// Fixed-width fields make lexical order creation order; the pid and a
	// per-process sequence keep names unique across writers.
	name := fmt.Sprintf("%s%020d-%d-%06d%s", recPrefix, t.UnixNano(), os.Getpid(), s.seq.Add(1)%1000000, recSuffix)
	e := Entry{Name: name, Size: int64(len(data)), Time: time.Unix(0, t.UnixNano())}
	if s.mem != nil {
		s.mu.Lock()
		s.mem[name] = slices.Clone(data)
		s.mu.Unlock()
	} else if err := s.write(name, data); err != nil {
		return Entry{}, err
	}
	return e, s.Trim()
}

func (s *Spool) write(name string, data []byte) error {
	f, err := os.CreateTemp(s.dir, tmpPrefix+"*")
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("spool: write %s: %w", name, err)
	}
	return syncDir(s.dir)
}

// syncDir makes a rename durable. Windows cannot fsync a directory, and its
// renames are durable once MoveFileEx returns, so there is nothing to do.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	err = d.Sync()
	d.Close()
	if err != nil {
		return fmt.Errorf("spool: sync %s: %w", dir, err)
	}
	return nil
}

// List returns the stored records, oldest first. Files that are not records
// (temporary files, strays) are not listed.
func (s *Spool) List() ([]Entry, error) {
	if s.mem != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.listMem(), nil
	}
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var out []Entry
	for _, de := range ents {
		t, ok := parseName(de.Name())
		if !ok {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed since ReadDir, by us or another process
		}
		out = append(out, Entry{Name: de.Name(), Size: info.Size(), Time: t})
	}
	sortEntries(out) // ReadDir sorts by name already; this documents the contract
	return out, nil
}

// listMem lists a memory spool; s.mu must be held.
func (s *Spool) listMem() []Entry {
	var out []Entry
	for name, data := range s.mem {
		if t, ok := parseName(name); ok {
			out = append(out, Entry{Name: name, Size: int64(len(data)), Time: t})
		}
	}
	sortEntries(out)
	return out
}

func sortEntries(ents []Entry) {
	slices.SortFunc(ents, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
}

// parseName returns the creation time stamped into a record name.
func parseName(name string) (time.Time, bool) {
	if !strings.HasPrefix(name, recPrefix) || !strings.HasSuffix(name, recSuffix) {
		return time.Time{}, false
	}
	stamp, _, ok := strings.Cut(name[len(recPrefix):], "-")
	if !ok || len(stamp) != 20 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// Read returns the record called name. A record that fails Options.Valid is
// removed and reported as ErrCorrupt; a record that is gone yields an error
// satisfying errors.Is(err, fs.ErrNotExist).
func (s *Spool) Read(name string) ([]byte, error) {
	if _, ok := parseName(name); !ok || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("spool: %q is not a record name", name)
	}
	var data []byte
	if s.mem != nil {
		s.mu.Lock()
		d, ok := s.mem[name]
		s.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("spool: %s: %w", name, os.ErrNotExist)
		}
		data = d
	} else {
		d, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		data = d
	}
	valid := len(data) > 0
	if valid && s.opts.Valid != nil {
		valid = s.opts.Valid(data)
	}
	if !valid {
		s.Remove(name)
		return nil, fmt.Errorf("%w: %s (%d bytes)", ErrCorrupt, name, len(data))
	}
	return data, nil
}

// Remove deletes the record called name. Removing a missing record is not an
// error, because another process sharing the directory may have won.
func (s *Spool) Remove(name string) error {
	if _, ok := parseName(name); !ok || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("spool: %q is not a record name", name)
	}
	if s.mem != nil {
		s.mu.Lock()
		delete(s.mem, name)
		s.mu.Unlock()
		return nil
	}
	if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// Trim enforces the bounds now: records older than MaxAge go first, then the
// oldest records until MaxCount and MaxBytes hold. Put calls it; long-running
// readers may call it to expire records without writing.
func (s *Spool) Trim() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ents []Entry
	if s.mem != nil {
		ents = s.listMem()
	} else {
		var err error
		if ents, err = s.List(); err != nil {
			return err
		}
	}
	var total int64
	for _, e := range ents {
		total += e.Size
	}
	cutoff := s.now().Add(-s.maxAge())
	maxCount, maxBytes := s.maxCount(), s.maxBytes()
	for i, e := range ents {
		if !e.Time.Before(cutoff) && len(ents)-i <= maxCount && total <= maxBytes {
			break
		}
		if err := s.removeLocked(e.Name); err != nil {
			return err
		}
		total -= e.Size
	}
	return nil
}

func (s *Spool) removeLocked(name string) error {
	if s.mem != nil {
		delete(s.mem, name)
		return nil
	}
	if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}
