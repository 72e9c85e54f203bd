package dump

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/elf"
	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/unwind"
)

// module is one loaded ELF image of the target and everything the dump
// knows about it. Its fields are set before unwinding starts; sym and the
// address cache are filled lazily and are safe for concurrent use.
type module struct {
	info    Module
	open    string // the path we read the file from
	elf     *elf.File
	cfi     *unwind.Module
	goBin   bool
	hasDbg  bool   // the file itself has DWARF
	tmpPath string // a temporary copy (the vDSO), removed by close

	symOnce   sync.Once
	sym       *symbolize.Module
	symErr    error
	debugFile string // the separate debug file sym came from, "" when none
	mapped    bool   // sym is a symcache mapped from the cache, its strings in the mapping

	mu    sync.Mutex                   // guards addrs
	addrs map[uint64][]symbolize.Frame // by PC<<1 | exact

	symtabOnce sync.Once
	symtab     []elfSym // the debug file's local symbols, for addresses symbolize cannot name
}

type elfSym struct {
	addr, size uint64
	name       string
}

// loadModule opens the file at open, mapped by the process at maps (all
// mappings of that file, by address), and computes its load bias.
func loadModule(open, path string, maps []*Mapping) (*module, error) {
	ef, err := elf.Open(open)
	if err != nil {
		return nil, err
	}
	var obj *debugfile.Object
	df, err := debugfile.Open(open)
	if err == nil {
		obj, _ = df.Object("")
		defer df.Close()
	}
	m, err := newModule(ef, obj, open, path, maps)
	if err != nil {
		ef.Close()
		return nil, err
	}
	return m, nil
}

// newModule builds the module of ef, whose ids obj gives (nil when
// unknown), read from open and mapped at maps.
func newModule(ef *elf.File, obj *debugfile.Object, open, path string, maps []*Mapping) (*module, error) {
	bias, ok := loadBias(ef, maps)
	if !ok {
		return nil, fmt.Errorf("%s: no PT_LOAD segment matches its mapping at offset %#x", path, maps[0].Offset)
	}
	m := &module{open: open, elf: ef, addrs: make(map[uint64][]symbolize.Frame)}
	m.info = Module{Name: filepath.Base(path), Path: path, Bias: bias, ImageVMAddr: ef.ImageBase(),
		Start: maps[0].Start, End: maps[len(maps)-1].End}
	m.info.ImageSize = ef.ImageSize()
	ft := ef.Features()
	m.hasDbg = ft.DWARF
	m.goBin = ef.Section(".go.buildinfo") != nil || ft.GoPclntab
	switch ef.Machine {
	case elf.EM_X86_64:
		m.info.Arch = "x86_64"
	case elf.EM_AARCH64:
		m.info.Arch = "arm64"
	}
	if obj != nil {
		m.info.CodeID = obj.CodeID
		if !obj.DebugID.IsZero() {
			m.info.DebugID = obj.DebugID.String()
		}
	}
	if cm, err := unwind.NewModule(ef); err == nil {
		cm.Path = path
		m.cfi = cm
	}
	return m, nil
}

// loadBias returns the difference between where the file is mapped and
// where it was linked: for the lowest mapping (file offset O at address
// S), the PT_LOAD segment whose file bytes include O gives
// bias = S − (p_vaddr + (O − p_offset)).
func loadBias(ef *elf.File, maps []*Mapping) (uint64, bool) {
	for _, mp := range maps {
		for _, p := range ef.Progs {
			if p.Type != elf.PT_LOAD {
				continue
			}
			// The mapping starts at the page holding p_offset.
			pageOff := p.Off &^ (pageSize - 1)
			if mp.Offset < pageOff || mp.Offset >= p.Off+max(p.Filesz, 1) {
				continue
			}
			vaddr := p.Vaddr - (p.Off - mp.Offset)
			return mp.Start - vaddr, true
		}
	}
	return 0, false
}

var pageSize = uint64(os.Getpagesize())

// symbolizer opens the module's symbolization index on first use.
func (m *module) symbolizer(opts *Options) (*symbolize.Module, error) {
	m.symOnce.Do(func() {
		dirs := opts.DebugDirs
		if dirs == nil {
			dirs = debugfile.DefaultDebugDirs
		}
		if !m.hasDbg {
			// A symcache in the cache is found by the build id alone:
			// debugDirs opens the binary again.
			cached := m.cachedDebugFile(opts)
			sym := m.openSymcache(symcachePath(cached))
			if sym == nil {
				dirs, cached = m.debugDirs(opts, dirs)
				sym = m.buildIndex(cached)
			}
			if sym != nil {
				m.sym, m.debugFile, m.mapped = sym, cached, true
				m.info.Symbols, m.info.DebugFile = true, cached
				return
			}
		}
		m.sym, m.symErr = symbolize.Open(m.open, symbolize.Options{Lazy: true, Style: demangle.Full, DebugDirs: dirs, Arch: m.info.Arch})
		if m.sym != nil {
			m.info.Symbols = true
			m.info.DebugFile = m.sym.DebugPath
			if m.sym.DebugPath == m.open {
				m.info.DebugFile = m.info.Path
			} else {
				m.debugFile = m.sym.DebugPath
			}
		}
	})
	return m.sym, m.symErr
}

// debugDirs returns dirs with the cache directory first when the cache
// holds, or can now be given, the module's separate debug file: fetched
// from debuginfod when it is not found locally, and an uncompressed copy
// when the local one has compressed sections. Distributions compress their
// debug files, and inflating libc's DWARF on every dump would cost more
// than the rest of the dump of a thousand threads; the copy is made once
// per build id. cached is the path of the debug file in the cache, or "".
func (m *module) debugDirs(opts *Options, dirs []string) (_ []string, cached string) {
	f, err := debugfile.Open(m.open)
	if err != nil {
		return dirs, ""
	}
	defer f.Close()
	o, err := f.Object("")
	if err != nil || len(o.BuildID) < 2 {
		return dirs, ""
	}
	cache, err := cacheDir(opts)
	if err != nil {
		return dirs, ""
	}
	withCache := append([]string{cache}, dirs...)
	comp := debugfile.FindCompanion(m.open, o, withCache)
	if comp == "" {
		if len(opts.Debuginfod) > 0 && m.info.CodeID != "" && fetchDebuginfod(opts.Debuginfod, cache, m.info.CodeID) == nil {
			// Servers send debug files as built, often compressed.
			dst := cachePath(cache, m.info.CodeID)
			decompressedCopy(dst, dst)
			return withCache, dst
		}
		return dirs, ""
	}
	dst := cachePath(cache, hex.EncodeToString(o.BuildID))
	if comp == dst || decompressedCopy(comp, dst) == nil {
		return withCache, dst
	}
	return dirs, ""
}

// buildIndex builds the symcache of the module with the debug file dbg
// in the cache, beside dbg, replacing one that is damaged, of an older
// format or another object's, and opens it. It returns nil when dbg is ""
// or bigger than cacheBuildMax, or the symcache cannot be made, and the
// caller indexes dbg lazily. A dump of a thousand threads spent about 30
// ms of CPU, a sixth of its own, opening libc's debug file lazily (its
// symbol table, and the headers of its 4,126 units) and converting the
// units it needed; the symcache opens in 1–3 ms. Building it costs a fifth
// of a second, once per build id (bench/dump.md, eleventh round).
func (m *module) buildIndex(dbg string) *symbolize.Module {
	if st, err := os.Stat(dbg); err != nil || st.Size() > cacheBuildMax {
		return nil
	}
	f, err := debugfile.Open(m.open)
	if err != nil {
		return nil
	}
	defer f.Close()
	df, err := debugfile.Open(dbg)
	if err != nil {
		return nil
	}
	defer df.Close()
	df.FollowSplitDWARF(m.open, "")
	o, err := f.Object(m.info.Arch)
	if err != nil {
		return nil
	}
	d, err := df.Object(m.info.Arch)
	if err != nil {
		return nil
	}
	path := symcachePath(dbg)
	if writeAtomic(path, func(w io.Writer) error { return symbolize.WriteObject(w, o, d, symbolize.BuildOptions{}) }) != nil {
		return nil
	}
	return m.openSymcache(path)
}

// cacheBuildMax is the size of the biggest debug file whose symcache a
// dump builds: the system libraries' (libc's is 10 MB, built in 0.17 s).
// Building one of a big program's, seconds for a gigabyte, would hold up
// the first dump of a stuck process, which the lazy index answers in a
// fraction of that; `backtrail symcache build` can make one, and a dump
// uses a symcache it finds beside the debug file in the cache.
var cacheBuildMax int64 = 64 << 20 // a variable for the test of the limit

// cachePath returns where the cache keeps the debug file of build id id
// (hex).
func cachePath(cache, id string) string {
	return filepath.Join(cache, ".build-id", id[:2], id[2:]+".debug")
}

// symcachePath returns where the cache keeps the symcache of its debug
// file dbg, or "" for none.
func symcachePath(dbg string) string {
	if dbg == "" {
		return ""
	}
	return strings.TrimSuffix(dbg, ".debug") + ".symcache"
}

// cachedDebugFile returns the module's debug file in the cache, by its
// build id, or "" when the cache does not hold one.
func (m *module) cachedDebugFile(opts *Options) string {
	cache, err := cacheDir(opts)
	if err != nil || len(m.info.CodeID) < 2 {
		return ""
	}
	p := cachePath(cache, m.info.CodeID)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// openSymcache opens the symcache at path if it is the module's; "" is
// none.
func (m *module) openSymcache(path string) *symbolize.Module {
	if path == "" {
		return nil
	}
	sym, err := symbolize.Open(path, symbolize.Options{Style: demangle.Full})
	if err != nil {
		return nil
	}
	if sym.Info.CodeID != m.info.CodeID || sym.Info.Arch != m.info.Arch {
		sym.Close()
		return nil
	}
	return sym
}

// decompressedCopy writes to dst the debug file src with its compressed
// sections inflated (see elf.File.WriteDecompressed). It fails when src
// has none, leaving dst absent.
func decompressedCopy(src, dst string) error {
	ef, err := elf.Open(src)
	if err != nil {
		return err
	}
	defer ef.Close()
	if !ef.HasCompressedSections() {
		return errors.New("nothing to decompress")
	}
	return writeAtomic(dst, ef.WriteDecompressed)
}

// writeAtomic writes dst through a temporary file in its directory and a
// rename, so that concurrent dumps see it whole or not at all.
func writeAtomic(dst string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// cacheDir returns the directory that holds debug files by build id.
func cacheDir(opts *Options) (string, error) {
	if opts.CacheDir != "" {
		return opts.CacheDir, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(c, "backtrail", "debug"), nil
}

// frames symbolizes pc (exact or a return address) in m, caching by file
// address.
func (m *module) frames(pc uint64, exact bool, opts *Options) []symbolize.Frame {
	key := pc << 1
	if exact {
		key |= 1
	}
	m.mu.Lock()
	fs, ok := m.addrs[key]
	m.mu.Unlock()
	if ok {
		return fs
	}
	addr := pc
	if !exact {
		addr = symbolize.CallerAddress(pc, m.info.Arch)
	}
	fa := addr - m.info.Bias
	sym, err := m.symbolizer(opts)
	if err == nil {
		fs, _ = sym.Frames(fa, nil)
		if m.mapped {
			// The mapping closes with the dump; the frames outlive it.
			for i := range fs {
				f := &fs[i]
				f.Function, f.RawFunction = strings.Clone(f.Function), strings.Clone(f.RawFunction)
				f.File, f.DeclFile = strings.Clone(f.File), strings.Clone(f.DeclFile)
			}
		}
	}
	if len(fs) == 0 || fs[len(fs)-1].Function == "" {
		// Assembly without DWARF whose symbol is local: the stripped
		// binary's .dynsym lacks it, its debug file's .symtab has it
		// (glibc's __restore_rt).
		if name := m.localSymbol(fa); name != "" {
			fs = []symbolize.Frame{{Function: name, RawFunction: name}}
		}
	}
	m.mu.Lock()
	m.addrs[key] = fs
	m.mu.Unlock()
	return fs
}

// localSymbol names the file address fa from the .symtab of the module's
// debug file, read on first use.
func (m *module) localSymbol(fa uint64) string {
	m.symtabOnce.Do(func() {
		if m.debugFile == "" {
			return
		}
		f, err := elf.Open(m.debugFile)
		if err != nil {
			return
		}
		defer f.Close()
		syms, err := f.Symbols()
		if err != nil {
			return
		}
		for _, s := range syms {
			if s.Type() == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
				m.symtab = append(m.symtab, elfSym{s.Value, s.Size, s.Name})
			}
		}
		slices.SortFunc(m.symtab, func(a, b elfSym) int { return cmp.Compare(a.addr, b.addr) })
	})
	i, _ := slices.BinarySearchFunc(m.symtab, fa, func(s elfSym, a uint64) int {
		if s.addr <= a {
			return -1
		}
		return 1
	})
	// Sized symbols contain fa; a zero-sized one (hand-written assembly
	// such as __restore_rt) names only its own address.
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if s := m.symtab[j]; fa-s.addr < s.size || fa == s.addr {
			return s.name
		}
	}
	return ""
}

func (m *module) close() {
	if m.sym != nil {
		m.sym.Close()
	}
	if m.cfi != nil {
		m.cfi.Close()
	}
	if m.elf != nil {
		m.elf.Close()
	}
	if m.tmpPath != "" {
		os.Remove(m.tmpPath)
	}
}

// fetchDebuginfod downloads the debug file of build id from the first of
// servers that has it into the .build-id tree under cache.
func fetchDebuginfod(servers []string, cache, buildID string) error {
	if len(buildID) < 3 {
		return errors.New("build id too short")
	}
	dst := filepath.Join(cache, ".build-id", buildID[:2], buildID[2:]+".debug")
	var errs []error
	for _, u := range servers {
		if err := download(strings.TrimRight(u, "/")+"/buildid/"+buildID+"/debuginfo", dst); err != nil {
			errs = append(errs, err)
			continue
		}
		return nil
	}
	return errors.Join(errs...)
}

func download(url, dst string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return writeAtomic(dst, func(w io.Writer) error {
		_, err := io.Copy(w, io.LimitReader(resp.Body, 4<<30))
		return err
	})
}
