package api_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/server"
)

// sentryCLIVersion is the sentry-cli release the test installs from npm.
const sentryCLIVersion = "3.8.0"

// installSentryCLI installs sentry-cli's binary from npm: the platform
// package that @sentry/cli lists as an optional dependency holds the
// binary in its tarball, so nothing is downloaded at install time.
func installSentryCLI(t *testing.T) string {
	t.Helper()
	pkg := map[string]string{
		"linux/amd64": "@sentry/cli-linux-x64", "linux/arm64": "@sentry/cli-linux-arm64",
		"darwin/amd64": "@sentry/cli-darwin", "darwin/arm64": "@sentry/cli-darwin",
	}[runtime.GOOS+"/"+runtime.GOARCH]
	if pkg == "" {
		t.Skipf("no sentry-cli package for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	dir := npmInstall(t, pkg+"@"+sentryCLIVersion)
	return filepath.Join(dir, "node_modules", pkg, "bin", "sentry-cli")
}

// sentryCLI runs sentry-cli against srv with the admin token, isolated from
// the user's configuration.
func sentryCLI(t *testing.T, cli string, srv *servertest.Server, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, args...)
	home := t.TempDir()
	cmd.Dir = home
	cmd.Env = append(os.Environ(),
		"HOME="+home, "SENTRY_URL="+srv.URL, "SENTRY_AUTH_TOKEN="+srv.AdminToken,
		"SENTRY_DISABLE_UPDATE_CHECK=true", "SENTRY_LOAD_DOTENV=0", "SENTRY_LOG_LEVEL=info")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSentryCLIUpload uploads a real dSYM with `sentry-cli debug-files
// upload` (chunk-upload options, assemble, chunk upload, assemble again),
// checks that the server lists it, that uploading it again adds nothing,
// and that a CrashProbe event posted afterwards is symbolicated with it.
func TestSentryCLIUpload(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "llvm-symbolizer-14")
	cli := installSentryCLI(t)
	srv := servertest.Start(t, servertest.Options{})
	dsym := testenv.Testdata(t, "crashprobe", "arm64-debug", "dSYMs", "arm64-CrashLibiOS.framework.dSYM")
	const debugID = "5db9dd67-7626-3675-8c6a-606e8c7518f7"

	for i := range 2 {
		out, err := sentryCLI(t, cli, srv, "debug-files", "upload", "--org", "x", "--project", "default", dsym)
		if err != nil {
			t.Fatalf("sentry-cli debug-files upload (run %d): %v\n%s", i+1, err, out)
		}
		t.Logf("sentry-cli (run %d):\n%s", i+1, out)
		var files []*server.DebugFile
		srv.Get(t, "/api/v1/debug-files?project=default", &files)
		if len(files) != 1 {
			t.Fatalf("run %d: %d debug files, want 1: %+v", i+1, len(files), files)
		}
		f := files[0]
		if f.DebugID != debugID || f.Arch != "arm64" || f.Format != "macho" || f.Name != "CrashLibiOS" || !strings.Contains(strings.Join(f.Features, ","), "debug") {
			t.Errorf("run %d: debug file %+v", i+1, f)
		}
	}
	// A wrong token is refused.
	bad := *srv
	bad.AdminToken = "not-the-token"
	if out, err := sentryCLI(t, cli, &bad, "debug-files", "upload", "--org", "x", "--project", "default", dsym); err == nil {
		t.Errorf("sentry-cli with a wrong token succeeded:\n%s", out)
	}

	// A crash through CrashLibiOS: its frames are symbolicated, the
	// app's (whose dSYM is missing) are not.
	raw, data := readSentryEvent(t, filepath.Join(testenv.Testdata(t, "crashprobe", "arm64-debug"), "Dereference a NULL pointer.json"))
	if resp := srv.StoreEvent(t, nil, data); resp.Status != 200 {
		t.Fatalf("store: %d %s", resp.Status, resp.Body)
	}
	srv.Wait(t)
	ev := srv.Event(t, raw.EventID)
	dwarf := crashProbeDWARF(t, "CrashLibiOS")
	frames := crashProbeAppFrames(t, raw, &ev.Report, map[string]uint64{"CrashLibiOS": textVMAddr(t, dwarf), "CrashProbeiOS": 0})
	var lib []appFrame
	var addrs []uint64
	for _, f := range frames {
		switch f.module {
		case "CrashLibiOS":
			lib = append(lib, f)
			addrs = append(addrs, f.fileAddr)
		case "CrashProbeiOS":
			if len(f.got) != 1 || f.got[0].File != "" {
				t.Errorf("CrashProbeiOS frame at 0x%x symbolicated without its dSYM: %s", f.addr, framesString(f.got))
			}
		}
	}
	if len(lib) == 0 {
		t.Fatal("no CrashLibiOS frames in the event")
	}
	want := llvmSymbolize(t, dwarf, addrs)
	for i, f := range lib {
		if !sameFrames(f.got, want[i]) {
			t.Errorf("CrashLibiOS 0x%x:\n\tserver: %s\n\tllvm:   %v", f.fileAddr, framesString(f.got), want[i])
		}
	}
	var missing []*server.MissingSymbols
	srv.Get(t, "/api/v1/missing-symbols?project=default", &missing)
	for _, m := range missing {
		if m.DebugID == debugID {
			t.Errorf("CrashLibiOS listed as missing after its upload: %+v", m)
		}
	}
}
