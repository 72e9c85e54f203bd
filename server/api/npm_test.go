package api_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/testenv"
)

// npmInstall installs packages ("name@version") from the npm registry into a
// new temporary directory and returns it. An install that fails (no network
// on a developer machine, say) skips the test, and fails it in CI.
func npmInstall(t *testing.T, pkgs ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("installs %v from npm", pkgs)
	}
	npm := testenv.Tool(t, "npm")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error"}, pkgs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := "npm install " + strings.Join(pkgs, " ") + ": " + err.Error() + "\n" + string(out)
		if testenv.InCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}
