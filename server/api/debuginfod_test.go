package api_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
)

// buildID returns the GNU build id of an ELF file, read with the standard
// library.
func buildID(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		t.Fatalf("%s has no .note.gnu.build-id", path)
	}
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	// namesz, descsz, type, "GNU\0", then the id.
	if len(data) < 16 {
		t.Fatalf("%s: short build-id note", path)
	}
	namesz := f.ByteOrder.Uint32(data[0:4])
	descsz := f.ByteOrder.Uint32(data[4:8])
	off := 12 + (namesz+3)&^3
	if uint64(off)+uint64(descsz) > uint64(len(data)) {
		t.Fatalf("%s: bad build-id note", path)
	}
	return hex.EncodeToString(data[off : off+descsz])
}

// debuginfodEnv is the environment of a debuginfod client that asks srv,
// with the project key in the URL, and caches into a new directory.
func debuginfodEnv(t *testing.T, srv *servertest.Server, key string) []string {
	return append(os.Environ(),
		"DEBUGINFOD_URLS="+srv.URL+"/debuginfod/"+key,
		"DEBUGINFOD_CACHE_PATH="+t.TempDir(),
		"DEBUGINFOD_TIMEOUT=30",
		"DEBUGINFOD_PROGRESS=0",
		"HOME="+t.TempDir())
}

func run(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// TestDebuginfod serves a gcc-built ELF fixture's separate debug file and
// its stripped executable to real debuginfod clients: debuginfod-find
// fetches both byte for byte, and gdb, given only the stripped executable,
// finds a function's source line through the server.
func TestDebuginfod(t *testing.T) {
	t.Parallel()
	find := testenv.Tool(t, "debuginfod-find")
	gdb := testenv.Tool(t, "gdb")
	b := fixture.Build(t, fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, Split: true, Strip: true})
	id := buildID(t, b.Path)
	if d := buildID(t, b.Debug); d != id {
		t.Fatalf("debug file build id %s, executable %s", d, id)
	}
	srv := servertest.Start(t, servertest.Options{})

	// gdb gets a copy of the executable alone, so that it cannot find
	// the debug file beside it through .gnu_debuglink. Before the upload
	// it has nothing to go on.
	exe := filepath.Join(t.TempDir(), filepath.Base(b.Path))
	data, err := os.ReadFile(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := debuginfodEnv(t, srv, srv.Project.Key)
	gdbArgs := []string{"-nx", "-batch", "-iex", "set debuginfod enabled on", "-ex", "info line opcode_eval", exe}
	out, _ := run(t, env, gdb, gdbArgs...)
	if strings.Contains(out, "calc.c") {
		t.Fatalf("gdb found opcode_eval before the debug file was uploaded:\n%s", out)
	}

	for _, p := range []string{b.Debug, b.Path} {
		fs := srv.UploadDebugFile(t, nil, p)
		if len(fs) != 1 || fs[0].CodeID != id {
			t.Fatalf("upload %s: %+v, want code id %s", p, fs, id)
		}
	}

	for _, tt := range []struct{ kind, file string }{{"debuginfo", b.Debug}, {"executable", b.Path}} {
		t.Run("debuginfod-find/"+tt.kind, func(t *testing.T) {
			out, err := run(t, debuginfodEnv(t, srv, srv.Project.Key), find, tt.kind, id)
			if err != nil {
				t.Fatalf("debuginfod-find %s %s: %v\n%s", tt.kind, id, err, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			got, err := os.ReadFile(lines[len(lines)-1])
			if err != nil {
				t.Fatalf("debuginfod-find printed %q: %v", out, err)
			}
			want, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("debuginfod-find %s fetched %d bytes that differ from the %d uploaded", tt.kind, len(got), len(want))
			}
		})
	}

	t.Run("gdb", func(t *testing.T) {
		out, err := run(t, debuginfodEnv(t, srv, srv.Project.Key), gdb, gdbArgs...)
		if err != nil {
			t.Fatalf("gdb: %v\n%s", err, out)
		}
		// Line 51 of "calc.c" starts at address 0x… <opcode_eval> …
		if !strings.Contains(out, `of "calc.c"`) || !strings.Contains(out, "<opcode_eval") {
			t.Errorf("gdb did not find opcode_eval in calc.c through the server:\n%s", out)
		}
	})

	t.Run("wrong-key", func(t *testing.T) {
		out, err := run(t, debuginfodEnv(t, srv, strings.Repeat("0", 32)), find, "debuginfo", id)
		if err == nil {
			t.Errorf("debuginfod-find with an unknown key succeeded:\n%s", out)
		}
	})
}
