package main

import (
	"os"
	"testing"

	"github.com/backtrail/backtrail/internal/pgtest"
)

func TestMain(m *testing.M) {
	// Re-executed as the command itself by tests that signal it. main
	// returns when the command succeeds: a dump that ends before the
	// signal comes must not go on to run every test of the package in
	// the child.
	if os.Getenv("BACKTRAIL_TEST_AS_CLI") == "1" {
		main()
		os.Exit(0)
	}
	// backtrail dump keeps uncompressed debug files in the user's cache:
	// the tests' go to a directory of their own.
	cache, err := os.MkdirTemp("", "backtrail-cmd-cache-")
	if err == nil {
		os.Setenv("XDG_CACHE_HOME", cache)
	}
	code := m.Run()
	if err == nil {
		os.RemoveAll(cache)
	}
	pgtest.Stop()
	os.Exit(code)
}
