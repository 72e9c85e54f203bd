package process

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

// Symbols finds the symcache for a module: in memory, else on disk in the
// cache directory, else built from the module's debug file in the blob
// store (and kept on disk). Symcaches are per node: replicas sharing a
// database and blob store each build their own. It is safe for concurrent
// use.
type Symbols struct {
	Store    server.Store
	Blobs    server.Blobs
	CacheDir string // symcaches, one file per debug file and architecture
	// MaxOpen bounds the symcaches kept mapped (default 64).
	MaxOpen int
	// NegativeTTL is how long a module found without a debug file is not
	// looked up again (default one minute); an upload clears it at once.
	NegativeTTL time.Duration
	// Build limits the work of building one symcache.
	Build symbolize.BuildOptions
	// Upstream, when set, is asked for debug files of ELF modules (by
	// build id) that no upload provided.
	Upstream *Upstream

	mu       sync.Mutex // guards the fields below
	open     map[string]*list.Element
	lru      list.List // of *entry, most recent first
	negative map[string]negative
	building map[string]*sync.WaitGroup
}

// negative remembers that a module has no usable symbols, and why.
type negative struct {
	until time.Time
	err   error
}

type entry struct {
	key   string
	table *symbolize.Table
	file  *symcache.File
}

// Table is a module's symbol table plus what address rules need.
type Table struct {
	*symbolize.Table
	ImageVMAddr uint64
}

// ErrNoSymbols means no debug file is known for a module.
var ErrNoSymbols = errors.New("no debug file for module")

func (s *Symbols) init() {
	if s.open == nil {
		s.open = make(map[string]*list.Element)
		s.negative = make(map[string]negative)
		s.building = make(map[string]*sync.WaitGroup)
	}
}

// Lookup returns the table for the module with debugID (or codeID) and
// arch in a project. It returns ErrNoSymbols when no debug file matches.
func (s *Symbols) Lookup(ctx context.Context, projectID int64, debugID, codeID, arch string) (*Table, error) {
	key := fmt.Sprintf("%d/%s/%s/%s", projectID, strings.ToLower(debugID), strings.ToLower(codeID), arch)
	for {
		s.mu.Lock()
		s.init()
		if el, ok := s.open[key]; ok {
			s.lru.MoveToFront(el)
			e := el.Value.(*entry)
			s.mu.Unlock()
			return &Table{e.table, e.file.Info().ImageVMAddr}, nil
		}
		if n, ok := s.negative[key]; ok && time.Now().Before(n.until) {
			s.mu.Unlock()
			return nil, n.err
		}
		if wg, ok := s.building[key]; ok {
			s.mu.Unlock()
			wg.Wait()
			continue
		}
		wg := new(sync.WaitGroup)
		wg.Add(1)
		s.building[key] = wg
		s.mu.Unlock()

		e, err := s.load(ctx, projectID, debugID, codeID, arch)
		s.mu.Lock()
		delete(s.building, key)
		wg.Done()
		switch {
		case err != nil && ctx.Err() == nil:
			// No debug file, or one that cannot be read: either way,
			// do not try again for every frame.
			ttl := s.NegativeTTL
			if ttl == 0 {
				ttl = time.Minute
			}
			s.negative[key] = negative{time.Now().Add(ttl), err}
		case err == nil:
			e.key = key
			s.open[key] = s.lru.PushFront(e)
			s.evict()
		}
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return &Table{e.table, e.file.Info().ImageVMAddr}, nil
	}
}

func (s *Symbols) evict() {
	max := s.MaxOpen
	if max <= 0 {
		max = 64
	}
	for s.lru.Len() > max {
		el := s.lru.Back()
		e := el.Value.(*entry)
		s.lru.Remove(el)
		delete(s.open, e.key)
		// Tables handed out keep pointing into the mapping, so it is not
		// unmapped here; the garbage collector cannot free mappings, but
		// their number is bounded by the files built.
		_ = e
	}
}

// Forget clears what is known about a debug id after an upload: its
// cached absence, and the table read from another of its files, which the
// new one may outrank (a symcache of split DWARF beside the binary).
func (s *Symbols) Forget(debugID, codeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	match := func(k string) bool {
		return strings.Contains(k, "/"+strings.ToLower(debugID)+"/") || codeID != "" && strings.Contains(k, "/"+strings.ToLower(codeID)+"/")
	}
	for k := range s.negative {
		if match(k) {
			delete(s.negative, k)
		}
	}
	for k, el := range s.open {
		if match(k) {
			// Tables handed out keep their mapping, as in evict.
			s.lru.Remove(el)
			delete(s.open, k)
		}
	}
}

func (s *Symbols) load(ctx context.Context, projectID int64, debugID, codeID, arch string) (*entry, error) {
	files, err := s.Store.FindDebugFiles(ctx, projectID, debugID, codeID)
	if err != nil {
		return nil, err
	}
	// Prefer files with debug information, then symbol tables.
	compatible := func(f *server.DebugFile) bool {
		return arch == "" || f.Arch == "" || strings.EqualFold(f.Arch, arch) || archCompatible(f.Arch, arch)
	}
	var picks []*server.DebugFile
	for _, f := range files {
		if compatible(f) {
			picks = append(picks, f)
		}
	}
	slices.SortStableFunc(picks, func(a, b *server.DebugFile) int { return cmp.Compare(rank(b), rank(a)) })
	if len(picks) == 0 && s.Upstream != nil && codeID != "" {
		fetched, err := s.Upstream.Fetch(ctx, s.Store, s.Blobs, projectID, codeID, "debuginfo")
		if err != nil {
			return nil, err
		}
		for _, f := range fetched {
			if compatible(f) {
				picks = []*server.DebugFile{f}
			}
		}
	}
	var unreadable error
	for _, pick := range picks {
		if pick.Format != FormatSymcache {
			return s.build(ctx, pick)
		}
		// An uploaded symcache was checked whole when it came. One of
		// another version fails here, and only its debug file could
		// rebuild it: the next best file answers instead.
		path, err := s.Blobs.Path(ctx, pick.Blob)
		if err != nil {
			return nil, err
		}
		f, err := symcache.Open(path)
		if err == nil {
			return &entry{table: symbolize.NewTable(f, demangle.Full), file: f}, nil
		}
		unreadable = cmp.Or(unreadable, fmt.Errorf("debug file %d (%s): %w", pick.ID, pick.Name, err))
	}
	if unreadable != nil {
		return nil, unreadable
	}
	return nil, ErrNoSymbols
}

// build returns the symcache of debug file pick from the cache directory,
// building it there first if needed.
func (s *Symbols) build(ctx context.Context, pick *server.DebugFile) (*entry, error) {
	cache := filepath.Join(s.CacheDir, fmt.Sprintf("%s-%s-v%d.symcache", pick.Blob, pick.Arch, symcache.Version))
	if f, err := symcache.Open(cache); err == nil {
		return &entry{table: symbolize.NewTable(f, demangle.Full), file: f}, nil
	}
	path, err := s.Blobs.Path(ctx, pick.Blob)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.CacheDir, 0o755); err != nil {
		return nil, err
	}
	// Built straight into the cache directory: a big debug file's symcache
	// is hundreds of megabytes, which a build into memory would hold on
	// the heap (twice, as the buffer grew) before writing it out.
	tmp, err := os.CreateTemp(s.CacheDir, ".build-*")
	if err != nil {
		return nil, err
	}
	berr := buildSymcache(tmp, path, pick.Arch, s.Build)
	werr := tmp.Close()
	if berr == nil && werr == nil {
		werr = os.Rename(tmp.Name(), cache)
	}
	if berr != nil || werr != nil {
		os.Remove(tmp.Name())
		if berr != nil {
			return nil, fmt.Errorf("debug file %d (%s): %w", pick.ID, pick.Name, berr)
		}
		return nil, werr
	}
	f, err := symcache.Open(cache)
	if err != nil {
		return nil, err
	}
	return &entry{table: symbolize.NewTable(f, demangle.Full), file: f}, nil
}

// buildSymcache writes the symcache of a debug file to w. The readers never
// panic on hostile input by design; the recover here makes a bug in them
// cost one module's symbols, not the server.
func buildSymcache(w *os.File, path, arch string, opts symbolize.BuildOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading debug file failed: %v", r)
		}
	}()
	f, err := debugfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	o, err := f.Object(arch)
	if err != nil {
		return err
	}
	return symbolize.WriteObject(w, o, o, opts)
}

// rank orders the debug files of one module by what they can tell.
func rank(f *server.DebugFile) int {
	r := 0
	for _, x := range f.Features {
		switch x {
		case "debug":
			r += 4
			if f.Format == FormatSymcache {
				// Built by the user from everything the build left, such
				// as split DWARF the binary only points to.
				r++
			}
		case "go_pclntab":
			r += 2
		case "symtab":
			r++
		}
	}
	return r
}

// archCompatible reports whether a debug file of arch have serves frames of
// arch want (arm64e code is described by arm64 slices and the like).
func archCompatible(have, want string) bool {
	norm := func(a string) string {
		switch strings.ToLower(a) {
		case "arm64e", "aarch64":
			return "arm64"
		case "amd64", "x86_64h":
			return "x86_64"
		case "i386", "386":
			return "x86"
		}
		return strings.ToLower(a)
	}
	return norm(have) == norm(want)
}
