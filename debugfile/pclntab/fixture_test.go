package pclntab_test

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/debugfile/pclntab"
)

// The fixture binaries are built from testdata/inl/main.go with the local Go
// toolchain, once per test binary and target, into fixtureDir.
var fixtureDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pclntab-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// target is one way of building the fixture.
type target struct {
	name   string
	goos   string
	goarch string
	flags  []string
}

// Go 1.26 writes only the Go 1.20 layout; the targets vary the container,
// byte order, pointer size, quantum and relocation.
var targets = []target{
	{"linux-amd64", "linux", "amd64", nil},
	{"linux-amd64-stripped", "linux", "amd64", []string{"-ldflags=-s -w"}},
	{"linux-amd64-trimpath", "linux", "amd64", []string{"-trimpath", "-ldflags=-s -w"}},
	{"linux-amd64-pie", "linux", "amd64", []string{"-buildmode=pie", "-ldflags=-s -w"}},
	{"linux-arm64", "linux", "arm64", []string{"-ldflags=-s -w"}},
	{"linux-386", "linux", "386", []string{"-ldflags=-s -w"}},
	{"linux-s390x", "linux", "s390x", []string{"-ldflags=-s -w"}},
	{"darwin-arm64", "darwin", "arm64", []string{"-ldflags=-s -w"}},
}

func targetNamed(t testing.TB, name string) target {
	for _, tg := range targets {
		if tg.name == name {
			return tg
		}
	}
	t.Fatalf("no target %q", name)
	return target{}
}

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// goTool returns the go command of the toolchain running the tests.
func goTool(t testing.TB) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command: %v", err)
	}
	return p
}

// buildFixture builds testdata/inl for tg and returns the binary's path.
// Builds are serialized: the machine is small.
func buildFixture(t testing.TB, tg target) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[tg.name]; ok {
		return p
	}
	out := filepath.Join(fixtureDir, "inl-"+tg.name)
	args := append([]string{"build", "-o", out}, tg.flags...)
	args = append(args, ".")
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = filepath.Join("testdata", "inl")
	cmd.Env = append(os.Environ(), "GOOS="+tg.goos, "GOARCH="+tg.goarch, "CGO_ENABLED=0", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s (GOOS=%s GOARCH=%s): %v\n%s", strings.Join(args, " "), tg.goos, tg.goarch, err, msg)
	}
	built[tg.name] = out
	return out
}

// image is what a container reader hands package pclntab.
type image struct {
	pcln     []byte
	addr     uint64 // of pcln
	text     uint64 // of the text section
	mem      []pclntab.Region
	order    binary.ByteOrder
	ptrSize  int
	quantum  int
	hasSyms  bool
	runtimeT uint64 // the runtime.text symbol, when there is a symbol table
}

func loadImage(t testing.TB, path string) *image {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return loadELF(t, data)
	}
	return loadMachO(t, data)
}

func loadELF(t testing.TB, data []byte) *image {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	im := &image{order: f.ByteOrder, ptrSize: 8}
	if f.Class == elf.ELFCLASS32 {
		im.ptrSize = 4
	}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS {
			continue
		}
		b, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		im.mem = append(im.mem, pclntab.Region{Addr: s.Addr, Data: b})
		switch s.Name {
		case ".gopclntab":
			im.pcln, im.addr = b, s.Addr
		case ".text":
			im.text = s.Addr
		}
	}
	if syms, err := f.Symbols(); err == nil {
		im.hasSyms = true
		for _, s := range syms {
			if s.Name == "runtime.text" {
				im.runtimeT = s.Value
			}
		}
	}
	im.quantum = quantumOf(f.Machine.String())
	if im.pcln == nil {
		t.Fatal("no .gopclntab")
	}
	return im
}

func quantumOf(machine string) int {
	switch machine {
	case "EM_X86_64", "EM_386", "CpuAmd64", "Cpu386":
		return 1
	case "EM_S390":
		return 2
	}
	return 4
}

func loadMachO(t testing.TB, data []byte) *image {
	f, err := macho.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	im := &image{order: f.ByteOrder, ptrSize: 8, quantum: quantumOf(f.Cpu.String())}
	for _, s := range f.Sections {
		if s.Flags&0xff == 1 { // S_ZEROFILL
			continue
		}
		b, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		im.mem = append(im.mem, pclntab.Region{Addr: s.Addr, Data: b})
		switch s.Seg + "," + s.Name {
		case "__TEXT,__gopclntab":
			im.pcln, im.addr = b, s.Addr
		case "__TEXT,__text":
			im.text = s.Addr
		}
	}
	if im.pcln == nil {
		t.Fatal("no __gopclntab")
	}
	return im
}

var (
	tableMu sync.Mutex
	tables  = map[string]*pclntab.Table{}
	images  = map[string]*image{}
)

// fixtureTable builds (once) and parses the fixture for the named target.
func fixtureTable(t testing.TB, name string) (*pclntab.Table, *image) {
	t.Helper()
	path := buildFixture(t, targetNamed(t, name))
	tableMu.Lock()
	defer tableMu.Unlock()
	if tab, ok := tables[name]; ok {
		return tab, images[name]
	}
	im := loadImage(t, path)
	tab, err := pclntab.Parse(im.pcln, pclntab.Options{Addr: im.addr, Memory: im.mem})
	if err != nil {
		t.Fatalf("%s: Parse: %v", name, err)
	}
	tables[name], images[name] = tab, im
	return tab, im
}

// funcNamed returns the index of the function named name (as printed).
func funcNamed(t testing.TB, tab *pclntab.Table, name string) int {
	t.Helper()
	for i, fn := range tab.Funcs() {
		if fn.Name == name {
			return i
		}
	}
	t.Fatalf("no function %s", name)
	return -1
}
