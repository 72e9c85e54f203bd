// Package testenv tells tests which external tools they can run and where the
// repository's shared test data lives.
//
// Tests that need a tool (a compiler, llvm-symbolizer-14, objcopy) ask Tool for
// it. When the tool is missing the test is skipped on a developer machine, but
// fails in CI (environment variable CI=true), naming the Debian package to
// install: in CI a missing tool is a broken image, never a reason to test less.
// The model is cmd/internal/testenv's MustHaveExec and friends in the Go tree.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// InCI reports whether the tests run in continuous integration, where a
// missing tool must fail the test. CI sets the environment variable CI=true
// (GitHub Actions, GitLab CI and most other services do).
func InCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// extraDirs are searched after PATH: tools that Debian and rustup install
// outside the default PATH.
func extraDirs() []string {
	dirs := []string{"/usr/lib/llvm-14/bin", "/usr/local/go/bin"}
	if d := os.Getenv("CARGO_HOME"); d != "" {
		dirs = append(dirs, filepath.Join(d, "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cargo", "bin"))
	}
	return dirs
}

// LookPath returns the absolute path of the named tool, searching PATH and
// then the places where Debian's llvm-14 packages, the Go tarball and rustup
// install tools.
func LookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	if !strings.ContainsRune(name, filepath.Separator) {
		for _, dir := range extraDirs() {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}

// HasTool reports whether LookPath finds the named tool.
func HasTool(name string) bool {
	_, err := LookPath(name)
	return err == nil
}

// Tool returns the absolute path of the named tool. If the tool is missing it
// fails the test in CI and skips it elsewhere; either way the message names
// the Debian package that provides the tool. Tool must be called from the
// goroutine running the test.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("testenv: %s not found in PATH or %s; install %s",
		name, strings.Join(extraDirs(), ", "), Package(name))
	if InCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Package names what provides the named tool on Debian 12 (bookworm).
func Package(tool string) string {
	switch {
	case tool == "go":
		return "Go (golang-go, or the tarball from https://go.dev/dl/)"
	case tool == "rustc" || tool == "cargo":
		return "Rust (rustup from https://rustup.rs/, or the Debian package rustc)"
	case strings.HasPrefix(tool, "aarch64-linux-gnu-"):
		return "the Debian packages gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu and binutils-aarch64-linux-gnu"
	case tool == "gcc" || tool == "gcc-12" || tool == "cc":
		return "the Debian package gcc-12"
	case tool == "g++" || tool == "g++-12" || tool == "c++":
		return "the Debian package g++-12"
	case strings.HasPrefix(tool, "clang"):
		return "the Debian package clang-14"
	case strings.HasPrefix(tool, "ld.lld") || strings.HasPrefix(tool, "ld64.lld") || strings.HasPrefix(tool, "lld"):
		return "the Debian package lld-14"
	case strings.HasPrefix(tool, "llvm-") || strings.HasPrefix(tool, "dsymutil"):
		return "the Debian package llvm-14"
	case strings.HasPrefix(tool, "eu-"):
		return "the Debian package elfutils"
	}
	switch tool {
	case "objcopy", "strip", "readelf", "nm", "addr2line", "objdump", "ld", "ld.bfd", "as", "c++filt":
		return "the Debian package binutils"
	case "chromium":
		return "the Debian package chromium"
	case "debuginfod-find":
		return "the Debian package debuginfod"
	case "node", "npm":
		return "Node.js 20 or later with npm (https://nodejs.org/)"
	case "initdb", "postgres", "pg_ctl":
		return "the Debian package postgresql"
	}
	return "the Debian package that provides " + tool
}

// RepoRoot returns the repository's root: the nearest directory at or above
// the test's working directory that holds a go.mod file.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := repoRoot()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return dir
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod in %s or any parent directory", wd)
		}
		dir = parent
	}
}

// Testdata returns the absolute path of the path elements rel, joined in
// order, inside the repository's shared top-level testdata directory, which
// holds fixture sources (testdata/src) and copied third-party data
// (testdata/sentry-symbolic, testdata/crashprobe, testdata/apple). The test
// fails if the path does not exist.
func Testdata(t testing.TB, rel ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{RepoRoot(t), "testdata"}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return p
}
